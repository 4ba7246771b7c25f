#!/usr/bin/env bash
# Issue 17's measurement: the `full` setting (16 latency-bound devices, 20 minutes a run), four
# methods from the same warm start per seed, three seeds, each run alone on the machine. Resumable:
# run it again and it skips every (method, seed) in results/ and goes on with the rest; then
# `distrl bench report docs/results/bench-train-full --json` merges them. From the repository root:
#   bash docs/results/bench-train-full/run.sh
#
# Every run is made with the code of 4266179 (the first with jemalloc preloaded by the distrl
# command), checked out beside this one so that later commits cannot reach a run in progress
# (BENCH_CODE names that checkout). The machine needs libjemalloc2 (scripts/setup.sh installs it
# as root); each result file records the allocator its run had. Seeds 0 and 1 start from the
# demonstrations and cloned weights that ../bench-train-full-a10c7fc made for them (copied here:
# the small policy's warm start did not change between the two commits).
set -euo pipefail
code=${BENCH_CODE:-/tmp/distrl-4266179}
if [[ ! -d $code/src/distrl ]]; then
  git worktree add --detach "$code" 4266179
fi
export PYTHONPATH=$code/src  # the package comes from there; .venv supplies the dependencies
export DISTRL_ALLOCATOR=jemalloc  # an error, not a silent glibc run, where the library is missing
exec .venv/bin/distrl bench train --setting full \
  --methods aride_async,digirl_sync,aride_sync,fbc_sync --seeds 3 \
  --results docs/results/bench-train-full --json
