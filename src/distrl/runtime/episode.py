"""An episode in progress on one device: the steps so far, and the finished trajectory at the end.

This is the one place a :class:`~distrl.core.trajectory.Step` is built: the lockstep worker, the
concurrent worker and scripted play all record steps through :meth:`EpisodeInProgress.record`.
Each step keeps the observation the actor saw, its action, the behaviour log-prob and entropy
(NaN for a scripted agent, which has none), the weights version that acted and the seconds the
device took.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from distrl.core.action import Action
from distrl.core.observation import Observation
from distrl.core.task import Task
from distrl.core.trajectory import Step, Trajectory

#: What a device's ``step`` returns: (observation, reward, done, info).
StepResult = tuple[Observation, float, bool, dict[str, Any]]


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
        result: StepResult,
        *,
        logprob: float = float("nan"),
        entropy: float = float("nan"),
        policy_version: int = 0,
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
        """The finished episode under a fresh id, stamped with the time it ended."""
        return Trajectory(
            task=self.task,
            steps=self.steps,
            success=self.success,
            worker_id=worker_id,
            device_id=device_id,
            trajectory_id=uuid.uuid4().hex,
            started_at=self.started_at,
            finished_at=time.time(),
            final_observation=self.observation,
        )
