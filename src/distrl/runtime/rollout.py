"""Run one episode of a scripted agent on a device and return it as a :class:`Trajectory`.

``distrl play`` uses it; learned policies run through :class:`~distrl.runtime.worker.Worker`,
which steps many devices in lockstep and shares :func:`finished_trajectory`. A
:class:`~distrl.envs.protocol.DeviceFault` is not caught here: the caller restarts the device and
drops the partial episode, so a half episode is never returned.
"""

from __future__ import annotations

import time
import uuid

from distrl.agents.base import Agent
from distrl.core.observation import Observation
from distrl.core.task import Task
from distrl.core.trajectory import Step, Trajectory
from distrl.envs.protocol import DeviceEnv


def run_episode(
    env: DeviceEnv,
    agent: Agent,
    task: Task,
    *,
    worker_id: str = "worker-0",
    device_id: str = "device-0",
    policy_version: int = 0,
) -> Trajectory:
    """Play ``task`` to the end (success, declared end or horizon) and return the trajectory."""
    started = time.time()
    observation = env.reset(task)
    steps: list[Step] = []
    success = False
    done = False
    while not done:
        action = agent.act(observation)
        next_observation, reward, done, info = env.step(action)
        steps.append(
            Step(
                observation=observation,
                action=action,
                reward=reward,
                done=done,
                policy_version=policy_version,
                step_seconds=float(info.get("device_seconds", 0.0)),
            )
        )
        success = bool(info.get("success", reward > 0))
        observation = next_observation
    return finished_trajectory(task, steps, success, worker_id, device_id, started, observation)


def finished_trajectory(
    task: Task,
    steps: list[Step],
    success: bool,
    worker_id: str,
    device_id: str,
    started_at: float,
    final_observation: Observation,
) -> Trajectory:
    """A finished episode under a fresh id, stamped with the time it ended."""
    return Trajectory(
        task=task,
        steps=steps,
        success=success,
        worker_id=worker_id,
        device_id=device_id,
        trajectory_id=uuid.uuid4().hex,
        started_at=started_at,
        finished_at=time.time(),
        final_observation=final_observation,
    )
