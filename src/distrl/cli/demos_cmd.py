"""``distrl collect-demos``: noisy-oracle demonstrations, stored for a warm start.

DigiRL and DistRL start RL from a weak agent; here that agent is cloned from these
demonstrations (``distrl train train.demos=RUN_DIR``). The oracle slips with probability
``--noise`` at each step, so some demonstrations fail; cloning uses the successful ones.
"""

from __future__ import annotations

import argparse

from distrl.cli import play_cmd
from distrl.config.loader import load_config
from distrl.runtime.warm_start import demonstration_config


def run(args: argparse.Namespace, overrides: list[str]) -> int:
    cfg = demonstration_config(load_config(args.preset, overrides))
    return play_cmd.show(
        cfg, args.json, command="demos", hint="warm start: distrl train train.demos={run_dir}"
    )
