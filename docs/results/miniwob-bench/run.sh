#!/usr/bin/env bash
# Issue 18's MiniWoB++ bench: one small policy trained from scratch (no demonstrations, no
# expert) for 30 minutes on the default set of 22 tasks, with both exploration mechanisms
# (TYPE rank prior, screen novelty), the task curriculum and success replay on, then 20 greedy
# test episodes per task. Run alone on the machine; not resumable (the bench is not). From the
# repository root:
#   bash docs/results/miniwob-bench/run.sh
set -euo pipefail
out=docs/results/miniwob-bench
.venv/bin/distrl bench miniwob --methods both --json --run-root /tmp/miniwob-bench-runs \
  curriculum.enabled=true success_replay.share=0.1 > "$out/bench-miniwob.json.tmp"
mv "$out/bench-miniwob.json.tmp" "$out/bench-miniwob.json"
