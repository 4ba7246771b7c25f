"""Algorithms by name (``train.algo``): what the learner needs to run each one.

An algorithm is three choices the learner makes once: the loss of a batch of windows, whether the
replay samples by priority (A-RIDE's DPER) or uniformly (the baselines), and which finished
trajectories enter the replay at all (filtered BC admits successes only). Everything else (the
replay, staleness bound, optimiser, weights publishing) is shared, so the comparison between
algorithms is about the algorithm.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import torch

from distrl.algos.aride import aride_loss_fn
from distrl.algos.digirl import digirl_loss_fn
from distrl.algos.filtered_bc import filtered_bc_loss_fn
from distrl.algos.rewards import RewardShaping
from distrl.algos.step_window import StepWindow
from distrl.config.schema import RunConfig
from distrl.core.trajectory import Trajectory
from distrl.errors import InputError
from distrl.policies.base import Policy
from distrl.replay.samplers import PrioritizedSampler, Sampler, UniformSampler

#: An algorithm's loss: (policy, windows, importance weights) -> (loss, priorities, metrics).
LossFn = Callable[
    [Policy, Sequence[StepWindow], torch.Tensor],
    tuple[torch.Tensor, torch.Tensor, dict[str, float]],
]


def _any_trajectory(trajectory: Trajectory) -> bool:
    return True


def _successful(trajectory: Trajectory) -> bool:
    return trajectory.success


@dataclass(frozen=True)
class Algorithm:
    """What the learner and replay need of an algorithm (a plug-in ``train.algo`` returns one)."""

    name: str
    loss_fn: LossFn
    #: The replay's sampler for a capacity: by priority (A-RIDE's DPER) or uniform.
    make_sampler: Callable[[int], Sampler]
    #: Which finished trajectories the learner admits to its replay.
    admits: Callable[[Trajectory], bool]
    shaping: RewardShaping
    #: The loss of the learner's first ``warmup_updates`` updates (A-RIDE's critic warm-up:
    #: ``aride.critic_warmup_updates``); None: every update uses ``loss_fn``.
    warmup_loss_fn: LossFn | None = None
    warmup_updates: int = 0

    def loss_for_update(self, updates_done: int) -> LossFn:
        """The loss of the update that follows ``updates_done`` earlier ones."""
        if self.warmup_loss_fn is not None and updates_done < self.warmup_updates:
            return self.warmup_loss_fn
        return self.loss_fn


def beta_budget(cfg: RunConfig) -> tuple[int | None, float | None]:
    """What DPER's beta anneals over (docs/design.md §7.6): ``(updates, None)`` for an update
    span (``aride.priority_beta_steps``, else the run's ``train.max_updates``), ``(None,
    seconds)`` for the run's wall-clock budget when it has no update budget. Either way beta
    reaches its end value as the run's budget runs out, not after a fixed count it never makes."""
    steps = cfg.aride.priority_beta_steps
    if steps is None:
        steps = cfg.train.max_updates
    return (steps, None) if steps is not None else (None, cfg.train.minutes * 60.0)


def _prioritized_sampler(cfg: RunConfig) -> Callable[[int], Sampler]:
    """DPER's sampler with the A-RIDE config's alpha and beta schedule."""
    aride = cfg.aride
    return partial(
        PrioritizedSampler,
        alpha=aride.priority_alpha,
        beta_start=aride.priority_beta_start,
        beta_end=aride.priority_beta_end,
        beta_steps=beta_budget(cfg)[0],
    )


def _shaping(cfg: RunConfig) -> RewardShaping:
    return RewardShaping(
        cfg.aride.step_cost,
        cfg.aride.invalid_penalty,
        cfg.aride.repeat_penalty,
        cfg.aride.step_cost_on_failure,
    )


def aride(cfg: RunConfig) -> Algorithm:
    """A-RIDE: Retrace critic, advantage policy update, sampled by priority (DPER) unless
    ``aride.prioritized`` is off."""
    sampler = _prioritized_sampler(cfg) if cfg.aride.prioritized else UniformSampler
    return Algorithm(
        "aride",
        aride_loss_fn(cfg.aride),
        sampler,
        _any_trajectory,
        _shaping(cfg),
        warmup_loss_fn=aride_loss_fn(cfg.aride, fit_policy=False),
        warmup_updates=cfg.aride.critic_warmup_updates,
    )


def digirl(cfg: RunConfig) -> Algorithm:
    """The DigiRL baseline: MC critics, curriculum, AWR filter; uniform replay."""
    loss = digirl_loss_fn(cfg.digirl)
    return Algorithm("digirl", loss, UniformSampler, _any_trajectory, _shaping(cfg))


def filtered_bc(cfg: RunConfig) -> Algorithm:
    """Filtered behaviour cloning: successful trajectories only, uniform replay."""
    return Algorithm("fbc", filtered_bc_loss_fn(), UniformSampler, _successful, _shaping(cfg))


def build_algorithm(cfg: RunConfig) -> Algorithm:
    """The algorithm ``cfg.train.algo`` names (:data:`distrl.plugins.ALGORITHMS`: a built-in,
    or a plug-in callable taking the config and returning an :class:`Algorithm`)."""
    from distrl.plugins import ALGORITHMS

    algorithm = ALGORITHMS.resolve(cfg.train.algo)(cfg)
    if not isinstance(algorithm, Algorithm):
        raise InputError(
            f"train.algo={cfg.train.algo}: returned {type(algorithm).__name__}, not a "
            "distrl.algos.registry.Algorithm"
        )
    return algorithm
