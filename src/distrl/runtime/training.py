"""The training loop, written once for both runtimes.

A run's workers, replay and learner are its *parts*; where they live is the only thing that
differs between runtimes. :class:`Parts` is what the loop needs from them:
:class:`~distrl.runtime.serial.LocalParts` keeps them in this process,
:class:`~distrl.runtime.distributed.driver.ActorParts` places them as Ray actors. Everything
else is here, once: setup (the run folder, the policy, the warm start), resume, the loop,
collection and learner metrics, evaluation points, TensorBoard and checkpoints.

Each pass of the loop evaluates when an evaluation is due, stops when the time or the update
budget is spent, runs one :meth:`Parts.round` (serial and sync: collect a round, then train;
async: wait for the learner's next chunk while workers collect), logs, and checkpoints when due.
The curve always ends with the policy the run ends with (evaluated on
``train.final_eval_episodes``), and a final checkpoint is written.

Exactness on resume: the episode count is the replay's count of distinct stored trajectories
(restored from the store, not from the checkpoint), so a run killed between checkpoints and
resumed reports exactly what its store holds; ``train.max_updates`` bounds every round, so a run
makes exactly that many updates.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import torch

from distrl.config.schema import RunConfig
from distrl.core.trajectory import Trajectory
from distrl.envs.task_sets import load_tasks, task_family
from distrl.logs.scalars import open_scalar_log
from distrl.policies.base import Policy, reads_screenshots
from distrl.runtime.checkpoint import save_start_policy
from distrl.runtime.components import build_learner, build_policy
from distrl.runtime.curriculum import Outcome, TaskCurriculum
from distrl.runtime.diagnostics import RunDiagnostics
from distrl.runtime.drops import DropLog
from distrl.runtime.evaluation import EvaluationDevices
from distrl.runtime.learner import published_state
from distrl.runtime.lr_schedule import LearningRateSchedule
from distrl.runtime.run_dir import create_run_dir
from distrl.runtime.run_log import (
    RunClock,
    TrainResult,
    load_checkpoint,
    record_eval,
    restoring_from,
    save_checkpoint,
    write_outputs,
)
from distrl.runtime.warm_start import load_demonstrations, resumed_demonstrations, warm_start
from distrl.store import TrajectoryStore

Progress = Callable[[float, dict[str, float]], None]

log = logging.getLogger(__name__)


class Parts(Protocol):
    """A run's workers, replay and learner, wherever they live."""

    def start(self) -> None:
        """Start collecting (async workers run from here until :meth:`stop`)."""
        ...

    def round(self) -> dict[str, Any]:
        """One step of the run: ``{"metrics": mean learner metrics}`` (empty while the replay
        fills), and optionally ``"scalars"``: runtime-specific TensorBoard scalars by tag. Never
        trains past ``train.max_updates``."""
        ...

    def stop(self) -> None:
        """Stop collecting; what workers finished is delivered and stored."""
        ...

    def updates(self) -> int:
        """The learner's update count."""
        ...

    def learner_weights(self) -> tuple[dict[str, torch.Tensor], int, int]:
        """The weights the run evaluates (the learner's newest, or their moving average with
        ``train.averaged_policy_decay``), their version and the update count they were taken at
        (an async learner trains on meanwhile)."""
        ...

    def stats(self) -> dict[str, float]:
        """The replay's counters and size, and collection figures since the previous call
        (:func:`~distrl.runtime.collection_stats.replay_stats`)."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """``{"learner", "replay", "workers"}`` for a checkpoint, after storing every pending
        trajectory (the replay's counters then match the store)."""
        ...

    def figures(self) -> dict[str, Any]:
        """Runtime-specific summary figures."""
        ...

    def drop_log(self) -> DropLog | None:
        """Dropped episodes by cause, where the runtime keeps them (None: counts only)."""
        ...

    def task_outcomes(self) -> list[Outcome]:
        """(task family, success) of each trajectory the replay took since the previous call,
        in arrival order (what the curriculum learns from)."""
        ...

    def set_lr_scale(self, scale: float) -> None:
        """Have the learner train at ``train.lr`` times ``scale`` (``train.lr_schedule``) from
        its next update on; an async learner from its next ``train`` call (one chunk later)."""
        ...

    def set_task_weights(self, weights: dict[str, float]) -> None:
        """Have the workers draw task families by ``weights`` from their next episode on."""
        ...

    def close(self) -> None: ...


def session_index(state: dict[str, Any] | None) -> int:
    """Which session of a run this is: 0 for a fresh run, n after its n-th resume. Workers
    whose random streams a checkpoint cannot hold (Ray's) seed from it, so a resumed run does not
    replay its first session's task order."""
    return 0 if state is None else int(state.get("resumes", 0)) + 1


@dataclass(frozen=True)
class RunSetup:
    """What a placement builds a run's parts from."""

    cfg: RunConfig
    run_dir: Path
    #: The process's policy, warm-started (or not); the learner starts from its weights.
    policy: Policy
    #: The checkpoint's state on resume (the parts restore the learner, replay and workers).
    state: dict[str, Any] | None
    #: What the replay keeps for its demonstration share (empty without one).
    demonstrations: list[Trajectory]

    @property
    def session(self) -> int:
        """0 for a fresh run, n after its n-th resume (see :func:`session_index`)."""
        return session_index(self.state)


#: Builds a run's parts (:class:`~distrl.runtime.serial.LocalParts`, Ray's ``ActorParts``).
Placement = Callable[[RunSetup], Parts]


def train_with(
    place: Placement,
    cfg: RunConfig,
    resume: Path | None = None,
    demonstrations: list[Trajectory] | None = None,
    on_progress: Progress | None = None,
    evaluate: bool = True,
    start_weights: dict[str, torch.Tensor] | None = None,
    session: Callable[[], AbstractContextManager[object]] = nullcontext,
) -> TrainResult:
    """Set up (or resume) a run, place its parts with ``place`` and train until the budget is
    spent. The warm start clones ``demonstrations`` if given, else those of ``train.demos``,
    else freshly collected ones (``train.warm_start_episodes``; 0: none); ``start_weights`` is
    a policy already warm-started (a benchmark clones once and starts every method from it);
    ``evaluate=False`` skips the test-split curve. ``session`` is entered once the run is set up
    and left after its parts closed (Ray's: a checkpoint that does not fit is refused before a
    cluster starts)."""
    command_started = time.monotonic()  # train.total_minutes counts from here
    if cfg.train.torch_threads is not None:
        torch.set_num_threads(cfg.train.torch_threads)
    if demonstrations is None and cfg.train.demos and resume is None:
        demonstrations = load_demonstrations(Path(cfg.train.demos))  # bad input fails first
    run_dir = resume if resume is not None else create_run_dir(cfg, "train")
    test_tasks = load_tasks(cfg, "test")
    policy = build_policy(cfg)  # the one policy of this process
    state = load_checkpoint(run_dir) if resume is not None else None
    if state is not None:
        # Parts restore the state where they run (Ray: inside actors, where a state that does
        # not fit would end as an actor's traceback): try the learner's here first.
        with restoring_from(run_dir):
            build_learner(cfg, policy).load_state_dict(state["learner"])
        TrajectoryStore(run_dir / "trajectories").count()  # every shard readable (footers only)
        demonstrations = resumed_demonstrations(cfg, run_dir)
    elif start_weights is not None:
        policy.load_state_dict(start_weights)
    elif demonstrations or cfg.train.warm_start_episodes > 0:
        count = len(demonstrations) if demonstrations else cfg.train.warm_start_episodes
        log.info("warm start: cloning %d demonstrations (%d steps)", count, cfg.train.bc_steps)
        demonstrations = warm_start(policy, cfg, load_tasks(cfg, "train"), run_dir, demonstrations)
        log.info("warm start done in %.0f s", time.monotonic() - command_started)
    if state is None:
        save_start_policy(run_dir, policy)
    kept = demonstrations if cfg.train.demo_fraction > 0 and demonstrations else []
    with session():
        parts = place(RunSetup(cfg, run_dir, policy, state, kept))
        eval_devices = EvaluationDevices(cfg, reads_screenshots(policy))
        try:
            run = TrainingRun(cfg, run_dir, parts, policy, test_tasks, eval_devices, on_progress)
            run.evaluating = evaluate
            run.command_started = command_started
            if cfg.curriculum.enabled:
                run.curriculum = TaskCurriculum.for_tasks(load_tasks(cfg, "train"), cfg.curriculum)
            if state is not None:
                run.resume_from(state)
            return run.run()
        finally:
            eval_devices.close()
            parts.close()


def success_replay_figures(stats: dict[str, float]) -> dict[str, float]:
    """The success store's size and families, and the share of the windows drawn so far that
    came from it (docs/design.md §7.14); empty while success replay is off."""
    if "success_stored" not in stats:
        return {}
    replayed = stats["success_windows_sampled"]
    drawn = stats["windows_sampled"] + replayed
    return {
        "success_stored": stats["success_stored"],
        "success_tasks": stats["success_tasks"],
        "success_share": replayed / drawn if drawn else 0.0,
    }


class TrainingRun:
    """The loop over a run's parts (see the module docstring)."""

    def __init__(
        self,
        cfg: RunConfig,
        run_dir: Path,
        parts: Parts,
        policy: Policy,
        test_tasks: list,
        eval_devices: EvaluationDevices,
        on_progress: Progress | None,
    ):
        self.cfg, self.parts, self.policy = cfg, parts, policy
        self.test_tasks, self.eval_devices = test_tasks, eval_devices
        self.on_progress = on_progress
        self.result = TrainResult(run_dir)
        self.elapsed_before = 0.0
        #: How many times this run was resumed (its workers' seed branch on the seed tree).
        self.resumes = 0
        self.evaluating = True
        #: The learner's health over the run (explained variance, clip, KL, staleness).
        self.diagnostics = RunDiagnostics()
        #: When the command started (``train.total_minutes`` counts from there).
        self.command_started: float | None = None
        #: The task curriculum (``curriculum.enabled``; docs/design.md §7.13), else None.
        self.curriculum: TaskCurriculum | None = None
        #: The learning rate's factor over the run (``train.lr_schedule``).
        self.lr_schedule = LearningRateSchedule(cfg.train.lr_schedule)

    def resume_from(self, state: dict[str, Any]) -> None:
        """Continue the curve, clock and torch RNG of a checkpoint (the parts restored the
        learner, the replay and the workers when they were placed)."""
        self.result.curve = state["curve"]
        self.elapsed_before = state["elapsed"]
        self.resumes = session_index(state)
        torch.set_rng_state(state["torch_rng"])
        if "diagnostics" in state:  # checkpoints from before the summary have none
            self.diagnostics = RunDiagnostics.from_state(state["diagnostics"])
        if self.curriculum is not None and "curriculum" in state:
            self.curriculum.load_state_dict(state["curriculum"])
        if self.cfg.train.lr_schedule == "linear" and "lr_scale" in state:
            self.lr_schedule = LearningRateSchedule("linear", float(state["lr_scale"]))

    # -- the loop ------------------------------------------------------------------------------
    def run(self) -> TrainResult:
        cfg, parts = self.cfg, self.parts
        self.writer = open_scalar_log(cfg, self.result.run_dir)
        last_eval = self.result.curve[-1]["minutes"] if self.result.curve else None
        self.clock = RunClock(cfg, self.elapsed_before, last_eval, self.command_started)
        self.updates = parts.updates()
        log.info(
            "collection: %s on %d devices, %s runtime, run folder %s",
            cfg.train.algo,
            cfg.train.devices,
            cfg.train.runtime,
            self.result.run_dir,
        )
        next_report = time.monotonic() + cfg.log.progress_seconds
        if self.curriculum is not None:  # a resumed run draws as it did when it stopped
            parts.set_task_weights(self.curriculum.probabilities())
        parts.start()
        while True:
            if self.clock.eval_due():
                self._evaluate()
            if self.clock.out_of_time() or self._done_by_updates():
                break
            self._follow_lr_schedule()
            report = parts.round()
            metrics = report["metrics"]
            for tag, value in report.get("scalars", {}).items():
                self.writer.add_scalar(tag, value, self.updates)
            before, self.updates = self.updates, parts.updates()
            self.diagnostics.add(metrics, self.updates - before)
            self._log(metrics)
            self._follow_curriculum()
            if self.on_progress is not None:
                self.on_progress(self.clock.fraction, metrics)
            if time.monotonic() >= next_report:
                self._report(metrics)
                next_report = time.monotonic() + cfg.log.progress_seconds
            if self.clock.checkpoint_due():
                self._checkpoint()
        parts.stop()
        self.updates = parts.updates()
        self._log({})
        last = self.result.curve[-1] if self.result.curve else None
        if last is None or not (last.get("final") and last["updates"] == self.updates):
            # The curve ends with the policy the run ends with, measured on enough episodes to
            # quote (a resumed run that had already finished keeps its final point).
            self._evaluate(final=True)
        self._checkpoint()
        self.result.updates = self.updates
        self.result.extra = {
            **self.result.extra,  # the success replay's figures at the last look
            **parts.figures(),
            **self._accounting(),
            "diagnostics": self.diagnostics.summary(),
        }
        if self.curriculum is not None:
            self.result.extra["curriculum"] = self.curriculum.table()
        self.result.drops = parts.drop_log()
        self.writer.close()
        write_outputs(self.result.run_dir, self.result)
        return self.result

    def _done_by_updates(self) -> bool:
        limit = self.cfg.train.max_updates
        return limit is not None and self.updates >= limit

    # -- pieces --------------------------------------------------------------------------------
    def _evaluate(self, final: bool = False) -> None:
        if not self.evaluating:
            return
        started = time.monotonic()
        weights, version, updates = self.parts.learner_weights()
        with self._policy_holding(weights, version):
            record_eval(
                self.cfg,
                self.policy,
                self.test_tasks,
                self.clock.elapsed,
                updates,
                self.result,
                self.writer,
                self.eval_devices,
                final,
            )
        self.clock.reserve = time.monotonic() - started  # what the final evaluation will take
        point = self.result.curve[-1]
        log.info(
            "evaluation at %.1f min, update %d: test success %.3f greedy, %.3f sampled (%.0f s)",
            point["minutes"],
            updates,
            point["success"],
            point["sampled_success"],
            self.clock.reserve,
        )

    @contextmanager
    def _policy_holding(self, weights: dict[str, torch.Tensor], version: int) -> Iterator[None]:
        """``self.policy`` holds ``weights`` (all or some of its tensors) and ``version`` inside
        the block and its own again after it: in the serial runtime it is the learner's policy,
        which must not go on training from a moving average that was only evaluated."""
        kept = {k: v.detach().clone() for k, v in published_state(self.policy).items()}
        kept_version = self.policy.version
        self.policy.load_state_dict(weights)
        self.policy.version = version
        try:
            yield
        finally:
            self.policy.load_state_dict(kept)
            self.policy.version = kept_version

    def _report(self, metrics: dict[str, float]) -> None:
        """One progress line: budget spent, updates, episodes, the learner's loss."""
        loss = f"loss {metrics['loss']:.3f}" if "loss" in metrics else "filling the replay"
        log.info(
            "training %.0f%% (%.1f min): %d updates, %d episodes, %s",
            100 * min(self.clock.fraction, 1.0),
            self.clock.elapsed / 60,
            self.updates,
            self.result.episodes,
            loss,
        )

    def _log(self, metrics: dict[str, float]) -> None:
        """Learner metrics of the round and collection figures, stepped by the update count;
        the episode count is the replay's count of stored trajectories."""
        for key, value in metrics.items():
            self.writer.add_scalar(f"learner/{key}", value, self.updates)
        stats = self.parts.stats()
        for key in ("success", "return", "episode_steps", "env_steps_per_s"):
            if f"recent_{key}" in stats:
                self.writer.add_scalar(f"collect/{key}", stats[f"recent_{key}"], self.updates)
        self.writer.add_scalar("collect/trajectories", stats["trajectories"], self.updates)
        self.writer.add_scalar("replay/windows", stats["windows"], self.updates)
        self.writer.add_scalar("replay/stale_dropped", stats["stale_dropped"], self.updates)
        self.result.episodes = int(stats["trajectories"])
        success_replay = success_replay_figures(stats)
        for key, value in success_replay.items():
            self.writer.add_scalar(f"replay/{key}", value, self.updates)
        if success_replay:
            self.result.extra["success_replay"] = success_replay
        if self.cfg.train.demo_phrasing_augmentation > 0:  # docs/design.md §7.8
            drawn, reworded = stats["demo_windows_sampled"], stats["demo_windows_reworded"]
            self.writer.add_scalar(
                "replay/demo_reworded_share", reworded / drawn if drawn else 0.0, self.updates
            )
            self.result.extra["demo_rewording"] = {
                "demo_windows_sampled": drawn,
                "demo_windows_reworded": reworded,
            }

    def _follow_lr_schedule(self) -> None:
        """Hand the learner the schedule's factor for the budget spent so far, and log the
        rate it trains at."""
        if self.cfg.train.lr_schedule == "constant":
            return
        train = self.cfg.train
        scale = self.lr_schedule.scale(self.clock.fraction, self.updates, train.max_updates)
        self.parts.set_lr_scale(scale)
        self.writer.add_scalar("learner/lr", train.lr * scale, self.updates)

    def _follow_curriculum(self) -> None:
        """Feed the round's finished episodes to the curriculum, hand the workers its new
        draw probabilities and log them with each family's window success."""
        if self.curriculum is None:
            return
        if not self.curriculum.record(self.parts.task_outcomes()):
            return
        probabilities = self.curriculum.probabilities()
        self.parts.set_task_weights(probabilities)
        step = self.updates
        for family, success in self.curriculum.success().items():
            self.writer.add_scalar(f"curriculum/weight/{family}", probabilities[family], step)
            if success is not None:
                self.writer.add_scalar(f"curriculum/success/{family}", success, step)

    def _checkpoint(self) -> None:
        """Everything a resumed run needs, written atomically with the policy it holds."""
        parts_state = self.parts.state_dict()
        learner = parts_state["learner"]
        average = learner.get("average")
        if average is not None:
            # The serial runtime's state holds the policy's own tensors, which holding the
            # average below overwrites in place: the resume state keeps copies of the newest.
            learner["policy"] = {
                k: v.clone() if k in average else v for k, v in learner["policy"].items()
            }
        self.policy.load_state_dict(learner["policy"])
        self.policy.version = version = int(learner["version"])
        self.result.episodes = int(parts_state["replay"]["counters"]["trajectories"])
        state = {
            **parts_state,
            "elapsed": self.clock.elapsed,
            "curve": self.result.curve,
            "episodes": self.result.episodes,
            "resumes": self.resumes,
            "torch_rng": torch.get_rng_state(),
            "diagnostics": self.diagnostics.state_dict(),
            "lr_scale": self.lr_schedule.last,
        }
        if self.curriculum is not None:
            state["curriculum"] = self.curriculum.state_dict()
        # The saved policy (what ``distrl eval`` scores) is the one the run evaluates.
        holding = nullcontext() if average is None else self._policy_holding(average, version)
        with holding:
            save_checkpoint(self.result.run_dir, state, self.policy)
        log.info("checkpoint: update %d, %d episodes", self.updates, self.result.episodes)

    def _accounting(self) -> dict[str, Any]:
        """What the replay counted against what is on disk (exactly once: equal, no id twice),
        and the stored episodes and successes per task family: where the run's draws went (the
        curriculum's doing, or uniform draws') and what came of them."""
        store = TrajectoryStore(self.result.run_dir / "trajectories")
        ids = store.trajectory_ids()
        by_family: dict[str, dict[str, int]] = {}
        for task, success in store.task_outcomes():
            family = by_family.setdefault(task_family(task), {"episodes": 0, "successes": 0})
            family["episodes"] += 1
            family["successes"] += int(success)
        return {
            "collected": self.result.episodes,
            "stored": len(ids),
            "duplicated": len(ids) - len(set(ids)),
            "episodes_by_family": dict(sorted(by_family.items())),
        }
