"""Critic targets, policy advantages and replay priorities for windows of off-policy steps.

Everything here is a *target*: the learner regresses onto it or weights by it, so it is computed
under ``torch.no_grad()`` and never carries a gradient back into the critic that produced
``values``.

Layout. A batch holds ``B`` windows of ``T`` steps, every per-step tensor shaped ``[B, T]``:

* ``dones[b, t] = 1`` when the episode ended at step ``t``: nothing after ``t`` is bootstrapped
  or traced through. A later valid step of the same row starts a new, independent episode.
* ``mask[b, t] = 0`` marks padding after a short window's end. Valid steps are a prefix of the
  row; padded inputs are never read (they may hold anything, NaN included) and every output is 0
  there.
* ``bootstrap_values[b]`` is ``V(s_T)``, the critic's value of the state after the row's last
  valid step. It is used only if that step is not terminal, so it may be NaN when it is.

Equations are those of docs/design.md §7 (A-RIDE; Retrace(lambda) of Munos et al., 2016, with
the V-trace-style ``rho_bar`` clip on each TD error as in IMPALA).
"""

from __future__ import annotations

from typing import NamedTuple

import torch

__all__ = ["RetraceOutput", "dper_priority", "n_step_returns", "retrace_targets"]


class RetraceOutput(NamedTuple):
    """What :func:`retrace_targets` returns; every field is ``[B, T]`` and 0 on padding.

    ``targets`` (v_t) train the critic, ``deltas`` (the raw, unclipped TD errors) feed the replay
    priority, and ``advantages`` (A_t) weight the policy gradient.
    """

    targets: torch.Tensor
    deltas: torch.Tensor
    advantages: torch.Tensor


@torch.no_grad()
def retrace_targets(
    rewards: torch.Tensor,
    values: torch.Tensor,
    bootstrap_values: torch.Tensor,
    rhos: torch.Tensor,
    dones: torch.Tensor,
    mask: torch.Tensor,
    *,
    gamma: float,
    lam: float,
    c_bar: float,
    rho_bar: float,
) -> RetraceOutput:
    """Retrace(lambda) critic targets, TD errors and policy advantages for ``[B, T]`` windows.

    ``rhos`` are importance ratios pi(a_t|s_t) / mu(a_t|s_t) of the learner's policy pi over the
    behaviour policy mu that acted. With

        c_t     = lam * min(c_bar, rho_t)
        delta_t = r_t + gamma * V(s_{t+1}) * (1 - done_t) - V(s_t)

    (``V(s_{t+1})`` is the next value in the window, or ``bootstrap_values`` after the last valid
    step) the target is

        v_t = V(s_t) + sum_{k>=t} gamma^(k-t) (prod_{i=t}^{k-1} c_i) min(rho_bar, rho_k) delta_k,

    the sum stopping at the episode end and at the window end, and the policy advantage is

        A_t = r_t + gamma * v_{t+1} * (1 - done_t) - V(s_t)

    with ``v_{t+1}`` the next step's target, or ``bootstrap_values`` after the last valid step.

    Example (on-policy, so the targets are the discounted returns 1 + 0.9 * 1.8 and 0.9 * 2):

    >>> import torch
    >>> out = retrace_targets(
    ...     rewards=torch.tensor([[1.0, 0.0]]), values=torch.tensor([[0.5, 0.5]]),
    ...     bootstrap_values=torch.tensor([2.0]), rhos=torch.ones(1, 2),
    ...     dones=torch.zeros(1, 2), mask=torch.ones(1, 2),
    ...     gamma=0.9, lam=1.0, c_bar=1.0, rho_bar=1.0)
    >>> out.targets
    tensor([[2.6200, 1.8000]])
    >>> out.advantages
    tensor([[2.1200, 1.3000]])
    """
    batch_size, horizon = _check_window(
        values=values, rewards=rewards, rhos=rhos, dones=dones, mask=mask
    )
    _check_bootstrap(bootstrap_values, batch_size)
    valid = _prefix_mask(mask)
    zero = values.new_zeros(())
    # Padding is never read: overwrite it first so that NaN or garbage there cannot leak through
    # a multiplication by zero (NaN * 0 is NaN).
    rewards = torch.where(valid, rewards.to(values.dtype), zero)
    values = torch.where(valid, values, zero)
    rhos = torch.where(valid, rhos.to(values.dtype), zero)
    bootstrap = bootstrap_values.to(values.dtype)[:, None]
    terminal = valid & dones.to(torch.bool)
    continues = valid & ~terminal  # the (1 - done_t) factor, as a selector so a NaN bootstrap is
    # never multiplied in when the episode ended there.
    next_valid = _shift_left(valid, fill=False)

    # V(s_{t+1}): the next value in the window, or V(s_T) after the last valid step.
    next_values = torch.where(next_valid, _shift_left(values, fill=0.0), bootstrap)
    # delta_t = r_t + gamma * V(s_{t+1}) * (1 - done_t) - V(s_t)
    deltas = rewards + torch.where(continues, gamma * next_values, zero) - values
    deltas = torch.where(valid, deltas, zero)

    clipped_rhos = rhos.clamp(max=rho_bar)  # min(rho_bar, rho_t)
    traces = lam * rhos.clamp(max=c_bar)  # c_t = lam * min(c_bar, rho_t)

    # Backward recursion for the correction v_t - V(s_t):
    #   v_t - V(s_t) = min(rho_bar, rho_t) delta_t + gamma c_t (v_{t+1} - V(s_{t+1})),
    # with v_{t+1} - V(s_{t+1}) = 0 past a done (the (1 - done_t) selector) or past the window's
    # last valid step (the carry is 0 on padding and beyond T). It equals the explicit sum: the
    # k = t term of the sum is min(rho_bar, rho_t) delta_t, and every k > t term carries the
    # factor gamma c_t, which leaves gamma^(k-t-1) (prod_{i=t+1}^{k-1} c_i) min(rho_bar, rho_k)
    # delta_k, i.e. the same sum started at t + 1. Unrolling from the last step, where the sum
    # has only its k = t term, gives the formula at every t in O(T) instead of O(T^2).
    corrections = torch.zeros_like(values)
    carry = values.new_zeros(batch_size)  # v_{t+1} - V(s_{t+1}); 0 beyond the window
    for t in reversed(range(horizon)):
        traced = torch.where(continues[:, t], gamma * traces[:, t] * carry, zero)
        carry = torch.where(valid[:, t], clipped_rhos[:, t] * deltas[:, t] + traced, zero)
        corrections[:, t] = carry
    targets = torch.where(valid, values + corrections, zero)

    # A_t = r_t + gamma * v_{t+1} * (1 - done_t) - V(s_t); v_{t+1} is V(s_T) after the last step.
    next_targets = torch.where(next_valid, _shift_left(targets, fill=0.0), bootstrap)
    advantages = rewards + torch.where(continues, gamma * next_targets, zero) - values
    advantages = torch.where(valid, advantages, zero)
    return RetraceOutput(targets=targets, deltas=deltas, advantages=advantages)


