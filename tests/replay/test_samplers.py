"""Samplers: draw frequencies, importance weights, beta annealing, eviction, checkpoints."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from distrl.replay import EmptyReplayError, PrioritizedSampler, Sampler, UniformSampler

# Phi^-1(0.999): the standard normal quantile for a test at significance level p = 0.001.
Z_0_999 = 3.090232306167813


def chi_square_critical_value(degrees_of_freedom: int, z: float = Z_0_999) -> float:
    """Upper quantile of the chi-square distribution by the Wilson-Hilferty approximation.

    Wilson and Hilferty (1931): for X ~ chi2(k), (X / k)^(1/3) is close to normal with mean
    1 - 2 / (9k) and variance 2 / (9k), so the quantile is k * (1 - 2/(9k) + z * sqrt(2/(9k)))^3.
    At p = 0.001 it is within 1% of the exact value already for k = 10 (29.76 against 29.59)
    and closer for more degrees of freedom (k = 39: 72.14 against 72.05).
    """
    k = degrees_of_freedom
    return k * (1.0 - 2.0 / (9.0 * k) + z * math.sqrt(2.0 / (9.0 * k))) ** 3


def chi_square_statistic(counts: np.ndarray, probabilities: np.ndarray) -> float:
    """Pearson's statistic sum (observed - expected)^2 / expected."""
    expected = counts.sum() * probabilities
    return float(np.sum((counts - expected) ** 2 / expected))


