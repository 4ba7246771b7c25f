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

    def remove(self, slot: int) -> None:
        """Drop the item in ``slot`` before it would be overwritten."""
        ...

    def __getitem__(self, slot: int) -> T: ...

    def __len__(self) -> int: ...

    def slots(self) -> list[int]: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: Mapping[str, Any]) -> None: ...


class RingStorage(Generic[T]):
    """A fixed-capacity in-memory store that overwrites its oldest item when full.

    Online RL wants the freshest data: once the ring comes round, a new trajectory window replaces
    the oldest one, and the returned ``evicted`` slot lets the sampler forget that slot so the old
    item can never be drawn again. An item can also leave early through :meth:`remove` (the
    replay withdraws windows that grew too stale to train on); its slot then stays empty until the
    ring comes round to it, so the write order, and with it which item is oldest, never changes.

    >>> storage = RingStorage(capacity=2)
    >>> storage.add("a"), storage.add("b"), storage.add("c")
    ((0, None), (1, None), (0, 0))
    >>> storage[0], storage.slots()
    ('c', [1, 0])
    >>> storage.remove(1); len(storage), storage.slots(), storage.add("d")
    (1, [0], (1, None))
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"RingStorage capacity must be >= 1, got {capacity}")
        self._capacity = int(capacity)
        self._items: list[Any] = [None] * self._capacity
        self._filled = np.zeros(self._capacity, dtype=bool)
        self._next_slot = 0
        self._size = 0

    @property
    def capacity(self) -> int:
        return self._capacity

    def add(self, item: T) -> tuple[int, int | None]:
        """Store ``item`` in the oldest slot; return ``(slot, evicted_slot_or_None)``.

        When that slot still holds an item, the evicted slot is the slot just written (a ring
        overwrites in place), and the caller must treat it as a different item from then on.
        """
        slot = self._next_slot
        evicted = slot if self._filled[slot] else None
        self._items[slot] = item
        self._filled[slot] = True
        self._next_slot = (slot + 1) % self._capacity
        if evicted is None:
            self._size += 1
        return slot, evicted

    def remove(self, slot: int) -> None:
        """Drop the item in ``slot`` now (and release it), ahead of the ring's overwrite."""
        index = self._check_filled(slot)
        self._items[index] = None
        self._filled[index] = False
        self._size -= 1

    def _check_filled(self, slot: int) -> int:
        index = int(slot)
        if not (0 <= index < self._capacity and self._filled[index]):
            raise IndexError(
                f"slot {slot} holds no item ({self._size} items in capacity {self._capacity})"
            )
        return index

    def __getitem__(self, slot: int) -> T:
        return self._items[self._check_filled(slot)]

    def __len__(self) -> int:
        return self._size

    def slots(self) -> list[int]:
        """The live slots, oldest item first (the order they will be overwritten in)."""
        ring_order = np.roll(np.arange(self._capacity), -self._next_slot)
        return ring_order[self._filled[ring_order]].tolist()

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume, items included.

        The items are the same objects the storage holds (not deep copies): replay items are
        treated as immutable once added, and copying a full buffer of screenshots for every
        checkpoint would double peak memory. Pickle the dict to persist it.
        """
        return {
            "capacity": self._capacity,
            "next_slot": self._next_slot,
            "filled": self._filled.copy(),
            "items": list(self._items),
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
        filled = np.asarray(state["filled"], dtype=bool)
        next_slot = int(state["next_slot"])
        consistent = (
            len(items) == filled.shape[0] == self._capacity and 0 <= next_slot < self._capacity
        )
        if not consistent:
            raise ValueError(
                f"corrupt storage checkpoint: {len(items)} items, {filled.shape[0]} slot flags and "
                f"next_slot {next_slot} for capacity {self._capacity}"
            )
        self._items = [item if full else None for item, full in zip(items, filled, strict=True)]
        self._filled = filled.copy()
        self._size = int(filled.sum())
        self._next_slot = next_slot