@torch.no_grad()
def n_step_returns(
    rewards: torch.Tensor,
    bootstrap_values: torch.Tensor,
    dones: torch.Tensor,
    mask: torch.Tensor,
    gamma: float,
) -> torch.Tensor:
    """Discounted return to the window end, bootstrapped with V(s_T), cut at episode ends.

        G_t = r_t + gamma * G_{t+1} * (1 - done_t),  G after the last valid step = V(s_T)

    The on-policy reference for :func:`retrace_targets` (which reduces to it when rho = 1,
    c_bar >= 1, rho_bar >= 1 and lam = 1); tests check Retrace against it. No algorithm trains on
    it: DigiRL's critics regress on Monte-Carlo success (:mod:`distrl.algos.digirl`) and
    filtered BC has no critic. Same layout rules as :func:`retrace_targets`; 0 on padding.

    >>> import torch
    >>> n_step_returns(torch.tensor([[1.0, 0.0, 5.0]]), torch.tensor([2.0]),
    ...                dones=torch.tensor([[0.0, 1.0, 0.0]]), mask=torch.tensor([[1, 1, 0]]),
    ...                gamma=0.5)
    tensor([[1., 0., 0.]])
    """
    batch_size, horizon = _check_window(rewards=rewards, dones=dones, mask=mask)
    _check_bootstrap(bootstrap_values, batch_size)
    valid = _prefix_mask(mask)
    zero = rewards.new_zeros(())
    rewards = torch.where(valid, rewards, zero)
    continues = valid & ~dones.to(torch.bool)
    next_valid = _shift_left(valid, fill=False)
    bootstrap = bootstrap_values.to(rewards.dtype)

    returns = torch.zeros_like(rewards)
    carry = rewards.new_zeros(batch_size)  # G_{t+1}
    for t in reversed(range(horizon)):
        next_return = torch.where(next_valid[:, t], carry, bootstrap)
        # G_t = r_t + gamma * G_{t+1} * (1 - done_t)
        carry = rewards[:, t] + torch.where(continues[:, t], gamma * next_return, zero)
        carry = torch.where(valid[:, t], carry, zero)
        returns[:, t] = carry
    return returns


