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

import torch

from distrl.algos.aride import aride_loss_fn
from distrl.algos.digirl import digirl_loss_fn
from distrl.algos.filtered_bc import filtered_bc_loss_fn
from distrl.algos.rewards import RewardShaping
from distrl.algos.step_window import StepWindow
from distrl.config.schema import RunConfig
from distrl.core.trajectory import Trajectory
from distrl.policies.base import Policy

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
    name: str
    loss_fn: LossFn
    #: Sample the replay by priority (True) or uniformly (False).
    prioritized: bool
    #: Which finished trajectories the learner admits to its replay.
    admits: Callable[[Trajectory], bool]
    shaping: RewardShaping


def build_algorithm(cfg: RunConfig) -> Algorithm:
    """The algorithm ``cfg.train.algo`` names, with its constants from ``cfg``."""
    shaping = RewardShaping(
        cfg.aride.step_cost, cfg.aride.invalid_penalty, cfg.aride.repeat_penalty
    )
    name = cfg.train.algo
    if name == "aride":
        return Algorithm(name, aride_loss_fn(cfg.aride), True, _any_trajectory, shaping)
    if name == "digirl":
        return Algorithm(name, digirl_loss_fn(cfg.digirl), False, _any_trajectory, shaping)
    if name == "fbc":
        return Algorithm(name, filtered_bc_loss_fn(), False, _successful, shaping)
    raise ValueError(f"unknown algorithm {name!r}")  # the config's Literal makes this unreachable
