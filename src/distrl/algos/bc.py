"""Behaviour cloning: the warm start (docs/design.md §7) and the filtered-BC baseline's loss.

DigiRL and DistRL start RL from a weak pretrained agent rather than from scratch; here that agent
is the small policy cloned from noisy-oracle demonstrations for a limited number of steps, so it
solves some tasks and fails many (the "weak warm start").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from distrl.core.action import Action
from distrl.core.observation import Observation
from distrl.core.trajectory import Trajectory
from distrl.policies.base import Policy

#: Rewrites one cloned (observation, action) step with the cloning RNG.
StepAugment = Callable[[Observation, Action, np.random.Generator], tuple[Observation, Action]]


def bc_loss(policy: Policy, pairs: Sequence[tuple[Observation, Action]]) -> torch.Tensor:
    """Mean negative log-likelihood of the demonstrated actions the policy can represent."""
    observations = [obs for obs, _ in pairs]
    actions = [action for _, action in pairs]
    logprobs, representable = policy.action_logprobs(observations, actions)
    mask = representable.float()
    return -(logprobs * mask).sum() / mask.sum().clamp(min=1.0)


def behaviour_clone(
    policy: Policy,
    demonstrations: Sequence[Trajectory],
    *,
    steps: int,
    batch_size: int,
    lr: float,
    seed: int,
    augment: StepAugment | Sequence[StepAugment] | None = None,
) -> list[float]:
    """Fit ``policy`` to the successful demonstrations' steps for ``steps`` Adam steps; returns
    the loss curve. Failed demonstrations are left out (filtered BC). ``augment`` rewrites each
    drawn step with the cloning RNG (e.g. :class:`~distrl.algos.copy_augmentation.CopySwap`);
    several are applied in the order given."""
    pairs = [(s.observation, s.action) for t in demonstrations if t.success for s in t.steps]
    if not pairs:
        raise ValueError("no successful demonstration to clone")
    optimizer = torch.optim.Adam([p for p in policy.parameters() if p.requires_grad], lr=lr)
    rng = np.random.default_rng(seed)
    augments = [] if augment is None else [augment] if callable(augment) else list(augment)
    losses = []
    for _ in range(steps):
        batch = [pairs[i] for i in rng.integers(len(pairs), size=min(batch_size, len(pairs)))]
        for rewrite in augments:
            batch = [rewrite(observation, action, rng) for observation, action in batch]
        loss = bc_loss(policy, batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    return losses