def draw_counts(sampler: Sampler, capacity: int, draws: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    counts = np.zeros(capacity, dtype=np.int64)
    batch_size = 2000
    for _ in range(draws // batch_size):
        slots, _ = sampler.sample(batch_size, rng)
        counts += np.bincount(slots, minlength=capacity)
    return counts


def filled_prioritized(priorities: np.ndarray, **kwargs: float) -> PrioritizedSampler:
    sampler = PrioritizedSampler(capacity=len(priorities), **kwargs)
    for slot in range(len(priorities)):
        sampler.on_insert(slot)
    sampler.update_priorities(np.arange(len(priorities)), priorities)
    return sampler


def stored_priorities(sampler: PrioritizedSampler) -> np.ndarray:
    return sampler.state_dict()["stored_priorities"]


def test_critical_value_approximation_matches_table() -> None:
    # Exact values from a chi-square table (p = 0.001).
    assert chi_square_critical_value(39) == pytest.approx(72.055, rel=2e-3)
    assert chi_square_critical_value(10) == pytest.approx(29.588, rel=1e-2)


def test_samplers_follow_the_protocol() -> None:
    assert isinstance(PrioritizedSampler(3), Sampler)
    assert isinstance(UniformSampler(3), Sampler)


def test_prioritized_frequencies_match_p_to_the_alpha() -> None:
    capacity, alpha, epsilon = 40, 0.6, 1e-6
    priorities = np.random.default_rng(0).uniform(0.05, 5.0, size=capacity)
    sampler = filled_prioritized(priorities, alpha=alpha, epsilon=epsilon)
    counts = draw_counts(sampler, capacity, draws=200_000, seed=1)

    q = (priorities + epsilon) ** alpha
    critical = chi_square_critical_value(capacity - 1)
    assert chi_square_statistic(counts, q / q.sum()) < critical
    # The test has power: the same draws are far from proportional-to-p (alpha = 1).
    assert chi_square_statistic(counts, priorities / priorities.sum()) > 10 * critical


def test_uniform_sampler_is_uniform_over_live_slots() -> None:
    capacity = 50
    sampler = UniformSampler(capacity)
    for slot in range(capacity):
        sampler.on_insert(slot)
    evicted = np.arange(0, capacity, 5)
    for slot in evicted:
        sampler.on_evict(int(slot))
    counts = draw_counts(sampler, capacity, draws=200_000, seed=2)

    assert counts[evicted].sum() == 0
    live_counts = np.delete(counts, evicted)
    uniform = np.full(live_counts.size, 1.0 / live_counts.size)
    assert chi_square_statistic(live_counts, uniform) < chi_square_critical_value(
        live_counts.size - 1
    )
    _, weights = sampler.sample(16, np.random.default_rng(0))
    np.testing.assert_array_equal(weights, np.ones(16))


def test_importance_weights_equal_the_formula() -> None:
    priorities = np.array([0.0, 0.3, 1.0, 2.5, 7.0])
    alpha, beta, epsilon = 0.7, 0.55, 0.01
    sampler = filled_prioritized(
        priorities, alpha=alpha, beta_start=beta, beta_end=beta, epsilon=epsilon
    )
    slots, weights = sampler.sample(64, np.random.default_rng(3))

    q = (priorities + epsilon) ** alpha
    probability = q / q.sum()
    raw_weights = (len(priorities) * probability[slots]) ** -beta
    np.testing.assert_allclose(weights, raw_weights / raw_weights.max(), rtol=1e-12)
    np.testing.assert_allclose(sampler.probabilities(slots), probability[slots], rtol=1e-12)
    assert weights.max() == 1.0


def test_importance_weights_count_only_live_items() -> None:
    sampler = PrioritizedSampler(capacity=8, alpha=1.0, beta_start=1.0, epsilon=0.0)
    for slot in range(3):
        sampler.on_insert(slot)
    sampler.update_priorities([0, 1, 2], [1.0, 2.0, 5.0])
    slots, weights = sampler.sample(200, np.random.default_rng(4))
    # With beta = 1: w_i / w_max = P_min_in_batch / P_i, independent of N; check against N = 3.
    raw = (3 * np.array([1.0, 2.0, 5.0])[slots] / 8.0) ** -1.0
    np.testing.assert_allclose(weights, raw / raw.max(), rtol=1e-12)


def test_beta_is_annealed_linearly_over_sample_calls() -> None:
    sampler = filled_prioritized(
        np.array([1.0, 4.0]), alpha=1.0, beta_start=0.4, beta_end=1.0, beta_steps=10, epsilon=0.0
    )
    rng = np.random.default_rng(5)
    ratio = 4.0  # P(1) / P(0): the weight of slot 1 relative to slot 0 is ratio^-beta
    for call in range(15):
        expected_beta = 0.4 + 0.6 * min(call / 10, 1.0)
        assert sampler.beta == pytest.approx(expected_beta)
        assert sampler.num_samples == call
        slots, weights = sampler.sample(256, rng)
        assert set(slots.tolist()) == {0, 1}
        # Normalised by the batch max (slot 0's weight): slot 1 gets ratio^-beta.
        assert weights[slots == 1][0] == pytest.approx(ratio**-expected_beta, rel=1e-12)
        assert np.all(weights[slots == 0] == 1.0)
    assert sampler.beta == 1.0

    assert PrioritizedSampler(2, beta_start=0.1, beta_end=0.9, beta_steps=0).beta == 0.9


def test_new_items_enter_at_the_current_max_priority() -> None:
    alpha, epsilon = 0.5, 0.0
    sampler = PrioritizedSampler(capacity=6, alpha=alpha, epsilon=epsilon)
    sampler.on_insert(0)
    assert stored_priorities(sampler)[0] == 1.0  # empty buffer: priority 1

    sampler.update_priorities([0], [9.0])
    sampler.on_insert(1)
    assert stored_priorities(sampler)[1] == pytest.approx(3.0)  # 9^0.5, the max so far

    sampler.update_priorities([0, 1], [0.25, 4.0])
    sampler.on_insert(2)
    assert stored_priorities(sampler)[2] == pytest.approx(2.0)

    # The max follows priorities down: after slot 1 and 2 shrink, new data does not enter at 3.
    sampler.update_priorities([1, 2], [0.04, 0.16])
    sampler.on_insert(3)
    assert stored_priorities(sampler)[3] == pytest.approx(0.5)  # slot 0: 0.25^0.5

    # ... and after the top item is evicted.
    sampler.on_evict(0)
    sampler.on_insert(4)
    assert stored_priorities(sampler)[4] == pytest.approx(0.5)  # slot 3 is the max now
    sampler.on_evict(3)
    sampler.on_evict(4)
    sampler.on_insert(5)
    assert stored_priorities(sampler)[5] == pytest.approx(0.4)  # slot 2: 0.16^0.5


def test_evicted_slot_is_never_sampled_until_reinserted() -> None:
    priorities = np.array([1.0, 50.0, 1.0, 1.0])
    sampler = filled_prioritized(priorities)
    rng = np.random.default_rng(6)
    sampler.on_evict(1)
    # A late priority write-back for the evicted slot must not bring it back.
    sampler.update_priorities([1, 2], [100.0, 1.0])
    for _ in range(20):
        slots, _ = sampler.sample(1000, rng)
        assert 1 not in slots
    assert stored_priorities(sampler)[1] == 0.0

    sampler.on_insert(1)  # reused: enters at the current max and is drawable again
    slots, _ = sampler.sample(1000, rng)
    assert 1 in slots


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, -0.5])
@pytest.mark.parametrize("make", [PrioritizedSampler, UniformSampler])
def test_bad_priorities_are_rejected_naming_the_slot(make: type, bad: float) -> None:
    sampler = make(8)
    for slot in range(4):
        sampler.on_insert(slot)
    before = copy.deepcopy(sampler.state_dict())
    with pytest.raises(ValueError, match=r"priority for slot 3 is"):
        sampler.update_priorities([0, 3, 2], [1.0, bad, 2.0])
    # Validation happens before any write: the good priorities were not applied either.
    after = sampler.state_dict()
    for key, value in before.items():
        np.testing.assert_array_equal(after[key], value)


