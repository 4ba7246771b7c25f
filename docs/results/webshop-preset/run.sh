#!/usr/bin/env bash
# The quick preset on the webshop suite, 30 minutes a run (issue 18 names that budget), three
# seeds, each run alone. Resumable. From the repository root:
#   bash docs/results/webshop-preset/run.sh
exec bash docs/results/preset_seeds.sh docs/results/webshop-preset webshop quick --suite webshop --minutes 30
