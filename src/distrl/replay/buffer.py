"""The replay buffer the learner talks to: a storage plus a sampler, kept in step.

The buffer owns no policy of its own. It forwards every insertion and eviction from the storage to
the sampler (so the sampler can never draw a slot whose item is gone), turns sampled slots back
into items, and passes the learner's fresh priorities to the sampler.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from distrl.replay.samplers import EmptyReplayError, Sampler
from distrl.replay.storage import Storage

T = TypeVar("T")


@dataclass(frozen=True)
class SampledBatch(Generic[T]):
    """One sampled batch.

    ``slots[k]`` is where ``items[k]`` lives; hand ``slots`` back to
    :meth:`ReplayBuffer.update_priorities` with the new priorities after the update.
    ``weights[k]`` is the importance weight to multiply item ``k``'s loss by.
    """

    items: list[T]
    slots: np.ndarray
    weights: np.ndarray

    def __len__(self) -> int:
        return len(self.items)


class ReplayBuffer(Generic[T]):
    """Items in a :class:`~distrl.replay.storage.Storage`, drawn by a
    :class:`~distrl.replay.samplers.Sampler`.

    >>> from distrl.replay import PrioritizedSampler, RingStorage
    >>> buffer = ReplayBuffer(RingStorage(capacity=2), PrioritizedSampler(capacity=2))
    >>> buffer.add("window-a"), buffer.add("window-b"), buffer.add("window-c")
    (0, 1, 0)
    >>> batch = buffer.sample(4, np.random.default_rng(0))
    >>> sorted(set(batch.items))  # window-a was overwritten and is never drawn
    ['window-b', 'window-c']
    >>> buffer.update_priorities(batch.slots, np.full(len(batch), 0.5))
    """

    def __init__(self, storage: Storage[T], sampler: Sampler) -> None:
        if storage.capacity != sampler.capacity:
            raise ValueError(
                f"storage capacity {storage.capacity} and sampler capacity {sampler.capacity} "
                "differ; build both with the same capacity"
            )
        if len(storage) != 0:
            raise ValueError(
                "the storage already holds items the sampler does not know about; start from an "
                "empty storage and restore a checkpoint with ReplayBuffer.load_state_dict"
            )
        self.storage = storage
        self.sampler = sampler

    @property
    def capacity(self) -> int:
        return self.storage.capacity

    def __len__(self) -> int:
        return len(self.storage)

    def add(self, item: T) -> int:
        """Store ``item`` (overwriting the oldest when full) and return its slot."""
        slot, evicted = self.storage.add(item)
        if evicted is not None:
            self.sampler.on_evict(evicted)
        self.sampler.on_insert(slot)
        return slot

    def remove(self, slots: ArrayLike) -> None:
        """Withdraw the items in ``slots`` from storage and sampler alike, so no sampler (uniform
        included) can draw them again; the replay uses it for windows that grew too stale."""
        for slot in np.atleast_1d(np.asarray(slots, dtype=np.int64)).tolist():
            self.storage.remove(slot)
            self.sampler.on_evict(slot)

    def sample(self, batch_size: int, rng: np.random.Generator) -> SampledBatch[T]:
        """Draw ``batch_size`` items with replacement.

        The caller passes the generator so that a seeded run, and a run resumed from a checkpoint
        with the generator's state, draws the same batches.
        """
        if len(self.storage) == 0:
            raise EmptyReplayError(
                "cannot sample from an empty replay buffer: add items first "
                "(a learner should wait until collectors have delivered some trajectories)"
            )
        slots, weights = self.sampler.sample(batch_size, rng)
        items = [self.storage[int(slot)] for slot in slots]
        return SampledBatch(items=items, slots=slots, weights=weights)

    def update_priorities(self, slots: ArrayLike, priorities: ArrayLike) -> None:
        """Write back raw priorities (>= 0) for sampled slots; NaN or inf raises ValueError."""
        self.sampler.update_priorities(slots, priorities)

    def state_dict(self) -> dict[str, Any]:
        return {"storage": self.storage.state_dict(), "sampler": self.sampler.state_dict()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.storage.load_state_dict(state["storage"])
        self.sampler.load_state_dict(state["sampler"])
