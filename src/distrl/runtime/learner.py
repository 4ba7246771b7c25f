"""The learner: owns the target policy, the optimiser and the replay; trains and publishes weights.

Data flows one way: finished trajectories come in (``ingest``), are cut into step windows and
stored in the prioritized replay; ``update`` samples windows, applies the algorithm's loss and
writes fresh priorities back; ``weights`` hands the current parameters and their version to
workers. Staleness (learner version minus the version that acted) is bounded: a window older than
``max_staleness`` is dropped when it arrives or when it is sampled, and counted, never silently
used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from distrl.algos.registry import Algorithm
from distrl.algos.step_window import StepWindow, cut_windows
from distrl.core.trajectory import Trajectory
from distrl.policies.base import Policy
from distrl.replay import PrioritizedSampler, ReplayBuffer, RingStorage, UniformSampler


@dataclass
class LearnerCounters:
    updates: int = 0
    windows_added: int = 0
    stale_dropped: int = 0
    trajectories: int = 0
    #: Trajectories the algorithm did not admit (filtered BC: the failures).
    not_admitted: int = 0


class Learner:
    def __init__(
        self,
        policy: Policy,
        algorithm: Algorithm,
        *,
        window: int,
        batch_size: int,
        lr: float,
        grad_clip: float,
        replay_capacity: int,
        max_staleness: int,
        seed: int = 0,
    ):
        self.policy = policy
        self.algorithm = algorithm
        self.window = window
        self.batch_size = batch_size
        self.grad_clip = grad_clip
        self.max_staleness = max_staleness
        parameters = [p for p in policy.parameters() if p.requires_grad]
        self.optimizer = torch.optim.Adam(parameters, lr=lr)
        sampler = (
            PrioritizedSampler(replay_capacity)
            if algorithm.prioritized
            else UniformSampler(replay_capacity)
        )
        self.replay: ReplayBuffer[StepWindow] = ReplayBuffer(RingStorage(replay_capacity), sampler)
        self.rng = np.random.default_rng(seed)
        self.counters = LearnerCounters()

    @property
    def version(self) -> int:
        return self.policy.version

    def staleness(self, window: StepWindow) -> int:
        return self.version - min(window.policy_versions)

    def ingest(self, trajectories: Sequence[Trajectory]) -> int:
        """Cut finished trajectories the algorithm admits into windows and add the fresh-enough
        ones to the replay; returns the number of windows added."""
        added = 0
        for trajectory in trajectories:
            self.counters.trajectories += 1
            if not self.algorithm.admits(trajectory):
                self.counters.not_admitted += 1
                continue
            for window in cut_windows(
                trajectory,
                self.window,
                self.algorithm.shaping,
                keep_screenshots=getattr(self.policy, "uses_screenshots", True),
            ):
                if self.staleness(window) > self.max_staleness:
                    self.counters.stale_dropped += 1
                    continue
                self.replay.add(window)
                added += 1
        self.counters.windows_added += added
        return added

    def _sample(self) -> tuple[list[StepWindow], np.ndarray, torch.Tensor]:
        """A batch with stale windows removed (their priority goes to zero: never drawn again)."""
        batch = self.replay.sample(self.batch_size, self.rng)
        is_fresh = np.array([self.staleness(w) <= self.max_staleness for w in batch.items])
        fresh = np.flatnonzero(is_fresh)
        stale_slots = batch.slots[~is_fresh]
        if stale_slots.size:
            self.counters.stale_dropped += int(stale_slots.size)
            self.replay.update_priorities(stale_slots, np.zeros(stale_slots.size))
        weights = torch.as_tensor(batch.weights[fresh], dtype=torch.float32)
        return [batch.items[i] for i in fresh], batch.slots[fresh], weights

    def update(self) -> dict[str, float]:
        """One gradient step of the algorithm on a replayed batch; bumps the weights version."""
        windows, slots, weights = self._sample()
        if not windows:
            return {"skipped_stale_batch": 1.0}
        loss, priorities, metrics = self.algorithm.loss_fn(self.policy, windows, weights)
        self.optimizer.zero_grad()
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(
            [p for group in self.optimizer.param_groups for p in group["params"]], self.grad_clip
        )
        self.optimizer.step()
        self.replay.update_priorities(slots, priorities.detach().cpu().numpy())
        self.policy.version += 1
        self.counters.updates += 1
        staleness = [self.staleness(w) - 1 for w in windows]
        return {
            **metrics,
            "loss": float(loss.detach()),
            "grad_norm": float(grad_norm),
            "staleness_mean": float(np.mean(staleness)),
            "staleness_max": float(np.max(staleness)),
            "priority_mean": float(priorities.mean()),
        }

    def weights(self) -> tuple[dict[str, torch.Tensor], int]:
        """The parameters workers should act with, and their version."""
        return {k: v.detach().clone() for k, v in self.policy.state_dict().items()}, self.version

    def state_dict(self) -> dict[str, object]:
        """Everything a resumed run needs except the replay (rebuilt from the trajectory store)."""
        return {
            "policy": self.policy.state_dict(),
            "version": self.version,
            "optimizer": self.optimizer.state_dict(),
            "counters": vars(self.counters).copy(),
            "rng": self.rng.bit_generator.state,
        }

    def load_state_dict(self, state: dict[str, object]) -> None:
        self.policy.load_state_dict(state["policy"])  # type: ignore[arg-type]
        self.policy.version = int(state["version"])  # type: ignore[arg-type]
        self.optimizer.load_state_dict(state["optimizer"])  # type: ignore[arg-type]
        self.counters = LearnerCounters(**state["counters"])  # type: ignore[arg-type]
        self.rng.bit_generator.state = state["rng"]
