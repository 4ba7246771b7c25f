"""``distrl bench ...``: benchmarks that print figures (and JSON with ``--json``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table

from distrl.bench.env_bench import bench_env
from distrl.cli.main import emit_json
from distrl.config.loader import load_config
from distrl.config.schema import RunConfig
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
    if args.bench_command == "collect":
        return _collect(args, cfg)
    if args.bench_command == "learner":
        return _learner(args, cfg)
    raise InputError(f"unknown benchmark {args.bench_command!r}")


def _collect(args: argparse.Namespace, cfg: RunConfig) -> int:
    from distrl.bench.collect_bench import bench_collect

    scaling = _device_list(args.scaling) if args.scaling else None
    for name, value in (("--devices", args.devices), ("--minutes", args.bench_minutes)):
        if value <= 0:
            raise InputError(f"{name} must be > 0, got {value}")
    if not 0 < args.time_scale <= 1:
        raise InputError(f"--time-scale must be in (0, 1], got {args.time_scale}")
    modes = ["async", "sync"] if args.bench_mode == "both" else [args.bench_mode]
    plot = Path(args.plot) if args.plot else Path(cfg.run_root) / "bench-collect-scaling.png"
    summary = bench_collect(
        cfg, args.devices, modes, args.bench_minutes, args.time_scale, scaling, plot
    )
    if args.json:
        emit_json(summary)
        return 0
    console = Console()
    table = Table(
        "mode",
        "devices",
        "trajectories/h",
        "utilisation",
        "idle device-h",
        "updates",
        "CPU busy",
        title=f"bench collect (time scale {args.time_scale}, modelled hours)",
    )
    rows = list(summary["modes"].values()) + list(summary.get("scaling", []))  # type: ignore[union-attr, call-overload]
    for row in rows:
        table.add_row(
            row["mode"],
            str(row["devices"]),
            f"{row['trajectories_per_hour']:.0f}",
            f"{row['device_utilisation']:.3f}",
            f"{row['idle_device_hours']:.2f}",
            str(row["learner_updates"]),
            "-" if row["cpu_busy"] is None else f"{row['cpu_busy']:.2f}",
        )
    console.print(table)
    if "async_over_sync" in summary:
        console.print(f"async / sync trajectories per hour: {summary['async_over_sync']:.2f}x")
    if "plot" in summary:
        console.print(f"scaling plot: {summary['plot']}")
    return 0


def _learner(args: argparse.Namespace, cfg: RunConfig) -> int:
    from distrl.bench.learner_bench import bench_learner

    for name, value in (
        ("--episodes", args.bench_episodes),
        ("--seconds", args.seconds),
        ("--updates", args.bench_updates),
    ):
        if value <= 0:
            raise InputError(f"{name} must be > 0, got {value}")
    summary = bench_learner(cfg, args.bench_episodes, args.seconds, args.bench_updates).summary()
    if args.json:
        emit_json(summary)
        return 0
    table = Table("figure", "value", title=f"bench learner ({summary['policy']}, {cfg.train.algo})")
    for key, value in summary.items():
        table.add_row(key, str(value))
    Console().print(table)
    return 0


def _device_list(text: str) -> list[int]:
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError(f"--scaling must be comma-separated device counts, got {text!r}") from None
    if not counts or min(counts) < 1:
        raise InputError(f"--scaling must be comma-separated device counts >= 1, got {text!r}")
    return counts
