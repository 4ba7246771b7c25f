"""A batch of replayed step windows as padded ``[B, T]`` tensors, scored by the learner's policy.

Every algorithm (A-RIDE, DigiRL, filtered BC) starts an update the same way: run the policy on
all stored observations and actions of the batch in one call, then lay the per-step results out
as ``[B, T]`` rows (one window per row, padded after a short window's end) so that the targets in
:mod:`distrl.algos.returns` can run along the time axis. Doing it once here keeps the three
losses from drifting apart in how they mask padding and unrepresentable actions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from distrl.algos.step_window import StepWindow
from distrl.core.observation import Observation
from distrl.policies.base import Policy


def padded(rows: Sequence[Sequence[float]], length: int) -> torch.Tensor:
    """Rows of unequal length as a ``[B, length]`` float tensor padded with zeros."""
    out = torch.zeros(len(rows), length, dtype=torch.float32)
    for index, row in enumerate(rows):
        out[index, : len(row)] = torch.tensor(row, dtype=torch.float32)
    return out


@torch.no_grad()
def bootstrap_values(policy: Policy, windows: Sequence[StepWindow]) -> torch.Tensor:
    """V(s_T) of the state after each window (NaN where the episode ended inside it)."""
    values = torch.full((len(windows),), float("nan"))
    present: list[tuple[int, Observation]] = [
        (i, w.bootstrap_observation)
        for i, w in enumerate(windows)
        if w.bootstrap_observation is not None
    ]
    if present:
        values[[i for i, _ in present]] = policy.value([obs for _, obs in present]).float()
    return values


@dataclass
class WindowBatch:
    """The policy's view of ``B`` windows; every tensor is ``[B, T]`` and 0 on padding.

    ``logprobs``, ``entropies`` and ``values`` carry gradients; the rest are data.
    """

    mask: torch.Tensor
    logprobs: torch.Tensor
    entropies: torch.Tensor
    values: torch.Tensor
    #: 1 where the policy can express the stored action (only those steps train the actor).
    representable: torch.Tensor
    #: The acting policy's log-probs; NaN for scripted demonstrations, which have none.
    behaviour_logprobs: torch.Tensor
    rewards: torch.Tensor
    dones: torch.Tensor
    #: The policy's per-head entropies (detached; NaN on padding and where a head had no choice).
    head_entropies: dict[str, torch.Tensor] = field(default_factory=dict)

    @property
    def valid(self) -> torch.Tensor:
        return self.mask.bool()

    @property
    def steps(self) -> torch.Tensor:
        """Number of valid steps (a scalar tensor, at least 1), the denominator of step means."""
        return self.mask.sum().clamp(min=1.0)

    def step_mean(self, x: torch.Tensor) -> torch.Tensor:
        """Mean of ``x`` over the valid steps."""
        return (x * self.mask).sum() / self.steps

    def head_entropy_means(self) -> dict[str, float]:
        """``entropy_<head>``: each head's mean entropy over the steps where it had a choice
        (heads with none in the whole batch are left out rather than logged as 0)."""
        means = {}
        for head, entropy in self.head_entropies.items():
            present = ~torch.isnan(entropy)
            if present.any():
                means[f"entropy_{head}"] = float(entropy[present].mean())
        return means


def score_windows(policy: Policy, windows: Sequence[StepWindow]) -> WindowBatch:
    """Evaluate ``policy`` on every step of ``windows`` (one batched call) as a WindowBatch."""
    if not windows:
        raise ValueError("score_windows: empty batch of windows")
    batch, length = len(windows), max(len(w) for w in windows)
    mask = padded([[1.0] * len(w) for w in windows], length)
    valid = mask.bool()
    observations = [obs for w in windows for obs in w.observations]
    actions = [action for w in windows for action in w.actions]
    scores = policy.score_actions(observations, actions)

    def scatter(flat: torch.Tensor, pad: float = 0.0) -> torch.Tensor:
        return torch.full((batch, length), pad).masked_scatter(valid, flat.float())

    return WindowBatch(
        mask=mask,
        logprobs=scatter(scores.logprobs),
        entropies=scatter(scores.entropies),
        values=scatter(scores.values),
        representable=scatter(scores.representable.float()),
        behaviour_logprobs=padded([w.behaviour_logprobs for w in windows], length),
        rewards=padded([w.rewards for w in windows], length),
        dones=padded([[float(d) for d in w.dones] for w in windows], length),
        head_entropies={
            head: scatter(entropy, pad=float("nan"))
            for head, entropy in scores.head_entropies.items()
        },
    )
