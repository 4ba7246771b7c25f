"""Measuring a policy: success on a task split, greedy and sampled, on fresh PhoneSim devices.

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
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.policies.base import Policy
from distrl.runtime.worker import Worker

#: Device seeds of evaluation start here, far from the training devices' (0, 1, 2, ...).
EVAL_DEVICE_OFFSET = 50_000


def phonesim_devices(cfg: RunConfig, count: int, offset: int) -> list[PhoneSimEnv]:
    """``count`` PhoneSim devices with seeds derived from the run seed and ``offset``."""
    return [
        PhoneSimEnv(
            cfg.env.phonesim,
            seed=cfg.seed * 10_007 + offset + i,
            device_id=f"phonesim-{offset + i}",
        )
        for i in range(count)
    ]


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


def evaluate(
    policy: Policy, cfg: RunConfig, tasks: list[Task], episodes: int, greedy: bool
) -> EvalResult:
    """Success of a copy of ``policy`` over ``episodes`` episodes drawn from ``tasks``.

    Evaluation measures the policy, not the devices: it runs at simulator speed, without the
    emulator latency and fault model the training devices may have (a time-scaled evaluation
    of 64 episodes would otherwise hold the run for minutes, and faults would bias it)."""
    quiet = cfg.model_copy(deep=True)
    quiet.env.phonesim.latency.enabled = False
    worker = Worker(
        phonesim_devices(quiet, min(cfg.train.devices, episodes), offset=EVAL_DEVICE_OFFSET),
        copy.deepcopy(policy),
        TaskSampler(tasks, cfg.seed + 17),
        worker_id="eval",
        seed=cfg.seed + 17,
        greedy=greedy,
    )
    trajectories = worker.collect(episodes)[:episodes]
    per_template: dict[str, list[bool]] = {}
    for trajectory in trajectories:
        template = str(trajectory.task.spec.get("template", trajectory.task.suite))
        per_template.setdefault(template, []).append(trajectory.success)
    return EvalResult(
        success_rate=float(np.mean([t.success for t in trajectories])),
        episodes=len(trajectories),
        mean_steps=float(np.mean([len(t) for t in trajectories])),
        per_template={k: float(np.mean(v)) for k, v in sorted(per_template.items())},
    )
