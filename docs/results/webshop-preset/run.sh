#!/usr/bin/env bash
# The quick preset on the webshop suite, 30 minutes a run (issue 18 names that budget), three
# seeds, each run alone on the machine. Resumable: a seed whose two JSON files exist is skipped. From the repository root:
#   bash docs/results/webshop-preset/run.sh
set -euo pipefail
out=docs/results/webshop-preset
runs=${RUN_ROOT:-/tmp/webshop-preset-runs}
for seed in 0 1 2; do
  if [[ -s $out/train-seed$seed.json && -s $out/eval-train-seed$seed.json ]]; then continue; fi
  rm -rf "$runs/webshop-seed$seed"
  .venv/bin/distrl train --preset quick --suite webshop --minutes 30 --seed "$seed" --json \
    --run-root "$runs" --run-name "webshop-seed$seed" > "$out/train-seed$seed.json.tmp"
  mv "$out/train-seed$seed.json.tmp" "$out/train-seed$seed.json"
  .venv/bin/distrl eval --preset quick --suite webshop --checkpoint "$runs/webshop-seed$seed" \
    --split train --episodes 320 --seed "$seed" --json > "$out/eval-train-seed$seed.json"
done
