"""The learner: owns the target policy and its optimiser; turns replayed batches into updates.

Data flows one way: the replay (:mod:`distrl.runtime.replay_service`) hands over a batch of step
windows, :meth:`Learner.update` applies the algorithm's loss and returns the fresh priorities for
the replay to write back, and :meth:`Learner.weights` hands the current parameters and their
version to workers. Each update bumps the version, so staleness is measured in updates.
"""

from __future__ import annotations

import numpy as np
import torch

from distrl.algos.registry import Algorithm
from distrl.policies.base import Policy
from distrl.runtime.ddp import accumulate_gradients
from distrl.runtime.replay_service import ReplayBatch


def tensor_bytes(state: dict[str, torch.Tensor]) -> int:
    """Bytes of the tensors in ``state``."""
    return sum(t.numel() * t.element_size() for t in state.values())


class Learner:
    def __init__(
        self,
        policy: Policy,
        algorithm: Algorithm,
        *,
        lr: float,
        grad_clip: float,
        accumulation: int = 1,
    ):
        self.policy = policy
        self.algorithm = algorithm
        self.grad_clip = grad_clip
        #: Micro-batches per update (gradient accumulation; see :mod:`distrl.runtime.ddp`).
        self.accumulation = accumulation
        self.parameters = [p for p in policy.parameters() if p.requires_grad]
        self.optimizer = torch.optim.Adam(self.parameters, lr=lr)
        self.updates = 0

    @property
    def version(self) -> int:
        return self.policy.version

    def update(self, batch: ReplayBatch) -> tuple[np.ndarray, dict[str, float]]:
        """One gradient step on ``batch``; returns the windows' new priorities and metrics."""
        weights = torch.tensor(
            batch.weights, dtype=torch.float32
        )  # a copy: Ray's arrays are read-only
        self.optimizer.zero_grad()
        if self.accumulation > 1:
            loss, priorities, metrics = accumulate_gradients(
                lambda windows, w: self.algorithm.loss_fn(self.policy, windows, w),
                batch.windows,
                weights,
                self.accumulation,
            )
        else:
            loss, priorities, metrics = self.algorithm.loss_fn(self.policy, batch.windows, weights)
            loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.parameters, self.grad_clip)
        self.optimizer.step()
        staleness = [self.version - min(w.policy_versions) for w in batch.windows]
        self.policy.version += 1
        self.updates += 1
        priorities_np = priorities.detach().cpu().numpy()
        return priorities_np, {
            **metrics,
            "loss": float(loss.detach()),
            "grad_norm": float(grad_norm),
            "staleness_mean": float(np.mean(staleness)),
            "staleness_max": float(np.max(staleness)),
            "priority_mean": float(priorities_np.mean()),
        }

    def weights(self) -> tuple[dict[str, torch.Tensor], int]:
        """The parameters workers should act with, and their version: only the trainable ones
        when the policy says which (a VLM's LoRA adapters and critic, not its frozen base)."""
        trainable = getattr(self.policy, "trainable_state_dict", None)
        state = trainable() if callable(trainable) else self.policy.state_dict()
        return {k: v.detach().clone() for k, v in state.items()}, self.version

    def weights_figures(self) -> dict[str, int]:
        """Bytes of one weights publication and of all the policy's parameters."""
        return {
            "published_weights_bytes": tensor_bytes(self.weights()[0]),
            "policy_parameter_bytes": sum(
                p.numel() * p.element_size() for p in self.policy.parameters()
            ),
        }

    def state_dict(self) -> dict[str, object]:
        return {
            "policy": self.policy.state_dict(),
            "version": self.version,
            "optimizer": self.optimizer.state_dict(),
            "updates": self.updates,
        }

    def load_state_dict(self, state: dict[str, object]) -> None:
        self.policy.load_state_dict(state["policy"])  # type: ignore[arg-type]
        self.policy.version = int(state["version"])  # type: ignore[call-overload]
        self.optimizer.load_state_dict(state["optimizer"])  # type: ignore[arg-type]
        self.updates = int(state["updates"])  # type: ignore[call-overload]
