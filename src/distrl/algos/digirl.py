"""The DigiRL baseline (Bai et al., 2024), the synchronous method A-RIDE is measured against.

DigiRL trains on the binary success reward only (no shaping) with three pieces, all here in one
update of a batch of replayed windows (docs/design.md §7):

1. **Critics on Monte-Carlo success.** The step value V(s_t) regresses onto the discounted
   success of its episode, gamma^(steps left) * R; the instruction-level value V(instruction, s0)
   is a logistic regression of R from the episode's first observation.
2. **Curriculum.** Episodes are ranked by how much better they went than expected, R - V_I(s0);
   only windows of episodes in the batch's top ``top_fraction`` train the actor, so the actor
   learns from tasks at the frontier of its ability rather than from ones it always or never
   solves.
3. **Advantage-filtered regression.** The step advantage mixes the Monte-Carlo outcome with a
   one-step TD estimate, trusting the outcome more near the episode's end,

       A_t = lam^k * R + (1 - lam^k) * (r_t + gamma V(s_{t+1}) - V(s_t)),  k = steps after t,

   and the actor maximises log pi(a_t|s_t) on the kept steps with A_t > threshold (behaviour
   cloning of its own good actions; no importance ratio, which is why DigiRL stays near
   on-policy and runs synchronously).

The replay is sampled uniformly; the returned "priorities" are ones and ignored.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from distrl.algos.step_window import StepWindow
from distrl.algos.window_batch import bootstrap_values, padded, score_windows
from distrl.config.schema import DigiRLConfig
from distrl.policies.base import Policy


def _steps_after(windows: Sequence[StepWindow], length: int) -> torch.Tensor:
    """``[B, T]``: how many steps of its episode follow each step (0 at the episode's last)."""
    return padded(
        [[w.episode_length - 1 - (w.start + t) for t in range(len(w))] for w in windows], length
    )


@torch.no_grad()
def mixed_advantages(
    values: torch.Tensor,
    next_values: torch.Tensor,
    success: torch.Tensor,
    dones: torch.Tensor,
    steps_after: torch.Tensor,
    mask: torch.Tensor,
    *,
    gamma: float,
    lam: float,
) -> torch.Tensor:
    """DigiRL's step advantage on ``[B, T]`` rows (0 on padding):

        A_t = lam^k R + (1 - lam^k) (r_t + gamma V(s_{t+1}) (1 - done_t) - V(s_t))

    (k = steps after t) with the success-only reward r_t = R at the episode's last step, 0 before.
    ``success`` is ``[B, 1]`` (R of each window's episode); ``next_values`` holds V(s_{t+1}).

    >>> ones = torch.ones(1, 2)
    >>> mixed_advantages(torch.tensor([[0.5, 0.8]]), torch.tensor([[0.8, 0.0]]),
    ...                  torch.tensor([[1.0]]), torch.tensor([[0.0, 1.0]]),
    ...                  torch.tensor([[1.0, 0.0]]), ones, gamma=1.0, lam=0.5)
    tensor([[0.6500, 1.0000]])
    """
    reward = dones * success
    td = reward + gamma * next_values * (1.0 - dones) - values
    mix = lam**steps_after
    return (mix * success + (1.0 - mix) * td) * mask


@torch.no_grad()
def curriculum_mask(surprise: torch.Tensor, top_fraction: float) -> torch.Tensor:
    """1 for the entries of ``surprise`` (R - V_I per window) in the top ``top_fraction``
    (ties at the cut-off kept), 0 for the rest.

    >>> curriculum_mask(torch.tensor([0.9, -0.2, 0.1, 0.4]), 0.5)
    tensor([1., 0., 0., 1.])
    """
    cutoff = torch.quantile(surprise, 1.0 - top_fraction)
    return (surprise >= cutoff).float()


def digirl_loss(
    policy: Policy, windows: Sequence[StepWindow], config: DigiRLConfig
) -> tuple[torch.Tensor, dict[str, float]]:
    """DigiRL's total loss on a batch of windows and what to log."""
    scored = score_windows(policy, windows)
    mask, valid, values = scored.mask, scored.valid, scored.values
    length = mask.shape[1]
    success = torch.tensor([float(w.trajectory_success) for w in windows]).unsqueeze(1)
    steps_after = _steps_after(windows, length)

    # 1. Critics on Monte-Carlo success.
    mc_target = (config.gamma**steps_after) * success * mask
    value_loss = scored.step_mean((values - mc_target) ** 2)
    instruction_logits = policy.trajectory_value([w.first_observation for w in windows])
    instruction_loss = F.binary_cross_entropy_with_logits(instruction_logits, success.squeeze(1))

    # 2. Curriculum: keep the top fraction of windows by R - V_I(s0).
    surprise = success.squeeze(1) - torch.sigmoid(instruction_logits.detach())
    kept_window = curriculum_mask(surprise, config.top_fraction).unsqueeze(1)

    # 3. Step advantages; V(s_{t+1}) is the next step's value, or the bootstrap after the window.
    v = values.detach()
    next_v = torch.cat([v[:, 1:], torch.zeros_like(v[:, :1])], dim=1)
    last = (mask.sum(dim=1) - 1).long().clamp(min=0)
    next_v[torch.arange(len(windows)), last] = torch.nan_to_num(
        bootstrap_values(policy, windows), nan=0.0
    )
    advantage = mixed_advantages(
        v, next_v, success, scored.dones, steps_after, mask, gamma=config.gamma, lam=config.lam
    )
    keep = (advantage > config.advantage_threshold).float() * kept_window
    keep = keep * scored.representable * mask

    kept_steps = keep.sum().clamp(min=1.0)
    policy_loss = -(keep * scored.logprobs).sum() / kept_steps
    total = policy_loss + config.value_coef * (value_loss + instruction_loss)
    metrics = {
        "policy_loss": float(policy_loss.detach()),
        "value_loss": float(value_loss.detach()),
        "instruction_value_loss": float(instruction_loss.detach()),
        "entropy": float(scored.step_mean(scored.entropies).detach()),
        "kept_fraction": float(keep.sum() / scored.steps),
        "advantage_mean": float(advantage[valid].mean()),
        **scored.head_entropy_means(),
    }
    return total, metrics


def digirl_loss_fn(config: DigiRLConfig):
    """The learner's loss callable for DigiRL (uniform replay: priorities are ones)."""

    def loss_fn(
        policy: Policy, windows: Sequence[StepWindow], weights: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, dict[str, float]]:
        total, metrics = digirl_loss(policy, windows, config)
        return total, torch.ones(len(windows)), metrics

    return loss_fn