@pytest.mark.parametrize("make", [PrioritizedSampler, UniformSampler])
def test_malformed_calls_are_rejected(make: type) -> None:
    sampler = make(4)
    with pytest.raises(EmptyReplayError, match="empty replay buffer"):
        sampler.sample(1, np.random.default_rng(0))
    sampler.on_insert(0)
    with pytest.raises(ValueError, match="already holds an item"):
        sampler.on_insert(0)
    with pytest.raises(ValueError, match="holds no item"):
        sampler.on_evict(1)
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        sampler.sample(0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="2 priorities for 1 slots"):
        sampler.update_priorities([0], [1.0, 2.0])
    with pytest.raises(ValueError, match="slot 4 is out of range"):
        sampler.update_priorities([4], [1.0])


def test_all_zero_priorities_without_epsilon_are_reported() -> None:
    sampler = filled_prioritized(np.zeros(3), epsilon=0.0)
    with pytest.raises(ValueError, match="epsilon > 0"):
        sampler.sample(1, np.random.default_rng(0))


def exercise(sampler: Sampler, rng: np.random.Generator, steps: range) -> list[np.ndarray]:
    """A fixed script of ring-style inserts and evictions, samples and write-backs; returns what
    it drew."""
    drawn = []
    for step in steps:
        slot = step % sampler.capacity
        if step >= sampler.capacity:
            sampler.on_evict(slot)
        sampler.on_insert(slot)
        slots, weights = sampler.sample(8, rng)
        drawn += [slots, weights]
        sampler.update_priorities(slots, rng.exponential(size=slots.size))
    return drawn


@pytest.mark.parametrize("make", [PrioritizedSampler, UniformSampler])
def test_state_dict_round_trip_continues_identically(make: type) -> None:
    original = make(16)
    rng = np.random.default_rng(7)
    exercise(original, rng, range(40))

    state = copy.deepcopy(original.state_dict())
    restored = make(16)
    restored.load_state_dict(state)
    rng_copy = copy.deepcopy(rng)
    for left, right in zip(
        exercise(original, rng, range(40, 70)),
        exercise(restored, rng_copy, range(40, 70)),
        strict=True,
    ):
        np.testing.assert_array_equal(left, right)


def test_prioritized_checkpoint_keeps_the_beta_schedule() -> None:
    sampler = filled_prioritized(np.ones(4), beta_steps=10)
    for _ in range(3):
        sampler.sample(2, np.random.default_rng(0))
    restored = PrioritizedSampler(4, beta_steps=10)
    restored.load_state_dict(sampler.state_dict())
    assert restored.num_samples == 3
    assert restored.beta == sampler.beta


def test_checkpoint_from_another_configuration_is_rejected() -> None:
    state = filled_prioritized(np.ones(4), alpha=0.6).state_dict()
    with pytest.raises(ValueError, match="alpha=0.6"):
        PrioritizedSampler(4, alpha=0.7).load_state_dict(state)
    with pytest.raises(ValueError, match="capacity 4 does not match"):
        PrioritizedSampler(5, alpha=0.6).load_state_dict(state)
    with pytest.raises(ValueError, match="capacity 4 does not match"):
        UniformSampler(5).load_state_dict(UniformSampler(4).state_dict())