@torch.no_grad()
def dper_priority(
    abs_deltas: torch.Tensor,
    rhos: torch.Tensor,
    entropies: torch.Tensor,
    mask: torch.Tensor,
    *,
    w1: float,
    w2: float,
    w3: float,
) -> torch.Tensor:
    """Distributed-PER priority of each window, shaped ``[B]`` (docs/design.md §7):

        p = w1 * mean|delta| + w2 * mean(rho) + w3 * mean(entropy)

    Means run over each window's valid steps only. Large TD errors (the critic is wrong there),
    large ratios (the learner now prefers these actions more than the actor did) and high policy
    entropy (the policy is unsure there) all make a window worth replaying. A row with no valid
    step gets priority 0, so it is never sampled. ``abs_deltas`` goes through ``abs()`` again, so
    passing signed TD errors is harmless.

    >>> import torch
    >>> dper_priority(torch.tensor([[1.0, -3.0]]), torch.tensor([[1.0, 1.0]]),
    ...               torch.tensor([[0.5, 9.0]]), torch.tensor([[1, 0]]), w1=1.0, w2=0.5, w3=2.0)
    tensor([2.5000])
    """
    _check_window(abs_deltas=abs_deltas, rhos=rhos, entropies=entropies, mask=mask)
    valid = mask.to(torch.bool)
    dtype = abs_deltas.dtype
    count = valid.sum(dim=1).clamp(min=1).to(dtype)

    def valid_mean(x: torch.Tensor) -> torch.Tensor:
        return torch.where(valid, x.to(dtype), torch.zeros((), dtype=dtype)).sum(dim=1) / count

    # p = w1 * mean|delta| + w2 * mean(rho) + w3 * mean(entropy)
    return w1 * valid_mean(abs_deltas.abs()) + w2 * valid_mean(rhos) + w3 * valid_mean(entropies)


def _check_window(**tensors: torch.Tensor) -> tuple[int, int]:
    """Fail early, naming the input, when the per-step tensors are not all the same ``[B, T]``."""
    shapes = {name: tuple(tensor.shape) for name, tensor in tensors.items()}
    first_name, first_shape = next(iter(shapes.items()))
    if len(first_shape) != 2:
        raise ValueError(f"{first_name}: expected shape [B, T], got {list(first_shape)}")
    for name, shape in shapes.items():
        if shape != first_shape:
            raise ValueError(
                f"{name}: shape {list(shape)} does not match {first_name} {list(first_shape)}; "
                "every per-step input must be [B, T]"
            )
    first = tensors[first_name]
    if not first.is_floating_point():
        raise ValueError(f"{first_name}: expected a float tensor, got {first.dtype}")
    return first_shape[0], first_shape[1]


def _check_bootstrap(bootstrap_values: torch.Tensor, batch_size: int) -> None:
    """V(s_T) is one value per window; a [B, 1] tensor here would silently broadcast wrongly."""
    if tuple(bootstrap_values.shape) != (batch_size,):
        raise ValueError(
            f"bootstrap_values: expected shape [{batch_size}] (one V(s_T) per window), "
            f"got {list(bootstrap_values.shape)}"
        )


def _prefix_mask(mask: torch.Tensor) -> torch.Tensor:
    """The mask as booleans, checked to be a prefix of valid steps in every row.

    A hole inside a row would make the step before it bootstrap from ``bootstrap_values``, the
    value of the state after the *last* step, which is wrong; so refuse it.
    """
    valid = mask.to(torch.bool)
    holes = valid[:, 1:] & ~valid[:, :-1]
    if bool(holes.any()):
        row = int(holes.any(dim=1).nonzero()[0, 0])
        raise ValueError(
            f"mask row {row}: a valid step follows padding; valid steps must be a prefix "
            "(1 ... 1 0 ... 0). Put episode boundaries in dones, not in mask."
        )
    return valid


def _shift_left(x: torch.Tensor, *, fill: float | bool) -> torch.Tensor:
    """``x[:, t + 1]`` at position ``t``, with ``fill`` in the last column."""
    return torch.cat([x[:, 1:], torch.full_like(x[:, :1], fill)], dim=1)
