"""The learner: owns the target policy and its optimiser; turns replayed batches into updates.

Data flows one way: the replay (:mod:`distrl.runtime.replay_service`) hands over a batch of step
windows, :meth:`Learner.update` applies the algorithm's loss and returns the fresh priorities for
the replay to write back, and :meth:`Learner.weights` hands the current parameters and their
version to workers. Each update bumps the version, so staleness is measured in updates.

With ``average_decay`` > 0 the learner also keeps an exponential moving average of the weights
it publishes (Polyak averaging, ``train.averaged_policy_decay``, docs/design.md §7.15):
:meth:`Learner.deployed_weights` hands it to evaluation and to the saved policy, while workers
keep acting with the newest weights, whose log-probs are the ones the replay records.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from distrl.algos.registry import Algorithm
from distrl.algos.step_window import StepWindow
from distrl.policies.base import Policy
from distrl.runtime.ddp import ShardStep, merge_steps, synchronized_step
from distrl.runtime.replay_service import ReplayBatch, ReplayService


def tensor_bytes(state: dict[str, torch.Tensor]) -> int:
    """Bytes of the tensors in ``state``."""
    return sum(t.numel() * t.element_size() for t in state.values())


def published_state(policy: Policy) -> dict[str, torch.Tensor]:
    """The policy's tensors that a learner publishes, not copied: only the trainable ones when
    the policy says which (a VLM's LoRA adapters and critic, not its frozen base)."""
    trainable = getattr(policy, "trainable_state_dict", None)
    return trainable() if callable(trainable) else policy.state_dict()


class Learner:
    def __init__(
        self,
        policy: Policy,
        algorithm: Algorithm,
        *,
        lr: float,
        grad_clip: float,
        accumulation: int = 1,
        average_decay: float = 0.0,
    ):
        if not 0.0 <= average_decay < 1.0:
            raise ValueError(f"average_decay must be in [0, 1), got {average_decay}")
        self.policy = policy
        self.algorithm = algorithm
        self.grad_clip = grad_clip
        #: Micro-batches per update (gradient accumulation; see :mod:`distrl.runtime.ddp`).
        self.accumulation = accumulation
        self.parameters = [p for p in policy.parameters() if p.requires_grad]
        self.optimizer = torch.optim.Adam(self.parameters, lr=lr)
        #: ``train.lr``: what :meth:`set_lr_scale` scales.
        self.base_lr = lr
        self.updates = 0
        self.average_decay = average_decay
        #: The moving average of :meth:`weights` (None: off, or no update yet), and how many
        #: updates it has taken in.
        self.average: dict[str, torch.Tensor] | None = None
        self.averaged_updates = 0

    @property
    def version(self) -> int:
        return self.policy.version

    def set_lr_scale(self, scale: float) -> None:
        """Train at ``base_lr * scale`` from the next update on (``train.lr_schedule``,
        :mod:`distrl.runtime.lr_schedule`)."""
        for group in self.optimizer.param_groups:
            group["lr"] = self.base_lr * scale

    def update(self, batch: ReplayBatch) -> tuple[np.ndarray, dict[str, float]]:
        """One gradient step on ``batch``; returns the windows' new priorities and metrics."""
        acted = self.version
        weights = torch.tensor(batch.weights, dtype=torch.float32)  # Ray's arrays are read-only
        step = self.step(batch.windows, weights)
        return self.report(batch, acted, [step])

    def step(
        self,
        windows: Sequence[StepWindow],
        weights: torch.Tensor,
        *,
        total_steps: int | None = None,
        world_size: int = 1,
    ) -> ShardStep:
        """This process's part of one update: ``windows`` of a batch of ``total_steps`` steps
        spread over ``world_size`` processes of a group (see :mod:`distrl.runtime.ddp`)."""
        loss_fn = self.algorithm.loss_for_update(self.updates)
        if self.average_decay and self.average is None:
            # The average starts from the weights before its first update (a warm start's clone).
            self.average, self.averaged_updates = self.weights()[0], 0
        step = synchronized_step(
            lambda micro, w: loss_fn(self.policy, micro, w),
            self.parameters,
            self.optimizer,
            windows,
            weights,
            accumulation=self.accumulation,
            grad_clip=self.grad_clip,
            total_steps=total_steps,
            world_size=world_size,
        )
        self.policy.version += 1
        self.updates += 1
        self._update_average()
        return step

    def _update_average(self) -> None:
        """Move the average toward the weights just trained. The decay ramps up as
        ``(1 + n) / (10 + n)`` after ``n`` averaged updates until it reaches ``average_decay``,
        so an early evaluation is not an average dominated by the start."""
        if self.average is None:
            return
        self.averaged_updates += 1
        n = self.averaged_updates
        decay = min(self.average_decay, (1.0 + n) / (10.0 + n))
        for name, value in published_state(self.policy).items():
            kept = self.average[name]
            if kept.is_floating_point():
                kept.lerp_(value.detach(), 1.0 - decay)
            else:
                kept.copy_(value)

    @staticmethod
    def report(
        batch: ReplayBatch, acted_version: int, steps: Sequence[ShardStep]
    ) -> tuple[np.ndarray, dict[str, float]]:
        """The batch's priorities and the update's metrics from every process's part (rank
        order); staleness is measured against ``acted_version``, the version before the step,
        over the batch's replayed windows only: demonstrations and success-replay windows (slot
        -1) are exempt from the staleness bound by design, and counting them made the figures
        track the update count (a demonstration acted by version 0 is as old as the learner)."""
        priorities, metrics = merge_steps(steps)
        staleness = [
            acted_version - min(window.policy_versions)
            for window, slot in zip(batch.windows, batch.slots, strict=True)
            if slot >= 0
        ] or [0]
        return priorities, {
            **metrics,
            "staleness_mean": float(np.mean(staleness)),
            "staleness_max": float(np.max(staleness)),
            "priority_mean": float(priorities.mean()),
        }

    def weights(self) -> tuple[dict[str, torch.Tensor], int]:
        """The parameters workers should act with (a copy of :func:`published_state`), and
        their version."""
        state = published_state(self.policy)
        return {k: v.detach().clone() for k, v in state.items()}, self.version

    def deployed_weights(self) -> tuple[dict[str, torch.Tensor], int]:
        """The weights a run evaluates and saves for ``distrl eval``: the moving average when
        ``average_decay`` is on and an update has run, else :meth:`weights`. The version is the
        newest update's (the average includes it)."""
        if self.average is None:
            return self.weights()
        return {k: v.clone() for k, v in self.average.items()}, self.version

    def weights_figures(self) -> dict[str, int]:
        """Bytes of one weights publication and of all the policy's parameters."""
        return {
            "published_weights_bytes": tensor_bytes(self.weights()[0]),
            "policy_parameter_bytes": sum(
                p.numel() * p.element_size() for p in self.policy.parameters()
            ),
        }

    def state_dict(self) -> dict[str, object]:
        state: dict[str, object] = {
            "policy": self.policy.state_dict(),
            "version": self.version,
            "optimizer": self.optimizer.state_dict(),
            "updates": self.updates,
        }
        if self.average is not None:
            state["average"] = {k: v.clone() for k, v in self.average.items()}
            state["averaged_updates"] = self.averaged_updates
        return state

    def load_state_dict(self, state: dict[str, object]) -> None:
        """Restore :meth:`state_dict`'s output. A checkpoint without an average (written with
        averaging off) restarts it from the restored weights at the next update."""
        self.policy.load_state_dict(state["policy"])  # type: ignore[arg-type]
        self.policy.version = int(state["version"])  # type: ignore[call-overload]
        self.optimizer.load_state_dict(state["optimizer"])  # type: ignore[arg-type]
        self.updates = int(state["updates"])  # type: ignore[call-overload]
        average = state.get("average")
        if self.average_decay and isinstance(average, dict):
            self.average = {k: v.clone() for k, v in average.items()}
            self.averaged_updates = int(state.get("averaged_updates", 0))  # type: ignore[call-overload]
        else:
            self.average, self.averaged_updates = None, 0


def update_from_replay(
    learner: Learner, replay: ReplayService, batch_size: int
) -> dict[str, float] | None:
    """One learner update on a batch from ``replay``, priorities written back; returns its
    metrics, ``{}`` when every window drawn was stale (nothing trained), None while the replay
    has no batch for the learner."""
    batch = replay.sample(batch_size, learner.version)
    if batch is None:
        return None
    if not batch.windows:
        return {}
    priorities, metrics = learner.update(batch)
    replay.update_priorities(batch.slots, batch.generations, priorities)
    return metrics


def run_updates(
    update_once: Callable[[], dict[str, float] | None],
    max_updates: int,
    max_seconds: float = math.inf,
) -> dict[str, Any]:
    """Up to ``max_updates`` updates within ``max_seconds`` (both runtimes' learners train in
    such chunks). ``update_once`` returns an update's metrics, ``{}`` for an all-stale batch (it
    does not count; at most ``max_updates`` of them are tried again) or None when the replay has
    no batch now (the chunk ends). Returns the count and the mean metrics, with
    ``updates_per_s``."""
    started = time.monotonic()
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}  # per metric: some come only from batches that have them
    done = stale = 0
    while done < max_updates and stale <= max_updates:
        if time.monotonic() - started >= max_seconds:
            break
        metrics = update_once()
        if metrics is None:
            break
        if not metrics:
            stale += 1
            continue
        done += 1
        for key, value in metrics.items():
            sums[key] = sums.get(key, 0.0) + value
            counts[key] = counts.get(key, 0) + 1
    means = {key: value / counts[key] for key, value in sums.items()}
    if done:
        means["updates_per_s"] = done / max(time.monotonic() - started, 1e-9)
    return {"updates": done, "metrics": means}
