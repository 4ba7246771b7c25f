"""Filtered behaviour cloning: imitate the agent's own successful episodes (the simplest baseline).

No critic and no importance ratio: only successful trajectories are admitted to the replay (see
:func:`distrl.algos.registry.build_algorithm`), and the loss is the negative log-likelihood of
their actions. Any method that claims to learn from failures too must beat this.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from distrl.algos.step_window import StepWindow
from distrl.algos.window_batch import score_windows
from distrl.policies.base import Policy


def filtered_bc_loss(
    policy: Policy, windows: Sequence[StepWindow]
) -> tuple[torch.Tensor, dict[str, float]]:
    """Mean NLL of the representable actions of successful windows (failed ones weigh 0)."""
    scored = score_windows(policy, windows)
    success = torch.tensor([float(w.trajectory_success) for w in windows]).unsqueeze(1)
    keep = scored.mask * scored.representable * success
    loss = -(keep * scored.logprobs).sum() / keep.sum().clamp(min=1.0)
    metrics = {
        "policy_loss": float(loss.detach()),
        "entropy": float(scored.step_mean(scored.entropies).detach()),
        "kept_fraction": float(keep.sum() / scored.steps),
        **scored.head_entropy_means(),
    }
    return loss, metrics


def filtered_bc_loss_fn():
    """The learner's loss callable for filtered BC (uniform replay: priorities are ones)."""

    def loss_fn(
        policy: Policy, windows: Sequence[StepWindow], weights: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, dict[str, float]]:
        loss, metrics = filtered_bc_loss(policy, windows)
        return loss, torch.ones(len(windows)), metrics

    return loss_fn
