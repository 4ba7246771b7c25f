"""Samplers decide which stored slots a batch draws, and how much each draw counts.

A sampler never sees items, only slot numbers: the buffer tells it when a slot gains an item
(:meth:`Sampler.on_insert`) or loses one (:meth:`Sampler.on_evict`), asks it for slots with
importance weights, and passes on the priorities the learner computes. That keeps uniform and
prioritized replay interchangeable behind one interface (docs/design.md §7).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike

from distrl.replay.storage import check_nonnegative, check_slots
from distrl.replay.sum_tree import SumTree


class EmptyReplayError(RuntimeError):
    """Raised when a batch is requested before any item was added.

    Its own type so a learner can catch it and wait for collectors instead of crashing.
    """


@runtime_checkable
class Sampler(Protocol):
    """What :class:`~distrl.replay.buffer.ReplayBuffer` needs from a sampler."""

    @property
    def capacity(self) -> int: ...

    def on_insert(self, slot: int) -> None:
        """``slot`` now holds a new item."""
        ...

    def on_evict(self, slot: int) -> None:
        """``slot``'s item is gone: it must not be sampled until it is inserted again."""
        ...

    def sample(self, batch_size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``batch_size`` live slots (with replacement); return ``(slots, weights)``."""
        ...

    def update_priorities(self, slots: ArrayLike, priorities: ArrayLike) -> None:
        """Record fresh raw priorities (>= 0) for ``slots``."""
        ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: Mapping[str, Any]) -> None: ...


def _check_priorities(
    slots: ArrayLike, priorities: ArrayLike, capacity: int
) -> tuple[np.ndarray, np.ndarray]:
    """Validate a priority write-back; name the first bad slot so a NaN loss is traced quickly."""
    slots = check_slots(slots, capacity)
    priorities = np.atleast_1d(np.asarray(priorities, dtype=np.float64))
    if priorities.shape != slots.shape:
        raise ValueError(
            f"got {priorities.size} priorities for {slots.size} slots; pass one priority per slot"
        )
    check_nonnegative(
        slots, priorities, "priority", "a NaN or inf usually means the loss diverged in that update"
    )
    return slots, priorities


def _check_batch_size(batch_size: int) -> int:
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    return int(batch_size)


def _empty_error() -> EmptyReplayError:
    return EmptyReplayError(
        "cannot sample from an empty replay buffer: add items first "
        "(a learner should wait until collectors have delivered some trajectories)"
    )


class UniformSampler:
    """Every live slot equally likely; importance weights are all 1.

    Live slots are kept in a dense array (with each slot's position in it) so that insert, evict
    and sample are O(1) per slot whatever the capacity. Priorities are validated, so switching
    samplers never hides a NaN loss, and then ignored.

    >>> sampler = UniformSampler(capacity=4)
    >>> for slot in (0, 1, 2):
    ...     sampler.on_insert(slot)
    >>> sampler.on_evict(1)
    >>> slots, weights = sampler.sample(5, np.random.default_rng(0))
    >>> sorted(set(slots.tolist())) <= [0, 2], weights.tolist()
    (True, [1.0, 1.0, 1.0, 1.0, 1.0])
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"UniformSampler capacity must be >= 1, got {capacity}")
        self._capacity = int(capacity)
        self._live = np.zeros(self._capacity, dtype=np.int64)  # live slots, first _size entries
        self._position = np.full(self._capacity, -1, dtype=np.int64)  # index in _live, or -1
        self._size = 0

    @property
    def capacity(self) -> int:
        return self._capacity

    def on_insert(self, slot: int) -> None:
        slot = int(check_slots(slot, self._capacity)[0])
        if self._position[slot] >= 0:
            raise ValueError(f"slot {slot} already holds an item; call on_evict({slot}) first")
        self._live[self._size] = slot
        self._position[slot] = self._size
        self._size += 1

    def on_evict(self, slot: int) -> None:
        slot = int(check_slots(slot, self._capacity)[0])
        index = self._position[slot]
        if index < 0:
            raise ValueError(f"slot {slot} holds no item and cannot be evicted")
        # Swap-remove: move the last live slot into the hole.
        last = self._live[self._size - 1]
        self._live[index] = last
        self._position[last] = index
        self._position[slot] = -1
        self._size -= 1

    def sample(self, batch_size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        batch_size = _check_batch_size(batch_size)
        if self._size == 0:
            raise _empty_error()
        slots = self._live[rng.integers(0, self._size, size=batch_size)]
        return slots, np.ones(batch_size, dtype=np.float64)

    def update_priorities(self, slots: ArrayLike, priorities: ArrayLike) -> None:
        _check_priorities(slots, priorities, self._capacity)

    def state_dict(self) -> dict[str, Any]:
        # The order of the dense array decides which slot an rng draw maps to, so it is saved
        # as is: a restored sampler then draws exactly what the original would have.
        return {"capacity": self._capacity, "live_slots": self._live[: self._size].copy()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        if state["capacity"] != self._capacity:
            raise ValueError(
                f"checkpoint sampler capacity {state['capacity']} does not match this sampler's "
                f"capacity {self._capacity}"
            )
        live = check_slots(state["live_slots"], self._capacity)
        if np.unique(live).size != live.size:
            raise ValueError("corrupt sampler checkpoint: a live slot is listed twice")
        self._live = np.zeros(self._capacity, dtype=np.int64)
        self._live[: live.size] = live
        self._position = np.full(self._capacity, -1, dtype=np.int64)
        self._position[live] = np.arange(live.size)
        self._size = int(live.size)


class PrioritizedSampler:
    """Proportional prioritized replay (Schaul et al., 2016) over a :class:`SumTree`.

    * Slot ``i`` is drawn with probability ``P(i) = q_i / sum_j q_j``, where
      ``q_i = (p_i + epsilon)^alpha`` and ``p_i`` is the raw priority the learner wrote back
      (docs/design.md §7: a mix of mean |TD error|, mean importance ratio and mean entropy).
      ``epsilon`` keeps items with ``p = 0`` drawable; ``alpha = 0`` is uniform, ``alpha = 1`` fully
      proportional. Draws are i.i.d. (one uniform mass per draw, no stratification), so every
      draw has exactly the distribution ``P``.
    * A new item enters at the current maximum ``q`` of the live items (1.0 in an empty buffer):
      it has never been trained on, so it should be seen soon, and once the learner writes its
      real priority back it competes fairly. The *current* maximum, not the largest ever seen:
      otherwise, once priorities shrink as the critic improves, fresh data would crowd out
      everything else forever.
    * Importance weights ``w_i = (N * P(i))^-beta`` with ``N`` the number of live items correct
      the bias of non-uniform sampling. Following the usual convention (Schaul et al., Alg. 1)
      they are divided by their maximum over the batch, so they lie in (0, 1] and only ever scale
      a gradient down. The batch maximum, rather than the buffer-wide one, keeps a single
      near-zero priority elsewhere in the buffer from shrinking every update.
    * ``beta`` is annealed linearly from ``beta_start`` to ``beta_end`` and then stays at
      ``beta_end``: the bias only matters once learning converges, and full correction early
      would slow it down. Over ``beta_steps`` calls to :meth:`sample` (a run's update budget),
      or, with ``beta_steps=None``, over the share of a wall-clock budget its owner reports with
      :meth:`set_progress` (a run with minutes but no update budget; docs/design.md §7.6).

    >>> sampler = PrioritizedSampler(capacity=4, alpha=1.0, beta_start=1.0, epsilon=0.0)
    >>> for slot in (0, 1):
    ...     sampler.on_insert(slot)
    >>> sampler.update_priorities([0, 1], [3.0, 1.0])
    >>> sampler.probabilities([0, 1]).tolist()
    [0.75, 0.25]
    >>> slots, weights = sampler.sample(1000, np.random.default_rng(0))
    >>> sorted(set(np.round(weights, 4).tolist()))  # (2 * 0.75)^-1 / (2 * 0.25)^-1 = 1/3
    [0.3333, 1.0]
    """

    def __init__(
        self,
        capacity: int,
        alpha: float = 0.6,
        beta_start: float = 0.4,
        beta_end: float = 1.0,
        beta_steps: int | None = 100_000,
        epsilon: float = 1e-6,
    ) -> None:
        if capacity < 1:
            raise ValueError(f"PrioritizedSampler capacity must be >= 1, got {capacity}")
        if not alpha >= 0:
            raise ValueError(f"alpha must be >= 0, got {alpha}")
        if not (beta_start >= 0 and beta_end >= 0):
            raise ValueError(f"beta_start and beta_end must be >= 0, got {beta_start}, {beta_end}")
        if beta_steps is not None and beta_steps < 0:
            raise ValueError(
                f"beta_steps must be >= 0 (0 means beta_end at once), got {beta_steps}"
            )
        if not epsilon >= 0:
            raise ValueError(f"epsilon must be >= 0, got {epsilon}")
        self._tree = SumTree(capacity)
        self._live = np.zeros(capacity, dtype=bool)
        self._num_live = 0
        self._num_samples = 0
        self._progress = 0.0
        self.alpha = float(alpha)
        self.beta_start = float(beta_start)
        self.beta_end = float(beta_end)
        self.beta_steps = None if beta_steps is None else int(beta_steps)
        self.epsilon = float(epsilon)

    @property
    def capacity(self) -> int:
        return self._tree.capacity

    @property
    def beta(self) -> float:
        """The beta the next :meth:`sample` call will use."""
        if self.beta_steps is None:
            fraction = self._progress
        elif self.beta_steps == 0:
            return self.beta_end
        else:
            fraction = min(self._num_samples / self.beta_steps, 1.0)
        return self.beta_start + fraction * (self.beta_end - self.beta_start)

    @property
    def progress(self) -> float:
        """The budget share last reported with :meth:`set_progress` (in [0, 1])."""
        return self._progress

    def set_progress(self, fraction: float) -> None:
        """Report how much of the run's wall-clock budget is spent; with ``beta_steps=None``
        beta follows it (past the budget it stays at ``beta_end``)."""
        if not fraction >= 0:
            raise ValueError(f"budget progress must be >= 0, got {fraction}")
        self._progress = min(float(fraction), 1.0)

    @property
    def num_samples(self) -> int:
        """How many times :meth:`sample` has been called (drives the beta schedule)."""
        return self._num_samples

    def probabilities(self, slots: ArrayLike) -> np.ndarray:
        """``P(i)`` for ``slots``: the chance that one draw returns each slot."""
        total = self._tree.total
        if total <= 0.0:
            raise _empty_error()
        return self._tree.leaf(slots) / total

    def on_insert(self, slot: int) -> None:
        slot = int(check_slots(slot, self.capacity)[0])
        if self._live[slot]:
            raise ValueError(f"slot {slot} already holds an item; call on_evict({slot}) first")
        initial = self._tree.max_leaf if self._num_live > 0 else 0.0
        self._tree.update(slot, initial if initial > 0.0 else 1.0)
        self._live[slot] = True
        self._num_live += 1

    def on_evict(self, slot: int) -> None:
        slot = int(check_slots(slot, self.capacity)[0])
        if not self._live[slot]:
            raise ValueError(f"slot {slot} holds no item and cannot be evicted")
        self._tree.update(slot, 0.0)  # a zero leaf is never found, so never sampled
        self._live[slot] = False
        self._num_live -= 1

    def sample(self, batch_size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        batch_size = _check_batch_size(batch_size)
        if self._num_live == 0:
            raise _empty_error()
        total = self._tree.total
        if total <= 0.0:
            raise ValueError(
                "every item in the buffer has priority 0, so none can be drawn; "
                "use epsilon > 0 so that zero raw priorities stay drawable"
            )
        beta = self.beta
        slots = self._tree.find(rng.random(batch_size) * total)
        probabilities = self._tree.leaf(slots) / total
        weights = (self._num_live * probabilities) ** -beta
        weights /= weights.max()
        self._num_samples += 1
        return slots, weights

    def update_priorities(self, slots: ArrayLike, priorities: ArrayLike) -> None:
        """Store ``(p + epsilon)^alpha`` for each raw priority ``p``.

        Slots that no longer hold an item are skipped: with asynchronous collectors an item can be
        evicted between the learner sampling it and writing its priority back, and resurrecting
        the empty slot would make it drawable again. (A slot that was evicted *and refilled* in
        between gets the stale priority; it is corrected the next time it is sampled.) When a
        slot appears twice, the last priority wins.
        """
        slots, priorities = _check_priorities(slots, priorities, self.capacity)
        live = self._live[slots]
        self._tree.update(slots[live], (priorities[live] + self.epsilon) ** self.alpha)

    def state_dict(self) -> dict[str, Any]:
        return {
            "capacity": self.capacity,
            "alpha": self.alpha,
            "stored_priorities": self._tree.leaf(np.arange(self.capacity)),
            "live": self._live.copy(),
            "num_samples": self._num_samples,
            "progress": self._progress,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore priorities, live slots and the beta schedule's progress.

        Hyperparameters come from the constructor, except that ``alpha`` must match: the stored
        priorities are already raised to the checkpoint's ``alpha``.
        """
        if state["capacity"] != self.capacity:
            raise ValueError(
                f"checkpoint sampler capacity {state['capacity']} does not match this sampler's "
                f"capacity {self.capacity}"
            )
        if state["alpha"] != self.alpha:
            raise ValueError(
                f"checkpoint alpha {state['alpha']} differs from this sampler's alpha "
                f"{self.alpha}; stored priorities are p^alpha, so build the sampler with "
                f"alpha={state['alpha']}"
            )
        live = np.asarray(state["live"], dtype=bool)
        stored = np.asarray(state["stored_priorities"], dtype=np.float64)
        if live.shape != (self.capacity,) or stored.shape != (self.capacity,):
            raise ValueError(
                f"corrupt sampler checkpoint: expected arrays of length {self.capacity}, "
                f"got {live.shape} and {stored.shape}"
            )
        tree = SumTree(self.capacity)
        tree.update(np.arange(self.capacity), np.where(live, stored, 0.0))
        self._tree = tree
        self._live = live.copy()
        self._num_live = int(live.sum())
        self._num_samples = int(state["num_samples"])
        self._progress = float(state.get("progress", 0.0))  # absent before budget annealing
