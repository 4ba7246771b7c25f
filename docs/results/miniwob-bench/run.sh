#!/usr/bin/env bash
# Issue 18's MiniWoB++ bench: one small policy trained from scratch (no demonstrations, no
# expert) for 30 minutes on the default set of 22 tasks, with both exploration mechanisms
# (TYPE rank prior, screen novelty), the task curriculum and success replay on, then 20 greedy
# test episodes per task. These were the bench's settings until 2026-12-04; since then the bench
# runs with more mechanisms on (miniwob_bench.py, FROM_SCRATCH_SETTINGS), so the command below
# states the 6 steps and curriculum.unsolved_score=0 it ran with. Each seed alone on the
# machine; a seed whose JSON exists is skipped (the bench itself is not resumable). From the
# repository root:
#   bash docs/results/miniwob-bench/run.sh [SEED ...]     (default: seeds 0 1 2)
set -euo pipefail
out=docs/results/miniwob-bench
seeds=("$@")
((${#seeds[@]})) || seeds=(0 1 2)
for s in "${seeds[@]}"; do
  [[ -s $out/bench-miniwob-seed$s.json ]] && continue
  .venv/bin/distrl bench miniwob --methods both --seed "$s" --json \
    --run-root /tmp/miniwob-bench-runs \
    curriculum.enabled=true success_replay.share=0.1 env.miniwob.horizon=6 \
    curriculum.unsolved_score=0 > "$out/bench-miniwob-seed$s.json.tmp"
  mv "$out/bench-miniwob-seed$s.json.tmp" "$out/bench-miniwob-seed$s.json"
done
