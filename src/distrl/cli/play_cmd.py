"""``distrl play`` and ``collect-demos``: scripted agents, a progress bar, a summary table."""

from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from distrl.cli.main import emit_json
from distrl.cli.progress import discard, progress_bar
from distrl.config.loader import load_config
from distrl.config.schema import RunConfig
from distrl.core.trajectory import Trajectory
from distrl.envs.task_sets import suite_label
from distrl.runtime.drops import check_some_completed
from distrl.runtime.play import play, select_tasks


def run(args: argparse.Namespace, overrides: list[str]) -> int:
    return show(load_config(args.preset, overrides), args.json)


def show(cfg: RunConfig, as_json: bool, command: str = "play", hint: str | None = None) -> int:
    """Play ``cfg`` with a progress bar, then print the summary (a table, or JSON).

    ``command`` names the run folder (``play-...``, ``demos-...``); ``hint`` is a line printed
    after the table, with ``{run_dir}`` filled in."""
    tasks = select_tasks(cfg)  # bad task input fails here, before any progress output
    err = Console(stderr=True)
    successes = 0
    with progress_bar(
        TextColumn(f"[bold]{command}[/] {{task.fields[policy]}} on {{task.fields[suite]}}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("success {task.fields[rate]}"),
        TimeElapsedColumn(),
        console=err,
        keep=not as_json,
    ) as progress:
        bar = progress.add_task(
            "play",
            total=cfg.play.episodes,
            policy=cfg.play.policy,
            suite=suite_label(cfg),
            rate="-",
        )

        def advance(trajectory: Trajectory) -> None:
            nonlocal successes
            successes += int(trajectory.success)
            done = progress.tasks[bar].completed + 1
            progress.update(bar, advance=1, rate=f"{successes / done:.2f}")

        result = play(cfg, tasks, on_episode=advance, command=command)
        if result.episodes == 0:
            discard(progress)  # the error line below says what happened
    summary = result.summary()
    if as_json:
        emit_json(summary)
        check_some_completed(result.episodes, result.drops, result.run_dir)
        return 0
    out = Console(file=sys.stdout)
    suite = suite_label(cfg)
    table = Table(
        "template",
        "success",
        title=f"{command}: {cfg.play.policy} on {suite}/{cfg.env.split}",
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
    if result.drops.count:
        out.print(f"[bold red]dropped {result.drops.count}[/]: {escape(result.drops.describe())}")
    check_some_completed(result.episodes, result.drops, result.run_dir)
    if hint:
        out.print(hint.format(run_dir=result.run_dir))
    return 0
