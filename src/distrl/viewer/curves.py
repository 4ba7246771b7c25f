"""A run's curves as PNG plots: success against wall-clock minutes, and key TensorBoard scalars.

``curve.json`` is the figure the project is judged by (success on the test split against
minutes), so it always comes first. TensorBoard holds far more scalars than a reader wants on a
summary page; only a few groups that answer "is the learner healthy?" are drawn (losses,
staleness, collection success, gradient norm), each only when its tags exist.

Anything unreadable (a half-written curve.json, a TensorBoard version without the event reader)
becomes a note on the page, never a failed report.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; never open a window (headless machines, tests)

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

Series = tuple[list[float], list[float]]


@dataclass(frozen=True)
class Plot:
    """One plot on the page: its title, image path and a line saying what it shows."""

    title: str
    image: str
    caption: str


#: (title, file stem, caption, which tags belong to it). Tags are TensorBoard scalar names.
_SCALAR_GROUPS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("Learner losses", "losses", "learner/*loss* against learner updates", ("loss",)),
    (
        "Staleness",
        "staleness",
        "learner version minus the acting policy version of sampled windows",
        ("staleness",),
    ),
    ("Collection success", "collect", "success of collected episodes", ("collect/success",)),
    ("Gradient norm", "grad-norm", "before clipping", ("grad_norm",)),
    (
        "Curriculum weights",
        "curriculum-weight",
        "each task family's share of train draws (curriculum.enabled)",
        ("curriculum/weight/",),
    ),
    (
        "Curriculum success",
        "curriculum-success",
        "each task family's success over its recent train episodes",
        ("curriculum/success/",),
    ),
    (
        "Success replay",
        "success-replay",
        "share of drawn windows from the success store, and the families it holds",
        ("replay/success_share", "replay/success_tasks"),
    ),
)


def read_curve(run_dir: Path, notes: list[str]) -> list[dict[str, float]]:
    """The evaluation points of ``curve.json`` that have ``minutes`` and ``success``."""
    path = run_dir / "curve.json"
    if not path.exists():
        return []
    try:
        points = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        notes.append(f"curve.json not read: {exc}")
        return []
    if not isinstance(points, list):
        notes.append("curve.json is not a list of points")
        return []
    return [
        p
        for p in points
        if isinstance(p, dict)
        and isinstance(p.get("minutes"), int | float)
        and isinstance(p.get("success"), int | float)
    ]


def read_scalars(tensorboard_dir: Path, notes: list[str]) -> dict[str, Series]:
    """Every scalar tag of the event files in ``tensorboard_dir``: tag -> (steps, values)."""
    if not tensorboard_dir.is_dir():
        return {}
    try:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    except ImportError as exc:
        notes.append(f"TensorBoard scalars not read (tensorboard not importable: {exc})")
        return {}
    try:
        # size_guidance 0 keeps every point; the default keeps a random 1,000 per tag.
        accumulator = EventAccumulator(str(tensorboard_dir), size_guidance={"scalars": 0})
        accumulator.Reload()
        tags = accumulator.Tags().get("scalars", [])
        scalars = {}
        for tag in tags:
            events = accumulator.Scalars(tag)
            scalars[tag] = ([float(e.step) for e in events], [float(e.value) for e in events])
        return scalars
    except Exception as exc:  # noqa: BLE001  (a corrupt event file must not sink the report)
        notes.append(f"TensorBoard scalars not read from {tensorboard_dir}: {exc}")
        return {}


def _new_axes(title: str) -> tuple[plt.Figure, plt.Axes]:
    figure, axes = plt.subplots(figsize=(5.2, 3.2), dpi=100)
    axes.set_title(title, fontsize=11)
    axes.grid(True, alpha=0.3)
    axes.spines[["top", "right"]].set_visible(False)
    return figure, axes


def _save(figure: plt.Figure, path: Path) -> None:
    figure.tight_layout()
    figure.savefig(path, format="png")
    plt.close(figure)


def plot_curve(points: list[dict[str, float]], path: Path) -> None:
    """Success (greedy, and sampled when recorded) against minutes."""
    figure, axes = _new_axes("Test success vs wall-clock")
    minutes = [float(p["minutes"]) for p in points]
    axes.plot(minutes, [float(p["success"]) for p in points], marker="o", label="greedy")
    if all(isinstance(p.get("sampled_success"), int | float) for p in points):
        sampled = [float(p["sampled_success"]) for p in points]
        axes.plot(minutes, sampled, marker="s", linestyle="--", label="sampled")
        axes.legend(fontsize=8, loc="lower right")
    axes.set_xlabel("minutes")
    axes.set_ylabel("success rate")
    axes.set_ylim(-0.03, 1.03)
    _save(figure, path)


def plot_scalars(title: str, series: dict[str, Series], path: Path) -> None:
    """Each tag of ``series`` as a line against learner updates."""
    figure, axes = _new_axes(title)
    for tag, (steps, values) in sorted(series.items()):
        finite = [(s, v) for s, v in zip(steps, values, strict=True) if math.isfinite(v)]
        if finite:
            axes.plot(*zip(*finite, strict=True), label=tag, linewidth=1.2)
    axes.set_xlabel("learner updates")
    if len(series) > 1:
        axes.legend(fontsize=7, loc="best")
    _save(figure, path)


def make_plots(run_dir: Path, image_dir: Path, notes: list[str]) -> list[Plot]:
    """Draw the run's plots into ``image_dir``; return them (image paths are file names)."""
    plots: list[Plot] = []
    points = read_curve(run_dir, notes)
    if points:
        plot_curve(points, image_dir / "plot-curve.png")
        plots.append(
            Plot("Test success", "plot-curve.png", f"curve.json, {len(points)} evaluation points")
        )
    scalars = read_scalars(run_dir / "tensorboard", notes)
    for title, stem, caption, patterns in _SCALAR_GROUPS:
        group = {
            tag: data
            for tag, data in scalars.items()
            if any(pattern in tag for pattern in patterns) and data[0]
        }
        if group:
            name = f"plot-{stem}.png"
            plot_scalars(title, group, image_dir / name)
            plots.append(Plot(title, name, f"TensorBoard: {caption}"))
    return plots
