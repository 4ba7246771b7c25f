"""Measuring a policy: success on a task split, greedy and sampled, on evaluation devices.

Training evaluates periodically on the test split and ``distrl eval`` evaluates a saved policy;
both use this, with devices and a task order seeded apart from training's so that an evaluation
never shares a random stream with the data the policy learned from.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from distrl.config.schema import RunConfig
from distrl.core.task import Task
from distrl.envs.backends import evaluation_slot, make_device, task_family
from distrl.envs.protocol import DeviceEnv
from distrl.policies.base import Policy
from distrl.runtime.components import capture_config
from distrl.runtime.worker import Worker


def training_devices(cfg: RunConfig, count: int) -> list[DeviceEnv]:
    """The serial runtime's ``count`` training devices (slots 0..count-1)."""
    return [make_device(cfg, i, seed=cfg.seed * 10_007 + i) for i in range(count)]


def evaluation_devices(cfg: RunConfig, count: int) -> list[DeviceEnv]:
    """``count`` evaluation devices, seeded apart from the training devices (see
    :func:`~distrl.envs.backends.evaluation_slot` for which real devices they are)."""
    slots = [evaluation_slot(cfg, i) for i in range(count)]
    return [make_device(cfg, slot, seed=cfg.seed * 10_007 + slot) for slot in slots]


class TaskSampler:
    """Draws tasks uniformly at random (with replacement) from ``tasks``, seeded; its state goes
    into checkpoints so a resumed run continues the same task stream."""

    def __init__(self, tasks: list[Task], seed: int):
        self.tasks = tasks
        self.rng = np.random.default_rng(seed)

    def __call__(self) -> Task:
        return self.tasks[int(self.rng.integers(len(self.tasks)))]


@dataclass(frozen=True)
class EvalResult:
    success_rate: float
    episodes: int
    mean_steps: float
    per_template: dict[str, float]


class EvaluationDevices:
    """The devices evaluations run on, kept between evaluations where they are costly.

    PhoneSim devices are built fresh for every evaluation, so every evaluation of a run faces the
    same episodes; a browser or an emulator takes seconds to start, so those are started once and
    reused (their episodes then differ between evaluations). ``close()`` ends them.

    Evaluation measures the policy, not the devices: it runs at simulator speed, without the
    emulator latency and fault model the training devices may have (a time-scaled evaluation
    of 64 episodes would otherwise hold the run for minutes, and faults would bias it)."""

    def __init__(self, cfg: RunConfig):
        self.cfg = cfg.model_copy(deep=True)
        self.cfg.env.phonesim.latency.enabled = False
        self._kept: list[DeviceEnv] = []

    def take(self, count: int) -> list[DeviceEnv]:
        if self.cfg.env.backend == "phonesim":
            return evaluation_devices(self.cfg, count)
        if len(self._kept) < count:
            self.close()
            self._kept = evaluation_devices(self.cfg, count)
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
) -> EvalResult:
    """Success of a copy of ``policy`` over ``episodes`` episodes drawn from ``tasks``, on
    ``devices`` (default: devices started and ended for this evaluation alone)."""
    owned = devices is None
    bench = EvaluationDevices(capture_config(cfg, policy)) if devices is None else devices
    taken = bench.take(min(cfg.train.devices, episodes))
    worker = Worker(
        taken,
        copy.deepcopy(policy),
        TaskSampler(tasks, cfg.seed + 17),
        worker_id="eval",
        seed=cfg.seed + 17,
        greedy=greedy,
    )
    try:
        trajectories = worker.collect(episodes)[:episodes]
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
    )
