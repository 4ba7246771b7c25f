"""An episode in progress on one device: the steps so far, and the finished trajectory at the end.

Both workers (lockstep and concurrent) record steps the same way: each step keeps the observation
the policy saw, its action, the behaviour log-prob and entropy, and the weights version that acted.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from distrl.core.action import Action
from distrl.core.observation import Observation
from distrl.core.task import Task
from distrl.core.trajectory import Step, Trajectory
from distrl.runtime.rollout import finished_trajectory


@dataclass
class EpisodeInProgress:
    task: Task
    observation: Observation
    started_at: float = field(default_factory=time.time)
    steps: list[Step] = field(default_factory=list)
    success: bool = False

    def record(
        self,
        action: Action,
        result: tuple[Observation, float, bool, dict[str, Any]],
        *,
        logprob: float,
        entropy: float,
        policy_version: int,
    ) -> bool:
        """Append the step ``action`` made (``result`` is the device's step return); returns
        whether the episode is over."""
        observation, reward, done, info = result
        self.steps.append(
            Step(
                observation=self.observation,
                action=action,
                reward=reward,
                done=done,
                behaviour_logprob=logprob,
                entropy=entropy,
                policy_version=policy_version,
                step_seconds=float(info.get("device_seconds", 0.0)),
            )
        )
        self.observation = observation
        self.success = bool(info.get("success", reward > 0))
        return done

    def finish(self, worker_id: str, device_id: str) -> Trajectory:
        return finished_trajectory(
            self.task,
            self.steps,
            self.success,
            worker_id,
            device_id,
            self.started_at,
            self.observation,
        )
