"""``distrl view RUN_DIR``: write a run's static HTML report, optionally serve it on loopback."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from distrl.cli.foreground import interrupt_on_signals
from distrl.cli.main import emit_json
from distrl.cli.progress import progress_bar
from distrl.errors import InputError
from distrl.viewer import build_view
from distrl.viewer.report import check_run_dir
from distrl.viewer.serve import serve


def run(args: argparse.Namespace, overrides: list[str]) -> int:
    if overrides:
        raise InputError(f"view takes no config overrides, got {' '.join(overrides)}")
    if args.max_trajectories < 0:
        raise InputError(f"--max-trajectories {args.max_trajectories}: must be >= 0")
    run_dir = check_run_dir(Path(args.run_dir))  # before any progress output
    err = Console(stderr=True)
    with progress_bar(
        TextColumn(f"[bold]view[/] {run_dir.name}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        keep=False,
    ) as progress:
        bar = progress.add_task("view", total=None)

        def advance(done: int, total: int) -> None:
            progress.update(bar, completed=done, total=total)

        result = build_view(run_dir, args.view_out, args.max_trajectories, advance)
    report = result.report
    if args.json:
        emit_json(
            {
                "report": str(result.index),
                "trajectories_shown": report.trajectories_shown,
                "trajectories_total": report.trajectories_total,
            }
        )
    else:
        table = Table("", "", title=f"view: {report.title}", show_header=False)
        table.add_row("report", str(result.index))
        table.add_row("trajectories", f"{report.trajectories_shown} of {report.trajectories_total}")
        table.add_row("plots", str(len(report.plots)))
        Console(file=sys.stdout).print(table)
    if report.trajectories_total == 0:
        raise InputError(
            f"run folder {run_dir} has no stored trajectories (trajectories/ is missing or "
            f"empty); wrote a report with its curves only to {result.index}"
        )
    if args.serve:

        def announce(url: str) -> None:
            err.print(f"serving {url} (loopback only; Ctrl-C to stop)")

        interrupt_on_signals()
        serve(result.index.parent, args.view_port, announce)
    return 0
