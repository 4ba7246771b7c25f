"""Measuring a policy: success on a task split, greedy and sampled, on evaluation devices.

Training evaluates periodically on the test split and ``distrl eval`` evaluates a saved policy;
both use this, with devices asked for as evaluation devices (simulator speed, slots apart from
training's) and a task order from the seed tree's evaluation branch, so that an evaluation never
shares a random stream with the data the policy learned from.

An evaluation's index in that branch (``draw``) picks its test tasks and device seeds from one
per-seed stream. A run's periodic evaluations each take their own draw, so a curve is not one
fixed sample of the test split re-scored; its first and final evaluations share draw 0, so the
run's gain is measured on the same episodes (:func:`distrl.runtime.run_log.record_eval`). Two
runs of the same seed face the same sequence of evaluations. Every success rate carries its
binomial standard error.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import numpy as np

from distrl.config.schema import RunConfig
from distrl.core.seeds import Stream, derive_rng, derive_seed
from distrl.core.task import Task
from distrl.core.trajectory import Trajectory
from distrl.envs.devices import Purpose, make_device
from distrl.envs.protocol import DeviceEnv
from distrl.envs.task_sets import task_family
from distrl.policies.base import Policy, reads_screenshots
from distrl.runtime.task_sampler import TaskSampler
from distrl.runtime.worker import Worker


def evaluation_devices(
    cfg: RunConfig, count: int, screenshots: bool = True, draw: int = 0
) -> list[DeviceEnv]:
    """``count`` evaluation devices (see :func:`~distrl.envs.devices.device_slot` for which
    real devices they are), seeded for the run's ``draw``-th evaluation."""
    return [
        make_device(cfg, Purpose.EVALUATE, i, screenshots=screenshots, incarnation=draw)
        for i in range(count)
    ]


def binomial_se(success_rate: float, episodes: int) -> float:
    """Standard error of a success rate measured on ``episodes`` independent episodes:
    ``sqrt(p (1 - p) / n)``.

    >>> round(binomial_se(0.5, 100), 4)
    0.05
    """
    if episodes < 1:
        raise ValueError(f"a success rate needs at least one episode, got {episodes}")
    return math.sqrt(success_rate * (1.0 - success_rate) / episodes)


@dataclass(frozen=True)
class EvalResult:
    """One evaluation: the fraction of ``episodes`` that succeeded, their mean length, the
    success rate of each task family (template) the episodes came from, and (when asked for,
    ``keep_episodes``) the episodes themselves, for a study of how a policy fails."""

    success_rate: float
    episodes: int
    mean_steps: float
    per_template: dict[str, float]
    played: tuple[Trajectory, ...] = field(default=(), compare=False, repr=False)

    @property
    def success_se(self) -> float:
        """The binomial standard error of :attr:`success_rate`."""
        return binomial_se(self.success_rate, self.episodes)


class EvaluationDevices:
    """The devices evaluations run on, kept between evaluations where they are costly.

    PhoneSim devices are built fresh for every evaluation, seeded by the evaluation's ``draw``
    (so each evaluation of a run faces its own episodes); a browser or an emulator takes seconds
    to start, so those are started once and reused (their streams then go on from one evaluation
    to the next). ``close()`` ends them."""

    def __init__(self, cfg: RunConfig, screenshots: bool = True):
        self.cfg = cfg
        self.screenshots = screenshots
        self._kept: list[DeviceEnv] = []

    def take(self, count: int, draw: int = 0) -> list[DeviceEnv]:
        if self.cfg.env.backend == "phonesim":
            return evaluation_devices(self.cfg, count, self.screenshots, draw)
        if len(self._kept) < count:
            self.close()
            self._kept = evaluation_devices(self.cfg, count, self.screenshots)
        return self._kept[:count]

    def give_back(self, devices: list[DeviceEnv]) -> None:
        if self.cfg.env.backend == "phonesim":
            for device in devices:
                device.close()

    def close(self) -> None:
        for device in self._kept:
            device.close()
        self._kept = []


def evaluate(
    policy: Policy,
    cfg: RunConfig,
    tasks: list[Task],
    episodes: int,
    greedy: bool,
    devices: EvaluationDevices | None = None,
    draw: int = 0,
    keep_episodes: bool = False,
) -> EvalResult:
    """Success of a copy of ``policy`` over ``episodes`` episodes drawn from ``tasks`` (the
    draw's first ``episodes`` tasks, each played to its end: :meth:`Worker.play`), on
    ``devices`` (default: devices started and ended for this evaluation alone); ``draw`` is the
    evaluation's index in the run (its tasks, action sampling and PhoneSim device seeds). With
    ``keep_episodes`` the result holds the episodes played (:attr:`EvalResult.played`)."""
    owned = devices is None
    bench = EvaluationDevices(cfg, reads_screenshots(policy)) if devices is None else devices
    taken = bench.take(min(cfg.train.devices, episodes), draw)
    worker = Worker(
        taken,
        copy.deepcopy(policy),
        TaskSampler(tasks, derive_rng(cfg.seed, Stream.EVALUATION, 0, draw)),
        worker_id="eval",
        seed=derive_seed(cfg.seed, Stream.EVALUATION, 1, draw),
        greedy=greedy,
    )
    try:
        trajectories = worker.play(episodes)
    finally:
        bench.give_back(taken)
        if owned:
            bench.close()
    per_template: dict[str, list[bool]] = {}
    for trajectory in trajectories:
        per_template.setdefault(task_family(trajectory.task), []).append(trajectory.success)
    return EvalResult(
        success_rate=float(np.mean([t.success for t in trajectories])),
        episodes=len(trajectories),
        mean_steps=float(np.mean([len(t) for t in trajectories])),
        per_template={k: float(np.mean(v)) for k, v in sorted(per_template.items())},
        played=tuple(trajectories) if keep_episodes else (),
    )
