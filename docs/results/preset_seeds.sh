#!/usr/bin/env bash
# One preset trained with seeds 0, 1 and 2, each run alone on the machine, and each final policy
# scored on 320 train episodes; the figures behind a results folder. Resumable: a seed whose two
# JSON files exist is skipped. From the repository root:
#   bash docs/results/preset_seeds.sh OUT_FOLDER RUN_PREFIX PRESET [distrl train/eval options ...]
# (the options, such as --suite webshop, go to both train and eval; --minutes M to train only).
# SEEDS="0" runs a subset (a first probe of a setting; the other seeds resume later).
# NEWEST=1 (runs with train.averaged_policy_decay): also score the learner's newest weights on 320
# test episodes (eval-newest-test-seedN.json), beside the averaged policy the run quotes.
set -euo pipefail
out=$1 prefix=$2 preset=$3
shift 3
train_only=() shared=()
while (($#)); do
  if [[ $1 == --minutes ]]; then train_only+=("$1" "$2"); shift 2; else shared+=("$1"); shift; fi
done
runs=${RUN_ROOT:-/tmp/$prefix-preset-runs}
for seed in ${SEEDS:-0 1 2}; do
  newest=$out/eval-newest-test-seed$seed.json
  if [[ -s $out/train-seed$seed.json && -s $out/eval-train-seed$seed.json ]]; then
    if [[ -z ${NEWEST:-} || -s $newest ]]; then continue; fi
  else
    rm -rf "$runs/$prefix-seed$seed"
  fi
  if [[ ! -s $out/eval-train-seed$seed.json ]]; then
    .venv/bin/distrl train --preset "$preset" "${shared[@]}" "${train_only[@]}" --seed "$seed" \
      --json --run-root "$runs" --run-name "$prefix-seed$seed" > "$out/train-seed$seed.json.tmp"
    mv "$out/train-seed$seed.json.tmp" "$out/train-seed$seed.json"
    .venv/bin/distrl eval --preset "$preset" "${shared[@]}" --checkpoint "$runs/$prefix-seed$seed" \
      --split train --episodes 320 --seed "$seed" --json > "$out/eval-train-seed$seed.json"
  fi
  if [[ -n ${NEWEST:-} ]]; then
    .venv/bin/distrl eval --preset "$preset" "${shared[@]}" --checkpoint "$runs/$prefix-seed$seed" \
      --newest --episodes 320 --seed "$seed" --json > "$newest.tmp"
    mv "$newest.tmp" "$newest"
  fi
done
