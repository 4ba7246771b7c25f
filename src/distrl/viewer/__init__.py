"""``distrl view``: a static HTML report of a run folder (curves, trajectories, step images).

The report is a folder, not a server: ``index.html`` plus PNGs in ``img/``, openable from
``file://`` on any machine, attachable to an issue, and safe to open even though every string in
it is model output (all of it is escaped).

Example (``distrl view RUN_DIR`` does the same)::

    from distrl.viewer import build_view

    result = build_view("runs/play-20250101-120000")
    print(result.index, result.trajectories_shown, "of", result.trajectories_total)
    # runs/play-20250101-120000/view/index.html 30 of 30
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from distrl.viewer.html import render_page
from distrl.viewer.report import RunReport, check_run_dir, collect_report

__all__ = ["DEFAULT_MAX_TRAJECTORIES", "ViewResult", "build_view", "render_page"]

DEFAULT_MAX_TRAJECTORIES = 300


@dataclass(frozen=True)
class ViewResult:
    """Where the report went and what it holds."""

    index: Path
    report: RunReport

    @property
    def trajectories_shown(self) -> int:
        return self.report.trajectories_shown

    @property
    def trajectories_total(self) -> int:
        return self.report.trajectories_total


def build_view(
    run_dir: str | Path,
    out_dir: str | Path | None = None,
    max_trajectories: int = DEFAULT_MAX_TRAJECTORIES,
    on_trajectory: Callable[[int, int], None] | None = None,
) -> ViewResult:
    """Write the report of ``run_dir`` to ``out_dir`` (default ``run_dir/view``).

    Raises :class:`~distrl.errors.InputError` for a missing folder or one that is not a run
    folder. A run without trajectories still gets a report (its curves); the caller decides
    whether that is an error.
    """
    run_dir = check_run_dir(Path(run_dir))
    out = Path(out_dir) if out_dir is not None else run_dir / "view"
    out.mkdir(parents=True, exist_ok=True)
    report = collect_report(run_dir, out, max_trajectories, on_trajectory)
    index = out / "index.html"
    temp = index.with_name(".index.html.tmp")
    temp.write_text(render_page(report), encoding="utf-8")
    temp.replace(index)  # a browser left open on the old report never reads half a page
    return ViewResult(index=index, report=report)
