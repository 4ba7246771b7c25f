#!/usr/bin/env bash
# Set up distrl in ./.venv: the package (editable) with its test tools.
# Usage: bash scripts/setup.sh            (python3 >= 3.10 on PATH, or set PYTHON=...)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet -e ".[test]"
.venv/bin/distrl --help >/dev/null
echo "distrl is set up in .venv: try  .venv/bin/distrl play --suite general --episodes 50"
