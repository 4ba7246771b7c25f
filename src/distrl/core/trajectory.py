"""Steps and trajectories: what workers send to the replay and what the store keeps on disk."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from distrl.core.action import Action
from distrl.core.observation import Observation
from distrl.core.task import Task

#: ``Trajectory.metadata`` key of the learner's weights version when the trajectory reached the
#: replay: ``learner_version - step.policy_version`` is how stale the acting policy was.
LEARNER_VERSION_KEY = "learner_version"


@dataclass
class Step:
    """One transition. ``behaviour_logprob`` and ``entropy`` are the acting policy's (NaN for
    scripted agents); ``policy_version`` is the weights version that acted, so the learner can
    measure staleness; ``action_text`` is the raw text a text policy emitted (empty otherwise)."""

    observation: Observation
    action: Action
    reward: float
    done: bool
    behaviour_logprob: float = float("nan")
    entropy: float = float("nan")
    policy_version: int = 0
    action_text: str = ""
    step_seconds: float = 0.0


@dataclass
class Trajectory:
    """One finished episode on one device."""

    task: Task
    steps: list[Step]
    success: bool
    worker_id: str = "worker-0"
    device_id: str = "device-0"
    trajectory_id: str = ""
    started_at: float = 0.0
    finished_at: float = 0.0
    #: The observation after the last action (the final screen), if the backend produced one.
    final_observation: Observation | None = None
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def total_reward(self) -> float:
        return float(sum(step.reward for step in self.steps))

    def without_screenshots(self) -> Trajectory:
        """This trajectory with every screenshot replaced by a 1x1 placeholder: what workers
        send and learners keep for a policy that reads only the element list (a screen is
        0.78 MB; a 10-step episode would otherwise move ~8 MB through the object store)."""
        return self.with_observations(Observation.without_screenshot)

    def with_observations(self, change: Callable[[Observation], Observation]) -> Trajectory:
        """This trajectory with ``change`` applied to every observation (the final one too)."""
        final = self.final_observation
        return replace(
            self,
            steps=[replace(s, observation=change(s.observation)) for s in self.steps],
            final_observation=change(final) if final is not None else None,
        )

    def __len__(self) -> int:
        return len(self.steps)
