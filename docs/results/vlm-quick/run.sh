#!/usr/bin/env bash
# The vlm-quick preset (the tiny VLM: warm start cloned from oracle demonstrations, then online
# A-RIDE, 30 minutes in all), three seeds, each run alone. Issue 19's figure: each run's
# final_success against its initial_success (the first evaluation, after the warm start).
# Resumable. From the repository root:
#   bash docs/results/vlm-quick/run.sh
exec bash docs/results/preset_seeds.sh docs/results/vlm-quick vlm vlm-quick
