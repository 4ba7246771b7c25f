"""DPER by evidence (issue 17 item 3): the named weight settings put each term where the design
says, and beta anneals over the run's own budget (updates or minutes), reaching 1.0 at its end
and going on from a checkpoint."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from distrl.algos.registry import beta_budget, build_algorithm
from distrl.algos.returns import dper_priority
from distrl.algos.step_window import StepWindow
from distrl.config.loader import ConfigError, load_config
from distrl.config.schema import RunConfig
from distrl.replay.samplers import PrioritizedSampler
from distrl.runtime.components import build_replay
from distrl.runtime.replay_service import ReplayService

# One crafted window of two valid steps (and a padded third that must not count):
# mean |delta| = 0.2, mean rho = 1.0, mean entropy = 2.6.
DELTAS = torch.tensor([[0.1, -0.3, 7.0]])
RHOS = torch.tensor([[0.5, 1.5, 9.0]])
ENTROPIES = torch.tensor([[2.0, 3.2, 9.0]])
MASK = torch.tensor([[1, 1, 0]])


def _shares(setting: str) -> list[float]:
    """Each term's share of the window's priority under a named setting."""
    cfg = load_config("quick", [f"aride.dper_weights={setting}"])
    w1, w2, w3 = cfg.aride.priority_weights
    total = float(dper_priority(DELTAS, RHOS, ENTROPIES, MASK, w1=w1, w2=w2, w3=w3)[0])
    return [w1 * 0.2 / total, w2 * 1.0 / total, w3 * 2.6 / total]


def test_named_weight_settings_give_each_term_its_share_of_the_priority() -> None:
    # current: 0.2 + 0.1 + 0.26 = 0.56; entropy leads.
    assert _shares("current") == pytest.approx([0.2 / 0.56, 0.1 / 0.56, 0.26 / 0.56])
    # paper: 50 * 0.2 + 1 * 1.0 + 0.01 * 2.6 = 11.026; |delta| is 91% of it.
    assert _shares("paper") == pytest.approx([10 / 11.026, 1 / 11.026, 0.026 / 11.026])
    assert RunConfig().aride.dper_weights == "current"  # the ablation has not been run yet


def test_custom_weights_are_read_only_when_asked_for() -> None:
    custom = load_config("quick", ["aride.dper_weights=custom", "aride.priority_w1=3"])
    assert custom.aride.priority_weights == (3.0, 0.1, 0.1)
    with pytest.raises(ConfigError, match="read only with aride.dper_weights=custom"):
        load_config("quick", ["aride.dper_weights=paper", "aride.priority_w1=3"])


def test_beta_anneals_over_the_update_budget_and_ends_at_one() -> None:
    cfg = load_config("quick", ["train.max_updates=7"])
    assert beta_budget(cfg) == (7, None)
    sampler = build_algorithm(cfg).make_sampler(4)
    assert isinstance(sampler, PrioritizedSampler)
    sampler.on_insert(0)
    rng = np.random.default_rng(0)
    betas = []
    for _ in range(7):
        betas.append(sampler.beta)
        sampler.sample(2, rng)
    assert betas == pytest.approx([0.4 + 0.6 * k / 7 for k in range(7)])
    assert sampler.beta == pytest.approx(1.0)  # after the run's last update
    # An explicit span still wins over the budget.
    assert beta_budget(load_config("quick", ["aride.priority_beta_steps=50"])) == (50, None)


class FakeClock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _window() -> StepWindow:
    """A one-step window acted by version 0 (the sampler only needs it to be live)."""
    return StepWindow("t", "task", 0, (), (), (0.0,), (0.0,), (True,), (0,), None, False, 1, None)  # type: ignore[arg-type]


def _timed_replay(cfg: RunConfig, clock: FakeClock) -> ReplayService:
    replay = build_replay(cfg, keep_screenshots=False, store_dir=None)
    replay._clock, replay._budget_started = clock, clock()
    replay.min_replay = 1
    return replay


def test_beta_anneals_over_the_minutes_budget_and_resumes_where_it_was() -> None:
    cfg = load_config("quick", ["train.minutes=2"])
    assert beta_budget(cfg) == (None, 120.0)
    clock = FakeClock(1000.0)
    replay = _timed_replay(cfg, clock)
    replay.buffer.add(_window())
    replay.oldest_versions[0] = 0
    sampler = replay.buffer.sampler
    assert isinstance(sampler, PrioritizedSampler)
    betas = []
    for step in (0.0, 60.0, 60.0, 600.0):  # start, half the budget, its end, far past it
        clock.now += step
        replay.sample(1, learner_version=0)
        betas.append(sampler.beta)
        if len(betas) == 2:
            state = replay.state_dict()  # a checkpoint at half the budget
    assert betas == pytest.approx([0.4, 0.7, 1.0, 1.0])

    # A resumed replay goes on from the checkpoint's half, not from the start.
    later = FakeClock(5000.0)
    resumed = _timed_replay(cfg, later)
    resumed.restore(state, [], learner_version=0)
    later.now += 30.0
    assert resumed.budget_progress() == pytest.approx(0.75)
