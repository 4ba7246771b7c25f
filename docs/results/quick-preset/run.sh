#!/usr/bin/env bash
# The quick preset's headline figures, three seeds, each run alone on the machine.
# Resumable: a seed whose two JSON files exist is skipped. From the repository root:
#   bash docs/results/quick-preset/run.sh
set -euo pipefail
out=docs/results/quick-preset
runs=${RUN_ROOT:-/tmp/quick-preset-runs}
for seed in 0 1 2; do
  if [[ -s $out/train-seed$seed.json && -s $out/eval-train-seed$seed.json ]]; then continue; fi
  rm -rf "$runs/quick-seed$seed"
  .venv/bin/distrl train --preset quick --seed "$seed" --json \
    --run-root "$runs" --run-name "quick-seed$seed" > "$out/train-seed$seed.json.tmp"
  mv "$out/train-seed$seed.json.tmp" "$out/train-seed$seed.json"
  .venv/bin/distrl eval --preset quick --checkpoint "$runs/quick-seed$seed" --split train \
    --episodes 320 --seed "$seed" --json > "$out/eval-train-seed$seed.json"
done
