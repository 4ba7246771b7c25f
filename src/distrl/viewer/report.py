"""Collect what a run folder holds into a report model: key figures, plots, trajectories.

The report model is plain data (strings, numbers, relative image paths), so the HTML renderer
never touches the store, numpy or PIL, and every string in it is still raw text: escaping is the
renderer's job, done in one place.

Which trajectories: the newest ``max_trajectories`` (by finish time, then append order). The
store only decodes whole trajectories, so choosing them reads a few light columns of every shard
first (ids, finish times, whether a PNG is stored); then one pass over the store draws the step
images of the chosen ones and keeps only their small views, never their screenshots.

Staleness: a step's staleness is the learner's version when the trajectory was stored minus the
step's ``policy_version``. Trajectories carry the learner version only when the producer put it
in ``metadata["learner_version"]``; without it the report shows ``policy_version`` alone and
says so.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from distrl.core.action import Action, ActionType
from distrl.core.trajectory import LEARNER_VERSION_KEY, Trajectory
from distrl.errors import InputError
from distrl.store import StoreError, TrajectoryStore
from distrl.viewer.curves import Plot, make_plots
from distrl.viewer.overlay import step_image

#: Files whose presence makes a folder a run folder (any one of them).
RUN_MARKERS = ("config.yaml", "summary.json", "curve.json", "trajectories")
#: Where the learner version at storage time is read from, when a producer records it.
IMAGE_FOLDER = "img"
#: The names this module and the plots write into IMAGE_FOLDER (and so may delete there).
_OWN_IMAGE = re.compile(r"t\d{4,}-s\d{2,}\.png|plot-[a-z-]+\.png")
#: Summary keys shown as key figures (in this order, when present and scalar).
_KEY_FIGURES = (
    "success_rate",
    "initial_success",
    "final_success",
    "episodes",
    "dropped_episodes",
    "mean_steps",
    "updates",
    "minutes",
)


@dataclass(frozen=True)
class StepView:
    """One step card: the image (path relative to the report) and the step's figures.

    ``action_type`` is None for the final screen (the observation after the last action)."""

    index: int
    image: str
    screenshot_stored: bool
    action_type: str | None
    action_summary: str
    typed_text: str = ""
    action_text: str = ""
    reward: float | None = None
    done: bool = False
    behaviour_logprob: float = math.nan
    entropy: float = math.nan
    policy_version: int | None = None
    staleness: int | None = None
    step_seconds: float = math.nan


@dataclass(frozen=True)
class TrajectoryView:
    """One trajectory as the page lists it, with its step cards."""

    trajectory_id: str
    task_id: str
    instruction: str
    family: str
    suite: str
    split: str
    success: bool
    worker_id: str
    device_id: str
    started_at: float
    finished_at: float
    total_reward: float
    screenshots_stored: bool
    learner_version: int | None
    steps: list[StepView]

    @property
    def num_steps(self) -> int:
        return sum(1 for step in self.steps if step.action_type is not None)


@dataclass
class RunReport:
    """Everything the page shows about one run."""

    run_dir: Path
    title: str
    key_figures: dict[str, str]
    plots: list[Plot]
    trajectories: list[TrajectoryView]
    trajectories_total: int
    notes: list[str] = field(default_factory=list)

    @property
    def trajectories_shown(self) -> int:
        return len(self.trajectories)

    @property
    def staleness_recorded(self) -> bool:
        return any(t.learner_version is not None for t in self.trajectories)


# -- the run folder --------------------------------------------------------------------------------


def check_run_dir(run_dir: Path) -> Path:
    """``run_dir`` if it looks like a run folder; else an :class:`InputError` naming the fix."""
    if not run_dir.exists():
        raise InputError(f"run folder {run_dir} does not exist")
    if not run_dir.is_dir():
        raise InputError(f"{run_dir} is a file, not a run folder")
    if not any((run_dir / marker).exists() for marker in RUN_MARKERS):
        raise InputError(
            f"{run_dir} is not a run folder (no {', '.join(RUN_MARKERS)}); "
            "pass a folder made by 'distrl play' or 'distrl train'"
        )
    return run_dir


def _key_figures(run_dir: Path, notes: list[str]) -> dict[str, str]:
    path = run_dir / "summary.json"
    if not path.exists():
        return {}
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        notes.append(f"summary.json not read: {exc}")
        return {}
    if not isinstance(summary, dict):
        return {}
    figures = {}
    for key in _KEY_FIGURES:
        value = summary.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        figures[key.replace("_", " ")] = f"{value:.3f}" if isinstance(value, float) else str(value)
    return figures


# -- choosing trajectories -------------------------------------------------------------------------


@dataclass
class _Index:
    """Light facts about every stored trajectory, read without decoding any screenshot."""

    order: list[str] = field(default_factory=list)
    finished_at: dict[str, float] = field(default_factory=dict)
    #: (trajectory id, step index) of every row whose screenshot PNG is stored.
    with_png: set[tuple[str, int]] = field(default_factory=set)


def _index_store(store: TrajectoryStore) -> _Index:
    index = _Index()
    for shard in store.shard_paths():
        try:
            table = pq.read_table(
                shard, columns=["trajectory_id", "step_index", "finished_at", "screenshot_png"]
            )
        except (OSError, ValueError) as exc:
            raise StoreError(f"shard {shard} is not readable: {exc}") from exc
        ids = table.column("trajectory_id").to_pylist()
        steps = table.column("step_index").to_pylist()
        finished = table.column("finished_at").to_pylist()
        has_png = table.column("screenshot_png").is_valid().to_pylist()
        rows = zip(ids, steps, finished, has_png, strict=True)
        for trajectory_id, step, finished_at, stored in rows:
            if trajectory_id not in index.finished_at:
                index.order.append(trajectory_id)
                index.finished_at[trajectory_id] = finished_at
            if stored:
                index.with_png.add((trajectory_id, step))
    return index


def newest_first(index: _Index, limit: int) -> list[str]:
    """The ``limit`` newest trajectory ids, newest first (finish time, ties by append order)."""
    position = {trajectory_id: i for i, trajectory_id in enumerate(index.order)}
    ranked = sorted(index.order, key=lambda t: (index.finished_at[t], position[t]), reverse=True)
    return ranked[: max(limit, 0)]


# -- one trajectory --------------------------------------------------------------------------------


def describe_action(action: Action) -> str:
    """A short human line for ``action`` (coordinates as AitW ``[y, x]``)."""
    kind = action.action_type
    if kind is ActionType.DUAL_POINT and action.is_tap:
        y, x = action.touch_yx
        return f"tap [y, x] = [{y:.3f}, {x:.3f}]"
    if kind is ActionType.DUAL_POINT:
        (y0, x0), (y1, x1) = action.touch_yx, action.lift_yx
        return f"swipe [{y0:.3f}, {x0:.3f}] -> [{y1:.3f}, {x1:.3f}]"
    if kind is ActionType.TYPE:
        return f"type {json.dumps(action.text, ensure_ascii=False)}"
    if kind is ActionType.INVALID:
        return f"invalid action: {action.invalid_reason or 'no reason given'}"
    return kind.value.lower().replace("_", " ")


def _learner_version(trajectory: Trajectory) -> int | None:
    raw = trajectory.metadata.get(LEARNER_VERSION_KEY)
    try:
        return int(raw) if raw is not None else None
    except (TypeError, ValueError):
        return None


def _family(trajectory: Trajectory) -> str:
    # The same grouping as the per-template success tables (envs.task_sets.task_family).
    spec = trajectory.task.spec
    return str(spec.get("template") or spec.get("task") or trajectory.task.suite)


def view_trajectory(
    trajectory: Trajectory,
    number: int,
    with_png: set[tuple[str, int]],
    image_dir: Path,
) -> TrajectoryView:
    """Draw the step images of ``trajectory`` into ``image_dir`` and return its view.

    Images are named by the trajectory's position in the report (``t0003-s02.png``), never by
    its id, which is free text from the producer.
    """
    trajectory_id = trajectory.trajectory_id
    learner_version = _learner_version(trajectory)
    observations = [step.observation for step in trajectory.steps]
    if trajectory.final_observation is not None:
        observations.append(trajectory.final_observation)
    steps: list[StepView] = []
    for i, observation in enumerate(observations):
        stored = (trajectory_id, i) in with_png
        step = trajectory.steps[i] if i < len(trajectory.steps) else None
        image = step_image(
            observation.screenshot if stored else None,
            observation.elements,
            step.action if step is not None else None,
        )
        name = f"t{number:04d}-s{i:02d}.png"
        image.save(image_dir / name, format="PNG", compress_level=3)
        relative = f"{IMAGE_FOLDER}/{name}"
        if step is None:
            steps.append(StepView(i, relative, stored, None, "final screen"))
            continue
        steps.append(
            StepView(
                index=i,
                image=relative,
                screenshot_stored=stored,
                action_type=step.action.action_type.value,
                action_summary=describe_action(step.action),
                typed_text=step.action.text,
                action_text=step.action_text,
                reward=float(step.reward),
                done=bool(step.done),
                behaviour_logprob=float(step.behaviour_logprob),
                entropy=float(step.entropy),
                policy_version=int(step.policy_version),
                staleness=(
                    learner_version - int(step.policy_version)
                    if learner_version is not None
                    else None
                ),
                step_seconds=float(step.step_seconds),
            )
        )
    task = trajectory.task
    return TrajectoryView(
        trajectory_id=trajectory_id,
        task_id=task.task_id,
        instruction=task.instruction,
        family=_family(trajectory),
        suite=task.suite,
        split=task.split,
        success=bool(trajectory.success),
        worker_id=trajectory.worker_id,
        device_id=trajectory.device_id,
        started_at=float(trajectory.started_at),
        finished_at=float(trajectory.finished_at),
        total_reward=trajectory.total_reward,
        screenshots_stored=bool(steps) and all(s.screenshot_stored for s in steps),
        learner_version=learner_version,
        steps=steps,
    )


# -- the whole run ---------------------------------------------------------------------------------


def _clear_images(image_dir: Path) -> None:
    """Remove the step images and plots of an earlier report, and nothing else."""
    for path in image_dir.glob("*.png"):
        if _OWN_IMAGE.fullmatch(path.name):
            path.unlink()


def collect_report(
    run_dir: Path,
    out_dir: Path,
    max_trajectories: int = 300,
    on_trajectory: Callable[[int, int], None] | None = None,
) -> RunReport:
    """Read ``run_dir`` and write its images under ``out_dir/img``; return the report model.

    ``on_trajectory(done, total)`` is called after each drawn trajectory (for a progress bar).
    A run without trajectories gives a report with none (its plots are still made).
    """
    run_dir = check_run_dir(Path(run_dir))
    image_dir = Path(out_dir) / IMAGE_FOLDER
    image_dir.mkdir(parents=True, exist_ok=True)
    _clear_images(image_dir)
    notes: list[str] = []
    key_figures = _key_figures(run_dir, notes)
    plots = make_plots(run_dir, image_dir, notes)
    plots = [Plot(p.title, f"{IMAGE_FOLDER}/{p.image}", p.caption) for p in plots]

    trajectories: list[TrajectoryView] = []
    total = 0
    store_root = run_dir / "trajectories"
    if store_root.is_dir():
        try:
            store = TrajectoryStore(store_root)
            index = _index_store(store)
            total = len(index.order)
            chosen = newest_first(index, max_trajectories)
            rank = {trajectory_id: i for i, trajectory_id in enumerate(chosen)}
            views: dict[str, TrajectoryView] = {}
            for trajectory in store.iter_trajectories():
                number = rank.get(trajectory.trajectory_id)
                if number is None:
                    continue
                views[trajectory.trajectory_id] = view_trajectory(
                    trajectory, number, index.with_png, image_dir
                )
                if on_trajectory is not None:
                    on_trajectory(len(views), len(chosen))
            trajectories = [views[t] for t in chosen if t in views]
        except StoreError as exc:
            raise InputError(f"trajectories of {run_dir} cannot be read: {exc}") from exc
    wireframes = sum(not t.screenshots_stored for t in trajectories)
    if wireframes:
        notes.append(
            f"{wireframes} of the {len(trajectories)} trajectories shown were stored without "
            "screenshots (training keeps none, to save memory): their steps show a wireframe "
            "drawn from the UI element list, labelled 'wireframe (no screenshot stored)'."
        )
    if trajectories and not any(t.learner_version is not None for t in trajectories):
        notes.append(
            "Staleness is not recorded for these trajectories (no learner version stored with "
            "them); each step shows the policy_version that acted instead."
        )
    return RunReport(
        run_dir=run_dir,
        title=run_dir.resolve().name,
        key_figures=key_figures,
        plots=plots,
        trajectories=trajectories,
        trajectories_total=total,
        notes=notes,
    )
