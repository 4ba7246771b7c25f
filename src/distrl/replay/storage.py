"""Where replay items live: a bounded store addressed by integer *slots*.

The replay buffer is split the TorchRL way: a storage that only keeps items, and a sampler that only
decides which slots to draw. They share nothing but slot numbers, so the storage tells the buffer
which slot an item went to and which slot (if any) it overwrote, and the buffer forwards both to
the sampler. An on-disk storage can replace :class:`RingStorage` by following :class:`Storage`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike

T = TypeVar("T")


def check_slots(slots: ArrayLike, capacity: int) -> np.ndarray:
    """Return ``slots`` as a 1-D ``int64`` array after checking every slot is in ``[0, capacity)``.

    Slots arrive from learners over the network and index numpy arrays directly; a float or an
    out-of-range slot would otherwise be truncated or wrap around (``-1`` is the last leaf) and
    silently change the wrong item's priority.

    >>> check_slots([0, 3], capacity=4)
    array([0, 3])
    """
    array = np.atleast_1d(np.asarray(slots))
    if array.ndim != 1:
        raise ValueError(f"slots must be a scalar or 1-D array, got shape {array.shape}")
    if array.size == 0:
        return np.zeros(0, dtype=np.int64)
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"slots must be integers, got dtype {array.dtype}")
    out_of_range = (array < 0) | (array >= capacity)
    if out_of_range.any():
        bad = array[np.flatnonzero(out_of_range)[0]]
        raise ValueError(f"slot {bad} is out of range: slots must be in [0, {capacity})")
    return array.astype(np.int64, copy=False)


def check_nonnegative(slots: np.ndarray, values: np.ndarray, what: str, hint: str = "") -> None:
    """Raise ``ValueError`` naming the first slot whose value is NaN, infinite or negative.

    Such a value in a sum tree would poison every total above it and so every later draw.
    """
    invalid = ~np.isfinite(values) | (values < 0)
    if invalid.any():
        first = np.flatnonzero(invalid)[0]
        raise ValueError(
            f"{what} for slot {slots[first]} is {values[first]}; it must be finite and >= 0"
            + (f" ({hint})" if hint else "")
        )


@runtime_checkable
class Storage(Protocol[T]):
    """What :class:`~distrl.replay.buffer.ReplayBuffer` needs from a store of items."""

    @property
    def capacity(self) -> int: ...

    def add(self, item: T) -> tuple[int, int | None]:
        """Store ``item``; return its slot and the slot whose item was evicted (or ``None``)."""
        ...

    def __getitem__(self, slot: int) -> T: ...

    def __len__(self) -> int: ...

    def slots(self) -> list[int]: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: Mapping[str, Any]) -> None: ...


class RingStorage(Generic[T]):
    """A fixed-capacity in-memory store that overwrites its oldest item when full.

    Online RL wants the freshest data: once the buffer is full a new trajectory window replaces the
    oldest one, and the returned ``evicted`` slot lets the sampler drop that slot's priority so
    the stale item can never be drawn again. Because items are never removed except by being
    overwritten, the live slots are always ``0 .. len - 1``.

    >>> storage = RingStorage(capacity=2)
    >>> storage.add("a"), storage.add("b"), storage.add("c")
    ((0, None), (1, None), (0, 0))
    >>> storage[0], storage.slots()
    ('c', [1, 0])
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"RingStorage capacity must be >= 1, got {capacity}")
        self._capacity = int(capacity)
        self._items: list[Any] = [None] * self._capacity
        self._next_slot = 0
        self._size = 0

    @property
    def capacity(self) -> int:
        return self._capacity

    def add(self, item: T) -> tuple[int, int | None]:
        """Store ``item`` in the oldest slot; return ``(slot, evicted_slot_or_None)``.

        When the storage is full the evicted slot is the slot just written (a ring overwrites in
        place), and the caller must treat it as a different item from then on.
        """
        slot = self._next_slot
        evicted = slot if self._size == self._capacity else None
        self._items[slot] = item
        self._next_slot = (slot + 1) % self._capacity
        self._size = min(self._size + 1, self._capacity)
        return slot, evicted

    def __getitem__(self, slot: int) -> T:
        index = int(slot)
        if not 0 <= index < self._size:
            raise IndexError(
                f"slot {slot} holds no item: live slots are 0..{self._size - 1} "
                f"(capacity {self._capacity})"
            )
        return self._items[index]

    def __len__(self) -> int:
        return self._size

    def slots(self) -> list[int]:
        """The live slots, oldest item first (the order they will be overwritten in)."""
        if self._size < self._capacity:
            return list(range(self._size))
        return [(self._next_slot + offset) % self._capacity for offset in range(self._capacity)]

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume, items included.

        The items are the same objects the storage holds (not deep copies): replay items are
        treated as immutable once added, and copying a full buffer of screenshots for every
        checkpoint would double peak memory. Pickle the dict to persist it.
        """
        return {
            "capacity": self._capacity,
            "next_slot": self._next_slot,
            "size": self._size,
            "items": list(self._items[: self._size]),
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore a :meth:`state_dict`, keeping every item in the slot it had (samplers refer to
        items by slot, so slots must survive a checkpoint)."""
        if state["capacity"] != self._capacity:
            raise ValueError(
                f"checkpoint storage capacity {state['capacity']} does not match this storage's "
                f"capacity {self._capacity}; build the storage with capacity={state['capacity']}"
            )
        items = list(state["items"])
        size, next_slot = int(state["size"]), int(state["next_slot"])
        consistent = len(items) == size <= self._capacity and 0 <= next_slot < self._capacity
        # Until the ring is full, the next slot to write is the first empty one.
        if not consistent or (size < self._capacity and next_slot != size):
            raise ValueError(
                f"corrupt storage checkpoint: {len(items)} items for size {size}, "
                f"next_slot {next_slot} with capacity {self._capacity}"
            )
        self._items = items + [None] * (self._capacity - size)
        self._size = size
        self._next_slot = next_slot
