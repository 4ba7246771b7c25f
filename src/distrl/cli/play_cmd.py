"""``distrl play``: scripted agents on PhoneSim with a progress bar and a summary table."""

from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from distrl.cli.main import emit_json
from distrl.config.loader import load_config
from distrl.core.trajectory import Trajectory
from distrl.runtime.play import play, select_tasks


def run(args: argparse.Namespace, overrides: list[str]) -> int:
    cfg = load_config(args.preset, overrides)
    tasks = select_tasks(cfg)  # bad task input fails here, before any progress output
    err = Console(stderr=True)
    successes = 0
    with Progress(
        TextColumn("[bold]play[/] {task.fields[policy]} on {task.fields[suite]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("success {task.fields[rate]}"),
        TimeElapsedColumn(),
        console=err,
        transient=args.json,
    ) as progress:
        bar = progress.add_task(
            "play",
            total=cfg.play.episodes,
            policy=cfg.play.policy,
            suite=cfg.env.task_file or cfg.env.suite,
            rate="-",
        )

        def advance(trajectory: Trajectory) -> None:
            nonlocal successes
            successes += int(trajectory.success)
            done = progress.tasks[bar].completed + 1
            progress.update(bar, advance=1, rate=f"{successes / done:.2f}")

        result = play(cfg, tasks, on_episode=advance)
    summary = result.summary()
    if args.json:
        emit_json(summary)
        return 0
    out = Console(file=sys.stdout)
    table = Table(
        "template",
        "success",
        title=f"play: {cfg.play.policy} on {cfg.env.task_file or cfg.env.suite}/{cfg.env.split}",
    )
    for name, rate in summary["per_template"].items():  # type: ignore[union-attr]
        table.add_row(name, f"{rate:.2f}")
    table.add_section()
    table.add_row("[bold]all[/]", f"[bold]{result.success_rate:.3f}[/]")
    out.print(table)
    out.print(
        f"episodes {result.episodes}, mean steps {summary['mean_steps']}, "
        f"trajectories in {result.run_dir / 'trajectories'}"
    )
    return 0
