"""A-RIDE: the off-policy update that keeps training stable on stale, uneven device data.

One update on a batch of replayed :class:`StepWindow` s (docs/design.md §7):

1. Evaluate the learner's policy pi on the stored observations and actions: log pi(a_t|s_t),
   entropy H(pi(.|s_t)) and the critic V(s_t).
2. Importance ratios rho_t = pi(a_t|s_t) / mu(a_t|s_t) against the behaviour policy mu that acted
   (its log-prob was stored with the step). Scripted demonstrations carry no log-prob (NaN): they
   are taken as on-policy, rho = 1, and their steps only ever pull the policy up (A+).
3. Retrace(lambda) critic targets v_t, TD errors delta_t and advantages
   A_t = r_t + gamma v_{t+1} - V(s_t) (:func:`distrl.algos.returns.retrace_targets`).
4. Loss = critic regression (V - v)^2 + policy term - beta * H(pi(.|s_t)) (entropy bonus)
   [+ ``demo_bc_coef`` * mean -log pi of the batch's demonstrated actions; during the first
   ``critic_warmup_updates`` updates the critic regression alone, docs/design.md §7.8],
   each step weighted by its window's prioritized-replay importance weight. A is standardised
   over the batch and clamped to +-``advantage_clip``. The policy term is one of three
   (``policy_objective``): ``clipped_is``, the default, is the truncated-IS gradient
   -min(rho_bar, rho) A log pi whose negative-advantage steps stop once rho < 1 - eps (a floor
   for pushing an action down); ``truncated_is`` is the same without that floor; ``ppo_clip`` is
   PPO's clipped surrogate on the same ratio, -min(rho A, clip(rho, 1 - eps, 1 + eps) A);
   ``binarized_is`` (the paper's released actor) keeps only the sign of the raw advantage,
   -min(rho_bar, rho) 1[A > 0] log pi: importance-weighted cloning of the steps that went better
   than the critic expected, so a noisy critic's advantage magnitudes cannot steer it.
   docs/design.md §7 allows either clip. We measured the difference: on a fixed replay of warm-start
   data, truncated IS drove the policy away from the data (mean rho 2.6) until it solved
   nothing, while the clipped surrogate stayed stable and improved. ``clipped_is`` keeps the
   truncated-IS weights for pushing up (bounded by pi <= 1) and adds the floor for pushing down.
5. Fresh DPER priorities p = w1 mean|delta| + w2 mean(rho) + w3 mean(H) for the sampled windows.

Steps whose action the policy cannot represent (a tap on nothing, an invalid action) still train
the critic but not the policy: there is no log-prob to push.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from distrl.algos.returns import dper_priority, retrace_targets
from distrl.algos.step_window import StepWindow
from distrl.algos.window_batch import bootstrap_values, score_windows
from distrl.config.schema import ARideConfig
from distrl.policies.base import Policy


@dataclass
class ARideLoss:
    """The differentiable total and what to log and write back."""

    total: torch.Tensor
    policy_loss: float
    value_loss: float
    entropy: float
    mean_rho: float
    mean_abs_delta: float
    #: One fresh priority per window, for the replay.
    priorities: torch.Tensor
    #: The (normalised, clamped) advantages the policy term used, ``[B, T]``, detached.
    advantages: torch.Tensor
    #: Diagnostics: how much of the Retrace targets' variance the critic explains, the share of
    #: policy steps whose gradient a clip, floor or truncation changed, and the approximate
    #: KL(mu || pi) between the policies that acted and the learner's.
    explained_variance: float = 0.0
    clip_fraction: float = 0.0
    approx_kl: float = 0.0
    #: ``entropy_<head>`` per action head of a composite policy (see ``WindowBatch``).
    head_entropies: dict[str, float] = field(default_factory=dict)
    #: Mean -log pi of the batch's demonstrated actions (0 without any): how far RL has moved
    #: the policy from what it was shown, and the term ``aride.demo_bc_coef`` weighs.
    demo_nll: float = 0.0


def policy_surrogate(
    logp: torch.Tensor,
    behaviour: torch.Tensor,
    rho: torch.Tensor,
    advantage: torch.Tensor,
    valid: torch.Tensor,
    config: ARideConfig,
) -> torch.Tensor:
    """The per-step policy objective to maximise, ``[B, T]``, differentiable through ``logp``.

    ``rho`` is the detached ratio pi/mu (1 for demonstrations), ``behaviour`` mu's log-prob
    (NaN for demonstrations), ``advantage`` already normalised and clamped.

    A demonstration step only pulls its action up (its advantage's negative part is dropped,
    as self-imitation learning does): with no behaviour probability there is no floor at which
    pushing a demonstrated action down would stop. Measured on the quick preset with a
    demonstration share of 0.25: with both signs, collected success fell from 0.31 to 0.14 in
    8 minutes (policy loss -1.6: log-probs pushed towards -inf); with the positive part only it
    rose to 0.45.
    """
    advantage = torch.where(torch.isnan(behaviour), advantage.clamp(min=0.0), advantage)
    if config.policy_objective == "ppo_clip":
        # PPO's clipped surrogate on the same ratio, now differentiable: the gain from moving
        # pi away from mu stops at 1 +- eps, so an update cannot run off the data.
        live_log_ratio = torch.where(
            torch.isnan(behaviour) | ~valid, logp - logp.detach(), logp - behaviour
        ).clamp(max=config.max_log_ratio)
        ratio = live_log_ratio.exp()
        clipped = ratio.clamp(1 - config.ppo_clip_eps, 1 + config.ppo_clip_eps)
        return torch.minimum(ratio * advantage, clipped * advantage)
    weight = rho.clamp(max=config.rho_bar) * advantage
    if config.policy_objective == "clipped_is":
        # Pushing an action down has no natural floor (log pi -> -inf spreads its mass over
        # everything else), so stop once pi is (1 - eps) of what the actor had. Pushing up is
        # bounded by pi <= 1 and keeps the full truncated-IS weight.
        floor_reached = (advantage < 0) & (rho < 1 - config.ppo_clip_eps)
        weight = weight * (~floor_reached).float()
    return weight * logp


def explained_variance(values: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> float:
    """``1 - Var(targets - values) / Var(targets)`` over the masked steps: 1 is a perfect critic,
    0 one no better than the mean, negative a harmful one (0 when the targets do not vary).

    >>> values, targets = torch.tensor([[0.0, 1.0, 2.0]]), torch.tensor([[0.0, 2.0, 4.0]])
    >>> explained_variance(values, targets, torch.ones(1, 3))  # residual var 2/3 of var 8/3
    0.75
    """
    chosen = mask.bool()
    target_var = targets[chosen].var(correction=0)
    if chosen.sum() < 2 or float(target_var) == 0.0:
        return 0.0
    return float(1.0 - (targets - values)[chosen].var(correction=0) / target_var)


def approx_kl(log_ratio: torch.Tensor, on_data: torch.Tensor) -> float:
    """KL(mu || pi) estimated on mu's own actions, ``mean((r - 1) - log r)`` with r = pi/mu
    (Schulman's k3 estimator: unbiased and never negative); 0 without such steps.

    >>> round(approx_kl(torch.log(torch.tensor([[0.5, 2.0]])), torch.ones(1, 2)), 4)
    0.25
    """
    chosen = on_data.bool()
    if not chosen.any():
        return 0.0
    log_r = log_ratio[chosen]
    return float((log_r.exp() - 1 - log_r).mean())


#: Relative slack under which a ratio above ``rho_bar`` counts as rounding, not truncation.
_RATIO_ROUNDING = 1e-4


def clip_fraction(
    rho: torch.Tensor, advantage: torch.Tensor, on_data: torch.Tensor, config: ARideConfig
) -> float:
    """The share of ``on_data`` steps (acted by a recorded policy, trainable) whose policy
    gradient the objective's clip changes: PPO's ratio clip, or truncated IS's ``rho_bar`` and
    ``clipped_is``'s floor for pushing an action down.

    >>> from distrl.config.schema import ARideConfig
    >>> rho, adv = torch.tensor([[0.5, 1.0, 3.0, 0.5]]), torch.tensor([[-1.0, 1.0, 1.0, 1.0]])
    >>> clip_fraction(rho, adv, torch.ones(1, 4), ARideConfig(rho_bar=1.0, ppo_clip_eps=0.2))
    0.5
    """
    chosen = on_data.bool()
    if not chosen.any():
        return 0.0
    eps = config.ppo_clip_eps
    if config.policy_objective == "ppo_clip":
        bites = ((advantage > 0) & (rho > 1 + eps)) | ((advantage < 0) & (rho < 1 - eps))
    else:
        # A ratio a rounding error above rho_bar (acting and scoring sum the same terms in
        # another order: rho = 1 + 1e-7 on-policy) changes the gradient by nothing: not a bite.
        bites = rho > config.rho_bar * (1 + _RATIO_ROUNDING)
        if config.policy_objective == "clipped_is":
            bites = bites | ((advantage < 0) & (rho < 1 - eps))
    return float(bites[chosen].float().mean())


def aride_loss(
    policy: Policy,
    windows: Sequence[StepWindow],
    importance_weights: torch.Tensor,
    config: ARideConfig,
    *,
    fit_policy: bool = True,
) -> ARideLoss:
    """The A-RIDE loss of one batch of windows (see the module docstring for the maths).

    ``fit_policy=False`` is the critic warm-up (``aride.critic_warmup_updates``): the total is
    the critic regression alone, while every diagnostic is still computed and reported."""
    # 1. pi's log-probs, entropies and values on the stored steps, as [B, T] rows.
    scored = score_windows(policy, windows)
    mask, valid, logp = scored.mask, scored.valid, scored.logprobs
    entropy, values, representable = scored.entropies, scored.values, scored.representable

    # 2. rho_t = pi / mu; NaN behaviour log-probs (scripted demos) count as on-policy.
    behaviour = scored.behaviour_logprobs
    log_ratio = (logp.detach() - behaviour).clamp(max=config.max_log_ratio)
    log_ratio = torch.where(torch.isnan(behaviour) | ~valid, torch.zeros_like(log_ratio), log_ratio)
    rho = log_ratio.exp()

    # 3. Retrace targets, TD errors and advantages.
    retrace = retrace_targets(
        scored.rewards,
        values.detach(),
        bootstrap_values(policy, windows),
        rho,
        scored.dones,
        mask,
        gamma=config.gamma,
        lam=config.lam,
        c_bar=config.c_bar,
        rho_bar=config.rho_bar,
    )

    # 4. Loss terms, each step weighted by its window's importance weight.
    step_weight = importance_weights.float().unsqueeze(1) * mask
    steps = scored.steps
    value_loss = (step_weight * (values - retrace.targets) ** 2).sum() / steps
    advantage = retrace.advantages
    if config.policy_objective == "binarized_is":
        # Only the sign survives, taken before any normalisation (a standardised advantage is
        # positive for the better half of every batch, even of one where nothing went well).
        advantage = (advantage > 0).float() * mask
    elif config.normalize_advantages:
        # Zero-mean advantages keep a mostly-failing batch from pushing every action down (which
        # only inflates entropy); unit scale makes the clip and learning rate batch-independent.
        # (A batch can hold a single step once stale windows are dropped: no spread to divide
        # by then, and the population std of one value is 0, not NaN.)
        valid_advantages = advantage[valid]
        spread = valid_advantages.std(correction=0)
        advantage = (advantage - valid_advantages.mean()) / (spread + 1e-6) * mask
    advantage = advantage.clamp(-config.advantage_clip, config.advantage_clip)
    surrogate = policy_surrogate(logp, behaviour, rho, advantage, valid, config) * representable
    on_data = valid & ~torch.isnan(behaviour) & representable.bool()  # steps a policy acted
    policy_loss = -(step_weight * surrogate).sum() / steps
    mean_entropy = scored.step_mean(entropy)
    demo_nll = demonstration_nll(logp, behaviour, valid, representable)
    total = config.value_coef * value_loss
    if fit_policy:
        total = total + policy_loss - config.entropy_coef * mean_entropy
        if config.demo_bc_coef > 0:
            total = total + config.demo_bc_coef * demo_nll

    # 5. Fresh priorities for the replay.
    w1, w2, w3 = config.priority_weights
    priorities = dper_priority(
        retrace.deltas.abs(), rho, entropy.detach(), mask, w1=w1, w2=w2, w3=w3
    )
    return ARideLoss(
        total=total,
        policy_loss=float(policy_loss.detach()),
        value_loss=float(value_loss.detach()),
        entropy=float(mean_entropy.detach()),
        mean_rho=float((rho * mask).sum() / steps),
        mean_abs_delta=float((retrace.deltas.abs() * mask).sum() / steps),
        priorities=priorities,
        advantages=advantage.detach(),
        explained_variance=explained_variance(values.detach(), retrace.targets, mask),
        clip_fraction=clip_fraction(rho, advantage, on_data, config),
        approx_kl=approx_kl(log_ratio, on_data),
        head_entropies=scored.head_entropy_means(),
        demo_nll=float(demo_nll.detach()),
    )


def demonstration_nll(
    logp: torch.Tensor, behaviour: torch.Tensor, valid: torch.Tensor, representable: torch.Tensor
) -> torch.Tensor:
    """Mean -log pi of the demonstrated actions in the batch (steps with no behaviour log-prob
    that the policy can represent), 0 when it holds none: the cloning term that
    ``aride.demo_bc_coef`` weighs (docs/design.md §7.8). Unweighted by priority: the
    demonstration windows are drawn uniformly with importance weight 1."""
    shown = valid & torch.isnan(behaviour) & representable.bool()
    if not bool(shown.any()):
        return logp.sum() * 0.0  # keeps the graph (and the dtype) without a NaN mean
    return -logp[shown].mean()


def aride_loss_fn(config: ARideConfig, *, fit_policy: bool = True):
    """The learner's loss callable for A-RIDE: ``(policy, windows, weights) -> (loss, priorities,
    metrics)``; with ``fit_policy=False`` the critic warm-up's (critic regression alone)."""

    def loss_fn(
        policy: Policy, windows: Sequence[StepWindow], weights: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, dict[str, float]]:
        result = aride_loss(policy, windows, weights, config, fit_policy=fit_policy)
        metrics = {
            "policy_loss": result.policy_loss,
            "value_loss": result.value_loss,
            "entropy": result.entropy,
            "rho_mean": result.mean_rho,
            "abs_delta_mean": result.mean_abs_delta,
            "explained_variance": result.explained_variance,
            "clip_fraction": result.clip_fraction,
            "approx_kl": result.approx_kl,
            "demo_nll": result.demo_nll,
            "critic_warmup": 0.0 if fit_policy else 1.0,
            **result.head_entropies,
        }
        return result.total, result.priorities, metrics

    return loss_fn
