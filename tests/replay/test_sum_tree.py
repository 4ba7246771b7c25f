"""SumTree: totals stay exact sums of the leaves, and ``find`` agrees with a brute-force search."""

from __future__ import annotations

import numpy as np
import pytest

from distrl.replay import SumTree


def brute_force_find(leaves: np.ndarray, masses: np.ndarray) -> np.ndarray:
    """The first slot whose running sum exceeds the mass; masses >= total go to the last
    non-zero leaf (the documented clamp)."""
    cumulative = np.cumsum(leaves)
    found = np.searchsorted(cumulative, masses, side="right")
    last_positive = np.flatnonzero(leaves > 0)[-1]
    return np.minimum(found, last_positive)


@pytest.mark.parametrize("capacity", [1, 2, 37, 1000, 1024])
def test_total_matches_sum_of_leaves_after_many_random_updates(capacity: int) -> None:
    rng = np.random.default_rng(capacity)
    tree = SumTree(capacity)
    reference = np.zeros(capacity)
    for _ in range(2000):
        size = int(rng.integers(1, 33))
        slots = rng.integers(0, capacity, size=size)
        # Magnitudes spanning 12 orders, so that accumulated rounding would show.
        values = rng.lognormal(0.0, 4.0, size=size) * (rng.random(size) < 0.9)
        tree.update(slots, values)
        # Duplicated slots: the last value wins, as with sequential assignment.
        for slot, value in zip(slots, values, strict=True):
            reference[slot] = value
        np.testing.assert_array_equal(tree.leaf(np.arange(capacity)), reference)
        assert tree.total == pytest.approx(np.sum(reference), rel=1e-12, abs=0.0)
        assert tree.max_leaf == reference.max()


def test_total_after_eviction_returns_exactly_to_zero() -> None:
    rng = np.random.default_rng(1)
    capacity = 300
    tree = SumTree(capacity)
    tree.update(np.arange(capacity), rng.random(capacity) * 1e3)
    evicted = rng.permutation(capacity)
    for chunk in np.array_split(evicted, 30):
        tree.update(chunk, 0.0)
        leaves = tree.leaf(np.arange(capacity))
        assert tree.total == pytest.approx(np.sum(leaves), rel=1e-12, abs=0.0)
        assert tree.max_leaf == leaves.max()
    # Recomputing parents from children (not adding deltas) leaves no rounding residue.
    assert tree.total == 0.0
    assert tree.max_leaf == 0.0


def test_max_leaf_follows_the_current_maximum_down() -> None:
    tree = SumTree(5)
    tree.update([0, 1, 2], [1.0, 9.0, 4.0])
    assert tree.max_leaf == 9.0
    tree.update([1], [0.5])
    assert tree.max_leaf == 4.0


@pytest.mark.parametrize("capacity", [1, 5, 64, 777])
def test_find_matches_brute_force_with_exact_integer_leaves(capacity: int) -> None:
    # Integer leaves make every partial sum exact, so tree and cumsum must agree exactly,
    # including masses that sit on interval boundaries and the mass == total edge.
    rng = np.random.default_rng(capacity)
    leaves = rng.integers(0, 5, size=capacity).astype(np.float64)
    leaves[rng.integers(capacity)] = 3.0  # at least one non-zero leaf
    tree = SumTree(capacity)
    tree.update(np.arange(capacity), leaves)
    total = leaves.sum()
    boundaries = np.cumsum(leaves)
    masses = np.concatenate(
        [rng.random(5000) * total, boundaries, boundaries - 0.5, [0.0, total, total * 1.5]]
    )
    masses = masses[masses >= 0]
    found = tree.find(masses)
    np.testing.assert_array_equal(found, brute_force_find(leaves, masses))
    assert np.all(leaves[found] > 0), "a zero-priority leaf was returned"


def test_find_matches_brute_force_with_random_float_leaves() -> None:
    rng = np.random.default_rng(7)
    capacity = 1000
    leaves = rng.exponential(size=capacity) * (rng.random(capacity) < 0.7)
    tree = SumTree(capacity)
    tree.update(np.arange(capacity), leaves)
    masses = rng.random(20_000) * tree.total
    found = tree.find(masses)
    expected = brute_force_find(leaves, masses)
    assert np.all(leaves[found] > 0)
    # Tree and cumsum round differently; they may only disagree on a mass within rounding
    # distance of an interval boundary.
    cumulative = np.cumsum(leaves)
    disagree = found != expected
    distance = np.abs(cumulative[np.minimum(found, expected)[disagree]] - masses[disagree])
    assert np.all(distance < 1e-9 * tree.total)
    assert disagree.mean() < 1e-3


def test_find_at_total_with_trailing_zero_leaves_returns_last_positive_leaf() -> None:
    tree = SumTree(6)
    tree.update([0, 1, 2, 3, 4, 5], [0.1, 0.2, 0.3, 0.0, 0.0, 0.0])
    total = tree.total
    for mass in (total, np.nextafter(total, 0.0), np.nextafter(total, np.inf), 10.0):
        assert tree.find([mass]).tolist() == [2]


def test_find_skips_zero_leaves_at_interval_edges() -> None:
    tree = SumTree(5)
    tree.update([0, 1, 2, 3, 4], [0.0, 1.0, 0.0, 0.0, 1.0])
    assert tree.find([0.0, 0.5, 1.0, 1.5, 2.0]).tolist() == [1, 1, 4, 4, 4]


def test_invalid_inputs_are_rejected() -> None:
    tree = SumTree(4)
    with pytest.raises(ValueError, match="leaves are all 0"):
        tree.find([0.0])
    with pytest.raises(ValueError, match="slot 2 is nan"):
        tree.update([1, 2], [1.0, np.nan])
    with pytest.raises(ValueError, match="slot 1 is -1.0"):
        tree.update([1], [-1.0])
    with pytest.raises(ValueError, match="slot 4 is out of range"):
        tree.update([4], [1.0])
    with pytest.raises(ValueError, match="slot -1 is out of range"):
        tree.leaf([-1])
    with pytest.raises(TypeError, match="integers"):
        tree.update([1.5], [1.0])
    tree.update([0], [1.0])
    with pytest.raises(ValueError, match="masses must be finite"):
        tree.find([np.inf])
    with pytest.raises(ValueError, match="capacity must be >= 1"):
        SumTree(0)
