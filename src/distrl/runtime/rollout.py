"""Run one episode of an agent on a device and return it as a :class:`Trajectory`.

This is the innermost loop of every worker. A :class:`~distrl.envs.protocol.DeviceFault` is not
caught here: the caller restarts the device and drops the partial episode, so a half episode is
never returned.
"""

from __future__ import annotations

import time
import uuid

from distrl.agents.base import Agent
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
    return Trajectory(
        task=task,
        steps=steps,
        success=success,
        worker_id=worker_id,
        device_id=device_id,
        trajectory_id=uuid.uuid4().hex,
        started_at=started,
        finished_at=time.time(),
        final_observation=observation,
    )
