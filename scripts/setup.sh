#!/usr/bin/env bash
# Set up distrl in ./.venv: PyTorch (CUDA build with an NVIDIA GPU, else the small CPU build),
# then the package (editable) with every extra ([all]: Ray, Android, MiniWoB++, VLM, judge, W&B)
# and its test tools. A lighter install: pip install -e . (PhoneSim, small policy, serial runtime).
# Usage: bash scripts/setup.sh            (python3 >= 3.10 on PATH, or set PYTHON=...)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
pip_install() { .venv/bin/python -m pip install --quiet "$@"; }

if ! .venv/bin/python -c "import torch" >/dev/null 2>&1; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    pip_install "torch>=2.1,<3"
  elif .venv/bin/python -c "import urllib.request as u; u.urlopen('https://download.pytorch.org/whl/cpu/', timeout=5)" >/dev/null 2>&1; then
    # Without a GPU the default (CUDA) wheel is several GB of dead weight: take the CPU build.
    pip_install torch --index-url https://download.pytorch.org/whl/cpu
  else
    # PyTorch's CPU index is out of reach (a mirror-only network): the pinned CPU release from
    # the configured package sources.
    pip_install "torch==2.13.0"
  fi
fi
pip_install -e ".[all,test]"  # every extra: the README's commands and CI use them all
# jemalloc: the distrl command preloads it where installed (src/distrl/runtime/allocator.py;
# measured 1.8x the learner's updates of glibc). Installed here only where that needs no password.
if ! .venv/bin/python -c "import sys; from distrl.runtime.allocator import find_jemalloc as f; sys.exit(f() is None)"; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libjemalloc2) \
      >/dev/null 2>&1 || echo "note: could not install libjemalloc2; distrl uses glibc's malloc"
  else
    echo "note: training runs faster with jemalloc (Debian/Ubuntu: sudo apt-get install libjemalloc2)"
  fi
fi
.venv/bin/distrl --help >/dev/null
echo "distrl is set up in .venv: try  .venv/bin/distrl play --suite general --episodes 50"
