"""``distrl config show``: the configuration a command would run with, fully resolved.

A preset, then ``key=value`` overrides, then every default: what ``config.yaml`` of a run made
from the same arguments would hold, printed before anything runs (so a preset or an override can
be checked without starting a run).
"""

from __future__ import annotations

import argparse
import sys

from distrl.cli.main import emit_json
from distrl.config.loader import config_to_yaml, load_config


def run(args: argparse.Namespace, overrides: list[str]) -> int:
    cfg = load_config(args.preset, overrides)
    if args.json:
        emit_json(cfg.model_dump(mode="json"))
    else:
        sys.stdout.write(config_to_yaml(cfg))
        sys.stdout.flush()
    return 0
