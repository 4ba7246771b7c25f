#!/usr/bin/env bash
# Issue 17's measurement: the `full` setting (16 latency-bound devices, 20 minutes a run), four
# methods from the same warm start per seed, three seeds, each run alone on the machine. Resumable:
# run it again and it skips every (method, seed) in results/ and goes on with the rest; then
# `distrl bench report docs/results/bench-train-full --json` merges them. From the repository root:
#   bash docs/results/bench-train-full/run.sh
#
# Every run is made with the code of a10c7fc, checked out beside this one (the first runs were made
# with it on 2026-12-02; later commits changed only the VLM path, and a results folder accepts only
# the setting it was made with, which a new config key changes). BENCH_CODE names that checkout.
set -euo pipefail
code=${BENCH_CODE:-/tmp/distrl-a10c7fc}
if [[ ! -d $code/src/distrl ]]; then
  git worktree add --detach "$code" a10c7fc
fi
export PYTHONPATH=$code/src  # the package comes from there; .venv supplies the dependencies
exec .venv/bin/distrl bench train --setting full \
  --methods aride_async,digirl_sync,aride_sync,fbc_sync --seeds 3 \
  --results docs/results/bench-train-full --json
