"""``distrl bench ...``: benchmarks that print figures (and JSON with ``--json``)."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from distrl.bench.env_bench import bench_env
from distrl.cli.main import emit_json
from distrl.config.loader import load_config
from distrl.errors import InputError


def run(args: argparse.Namespace, overrides: list[str]) -> int:
    cfg = load_config(args.preset, overrides)
    if args.bench_command == "env":
        if args.steps < 1:
            raise InputError(f"--steps must be >= 1, got {args.steps}")
        summary = bench_env(args.steps, args.bench_suite, cfg.seed, cfg.env.phonesim).summary()
        if args.json:
            emit_json(summary)
            return 0
        table = Table("figure", "value", title="PhoneSim env benchmark (one core, latency off)")
        for key, value in summary.items():
            table.add_row(key, str(value))
        Console().print(table)
        return 0
    raise InputError(f"unknown benchmark {args.bench_command!r}")
