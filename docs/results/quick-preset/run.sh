#!/usr/bin/env bash
# The quick preset's headline figures (PhoneSim general, 20 minutes), three seeds, each run alone.
# Resumable. From the repository root:
#   bash docs/results/quick-preset/run.sh
exec bash docs/results/preset_seeds.sh docs/results/quick-preset quick quick
