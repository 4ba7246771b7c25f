"""Run one episode of a scripted agent on a device and return it as a :class:`Trajectory`.

``distrl play`` uses it; learned policies run through :class:`~distrl.runtime.worker.Worker`.
Both record steps through :class:`~distrl.runtime.episode.EpisodeInProgress`. A
:class:`~distrl.core.faults.DeviceFault` is not caught here: the caller restarts the device and
drops the partial episode, so a half episode is never returned.
"""

from __future__ import annotations

import time

from distrl.agents.base import Agent
from distrl.core.task import Task
from distrl.core.trajectory import Trajectory
from distrl.envs.protocol import DeviceEnv
from distrl.runtime.episode import EpisodeInProgress


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
    started_at = time.time()
    episode = EpisodeInProgress(task, env.reset(task), started_at=started_at)
    done = False
    while not done:
        action = agent.act(episode.observation)
        done = episode.record(action, env.step(action), policy_version=policy_version)
    return episode.finish(worker_id, device_id)
