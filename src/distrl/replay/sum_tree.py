"""An array-based sum tree: O(log N) priority updates and proportional sampling, vectorised.

Prioritized replay draws slot ``i`` with probability ``p_i / sum(p)``. Drawing a uniform mass
``m`` in ``[0, total)`` and finding the leaf whose prefix-sum interval contains ``m`` does exactly
that, and a binary tree of partial sums finds the leaf in ``log2(N)`` steps instead of a linear
scan. Everything here works on whole batches at once (one numpy operation per tree level) because
the learner updates and samples hundreds of slots per step.

Layout: ``capacity`` is rounded up to a power of two ``B`` (the padding leaves stay 0 forever), so
every leaf is at the same depth. Node ``1`` is the root, node ``k`` has children ``2k`` and
``2k + 1``, and slot ``s`` is node ``B + s``. A second array of the same shape keeps the maximum
of each subtree so the largest live priority (where new items enter) is always at hand.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from distrl.replay.storage import check_nonnegative, check_slots


class SumTree:
    """Non-negative float64 values per slot, with their total, their maximum and prefix search.

    >>> tree = SumTree(capacity=3)
    >>> tree.update(np.array([0, 1, 2]), np.array([1.0, 0.0, 3.0]))
    >>> tree.total, tree.max_leaf
    (4.0, 3.0)
    >>> tree.find(np.array([0.5, 1.0, 3.99])).tolist()  # slot 1 has zero mass: never found
    [0, 2, 2]
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"SumTree capacity must be >= 1, got {capacity}")
        self._capacity = int(capacity)
        # Number of leaf positions: the smallest power of two >= capacity.
        self._base = 1 << (self._capacity - 1).bit_length()
        self._depth = self._base.bit_length() - 1
        self._sums = np.zeros(2 * self._base, dtype=np.float64)
        self._maxima = np.zeros(2 * self._base, dtype=np.float64)

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def total(self) -> float:
        """Sum of all leaves (the root), equal to ``leaf(all slots).sum()`` up to rounding."""
        return float(self._sums[1])

    @property
    def max_leaf(self) -> float:
        """The largest leaf value currently stored (0.0 when every leaf is 0).

        This is the current maximum, not the largest value ever written: when priorities shrink or
        the top item is evicted, the maximum follows them down.
        """
        return float(self._maxima[1])

    def leaf(self, slots: ArrayLike) -> np.ndarray:
        """The values stored at ``slots`` (a copy)."""
        return self._sums[check_slots(slots, self._capacity) + self._base]

    def update(self, slots: ArrayLike, values: ArrayLike) -> None:
        """Set ``leaf[slots] = values`` and refresh every ancestor.

        Each ancestor is recomputed as ``left + right`` from its children rather than adjusted by
        the difference ``new - old``: adding deltas accumulates rounding error over millions of
        updates (and can leave a tiny non-zero total after everything is evicted), recomputing
        keeps the root equal to the sum of the leaves up to one rounding per level.

        ``values`` broadcasts against ``slots``. When a slot appears more than once the last value
        wins, as with a sequence of scalar assignments.
        """
        slots = check_slots(slots, self._capacity)
        values = np.broadcast_to(np.asarray(values, dtype=np.float64), slots.shape)
        check_nonnegative(slots, values, "sum tree value")
        if slots.size == 0:
            return
        if slots.size > 1:
            # Keep the last occurrence of each slot: unique over the reversed arrays returns the
            # index of the first occurrence there, i.e. the last one in call order.
            slots, last = np.unique(slots[::-1], return_index=True)
            values = values[::-1][last]
        nodes = slots + self._base
        self._sums[nodes] = values
        self._maxima[nodes] = values
        for _ in range(self._depth):
            nodes = nodes >> 1
            if nodes.size > 1:
                # ``nodes`` is sorted (np.unique sorted the leaves, halving keeps order), so
                # duplicates are adjacent and dropping them needs no second sort.
                keep = np.empty(nodes.size, dtype=bool)
                keep[0] = True
                np.not_equal(nodes[1:], nodes[:-1], out=keep[1:])
                nodes = nodes[keep]
            left = nodes << 1
            self._sums[nodes] = self._sums[left] + self._sums[left + 1]
            self._maxima[nodes] = np.maximum(self._maxima[left], self._maxima[left + 1])

    def find(self, masses: ArrayLike) -> np.ndarray:
        """For each mass ``m``, the slot ``i`` with ``prefix(i) <= m < prefix(i) + leaf(i)``.

        ``prefix(i)`` is the sum of the leaves before ``i``, so a mass drawn uniformly from
        ``[0, total)`` returns slot ``i`` with probability ``leaf(i) / total``. A zero leaf owns an
        empty interval and is never returned, which is what makes eviction (setting a leaf to 0)
        safe. Masses at or above ``total`` (``rng.random() * total`` can round up to ``total``)
        return the last non-zero leaf; the descent also never steps into a subtree whose sum is 0,
        so rounding in the subtraction cannot land on a zero leaf either.
        """
        masses = np.atleast_1d(np.asarray(masses, dtype=np.float64))
        if masses.ndim != 1:
            raise ValueError(f"masses must be a scalar or 1-D array, got shape {masses.shape}")
        if self._sums[1] <= 0.0:
            raise ValueError("cannot search a sum tree whose leaves are all 0")
        invalid = ~np.isfinite(masses) | (masses < 0)
        if invalid.any():
            raise ValueError(f"masses must be finite and >= 0, got {masses[invalid][0]}")
        remaining = masses.copy()
        nodes = np.ones(masses.shape, dtype=np.int64)
        for _ in range(self._depth):
            left = nodes << 1
            left_sum = self._sums[left]
            go_right = (remaining >= left_sum) & (self._sums[left + 1] > 0.0)
            remaining = np.where(go_right, remaining - left_sum, remaining)
            nodes = left + go_right
        return nodes - self._base
