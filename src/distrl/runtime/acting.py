"""What every worker shares, whatever drives its devices: what acts for it (its own copy of the
policy, or with ``inference.mode=service`` a client of the inference service: docs/design.md
§2.1) and how it acts.

A worker acts greedily (the most likely action: evaluation) or samples from a generator seeded
for that worker alone (exploration), so a collection is reproducible given the seed and no two
workers share a random stream. It tags the trajectories it hands out with its ``worker_id`` and
takes newer weights between steps (:meth:`ActingWorker.set_weights`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import torch

from distrl.core.observation import Observation
from distrl.core.task import Task
from distrl.policies.base import Policy, PolicyOutput

__all__ = ["ActingWorker", "ActionSource"]


class ActionSource(Protocol):
    """What a worker acts with: a :class:`Policy` or an
    :class:`~distrl.runtime.inference.service.InferenceClient`. Each output carries the weights
    version that acted; ``version`` is the latest one."""

    version: int

    def act(
        self,
        observations: Sequence[Observation],
        *,
        greedy: bool = False,
        generator: torch.Generator | None = None,
    ) -> PolicyOutput: ...


class ActingWorker:
    """The policy side of a worker; :class:`~distrl.runtime.worker.Worker` and
    :class:`~distrl.runtime.async_worker.AsyncWorker` add the devices."""

    def __init__(
        self,
        policy: ActionSource,
        next_task: Callable[[], Task],
        *,
        worker_id: str,
        seed: int,
        greedy: bool,
    ):
        self.policy = policy
        #: Picks each episode's task.
        self.next_task = next_task
        self.worker_id = worker_id
        #: Act with the most likely action (evaluation) instead of sampling (exploration).
        self.greedy = greedy
        self.generator = torch.Generator().manual_seed(seed)

    def act(self, observations: Sequence[Observation]) -> PolicyOutput:
        """The policy's actions for ``observations``, one batch, chosen the worker's way."""
        return self.policy.act(observations, greedy=self.greedy, generator=self.generator)

    def set_weights(self, state_dict: dict[str, torch.Tensor], version: int) -> None:
        """Swap in newer weights (between steps; episodes in flight continue under them and the
        steps record which version acted). Only a worker with its own policy copy has any."""
        if not isinstance(self.policy, Policy):
            raise TypeError("this worker acts through the inference service, which holds weights")
        self.policy.load_state_dict(state_dict)
        self.policy.version = version
