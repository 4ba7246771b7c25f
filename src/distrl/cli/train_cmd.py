"""``distrl train``: online RL on PhoneSim with a progress bar and a success curve."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from distrl.cli.main import emit_json
from distrl.cli.progress import discard, progress_bar
from distrl.config.loader import load_config
from distrl.config.schema import RunConfig
from distrl.envs.task_sets import suite_label
from distrl.errors import InputError
from distrl.extras import require
from distrl.runtime.drops import DropLog, check_some_completed
from distrl.runtime.run_dir import check_writable
from distrl.runtime.run_log import CHECKPOINT
from distrl.runtime.serial import train
from distrl.runtime.warm_start import load_demonstrations


def _runtime(cfg: RunConfig) -> str:
    if cfg.train.runtime == "serial":
        return "serial"
    return f"ray {cfg.train.mode}, {cfg.ray.workers} workers, {cfg.train.devices} devices"


def run(args: argparse.Namespace, overrides: list[str]) -> int:
    resume = Path(args.resume) if args.resume else None
    if resume is not None:
        if not (resume / CHECKPOINT).exists():
            raise InputError(f"--resume {resume}: no checkpoint at {resume / CHECKPOINT}")
        check_writable(resume)  # before any thread (TensorBoard's writer) finds it read-only
        cfg = load_config(resume / "config.yaml", overrides)
    else:
        cfg = load_config(args.preset, overrides)
    if cfg.log.wandb:
        require("wandb", "wandb", "log.wandb=true")  # before the run folder and warm start
    if cfg.train.runtime == "ray":
        require("ray", "ray", "--runtime ray")
        from distrl.runtime.distributed.session import check_config

        check_config(cfg)  # before the progress bar and the warm start
    demonstrations = None
    if cfg.train.demos and resume is None:
        demonstrations = load_demonstrations(Path(cfg.train.demos))  # before any progress output
    err = Console(stderr=True)
    with progress_bar(
        TextColumn(f"[bold]train[/] {cfg.train.algo} on {suite_label(cfg)} ({_runtime(cfg)})"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f}% of {task.fields[minutes]} min"),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
        console=err,
        keep=not args.json,
    ) as progress:
        bar = progress.add_task("train", total=1.0, minutes=cfg.train.minutes, info="")

        def advance(fraction: float, metrics: dict[str, float]) -> None:
            info = f"loss {metrics['loss']:.3f}" if "loss" in metrics else "filling replay"
            progress.update(bar, completed=min(fraction, 1.0), info=info)

        run_training = train
        if cfg.train.runtime == "ray":
            from distrl.runtime.distributed.driver import train_ray as run_training
        result = run_training(
            cfg, resume=resume, demonstrations=demonstrations, on_progress=advance
        )
        drops = result.drops or DropLog()
        if result.episodes == 0 and drops.count:
            discard(progress)  # the error line below says what happened
        else:
            progress.update(bar, completed=1.0, info="done")
    summary = result.summary()
    if args.json:
        emit_json(summary)
        check_some_completed(result.episodes, drops, result.run_dir)
        return 0
    table = Table(
        "minutes",
        "updates",
        "test success (greedy)",
        "sampled",
        title=f"train: {cfg.train.algo} on {suite_label(cfg)}",
    )
    for point in result.curve:
        table.add_row(
            f"{point['minutes']:.1f}",
            str(int(point["updates"])),
            f"{point['success']:.2f}",
            f"{point['sampled_success']:.2f}",
        )
    out = Console(file=sys.stdout)
    out.print(table)
    out.print(f"episodes {result.episodes}, updates {result.updates}")
    if drops.count:
        out.print(f"[bold red]dropped {drops.count}[/]: {escape(drops.describe())}")
    check_some_completed(result.episodes, drops, result.run_dir)
    out.print(f"run folder {result.run_dir} (tensorboard --logdir {result.run_dir}/tensorboard)")
    return 0
