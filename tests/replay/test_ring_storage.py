"""RingStorage: slots, eviction of the oldest item, checkpoints."""

from __future__ import annotations

import numpy as np
import pytest

from distrl.replay import RingStorage, Storage
from distrl.replay.storage import check_slots


def test_fills_then_overwrites_the_oldest() -> None:
    storage: RingStorage[str] = RingStorage(3)
    assert isinstance(storage, Storage)
    assert [storage.add(x) for x in "abc"] == [(0, None), (1, None), (2, None)]
    assert len(storage) == 3 and storage.slots() == [0, 1, 2]
    assert storage.add("d") == (0, 0)
    assert storage.add("e") == (1, 1)
    assert len(storage) == 3
    assert storage.slots() == [2, 0, 1]  # oldest first
    assert [storage[slot] for slot in storage.slots()] == ["c", "d", "e"]
    assert storage[np.int64(0)] == "d"


def test_items_may_be_none() -> None:
    storage: RingStorage[None] = RingStorage(2)
    storage.add(None)
    assert storage[0] is None
    with pytest.raises(IndexError, match="slot 1 holds no item"):
        storage[1]


def test_empty_slots_and_bad_capacity_are_rejected() -> None:
    storage: RingStorage[int] = RingStorage(4)
    storage.add(1)
    for slot in (1, 4, -1):
        with pytest.raises(IndexError, match=f"slot {slot} holds no item"):
            storage[slot]
    with pytest.raises(ValueError, match="capacity must be >= 1"):
        RingStorage(0)


@pytest.mark.parametrize("num_added", [0, 2, 5, 11])
def test_state_dict_round_trip_keeps_slots_and_the_next_write(num_added: int) -> None:
    storage: RingStorage[int] = RingStorage(5)
    for k in range(num_added):
        storage.add(k)
    restored: RingStorage[int] = RingStorage(5)
    restored.load_state_dict(storage.state_dict())
    assert restored.slots() == storage.slots()
    assert [restored[s] for s in restored.slots()] == [storage[s] for s in storage.slots()]
    assert restored.add(99) == storage.add(99)


def test_a_removed_slot_stays_empty_until_the_ring_comes_round() -> None:
    storage: RingStorage[str] = RingStorage(3)
    for item in "abc":
        storage.add(item)
    storage.remove(1)
    assert len(storage) == 2 and storage.slots() == [0, 2]
    with pytest.raises(IndexError, match="slot 1 holds no item"):
        storage[1]
    with pytest.raises(IndexError, match="slot 1 holds no item"):
        storage.remove(1)
    assert storage.add("d") == (0, 0)  # the oldest is overwritten, not the hole
    assert storage.add("e") == (1, None)  # the hole is refilled in ring order: nothing evicted
    assert len(storage) == 3 and [storage[s] for s in storage.slots()] == ["c", "d", "e"]
    restored: RingStorage[str] = RingStorage(3)
    storage.remove(2)
    restored.load_state_dict(storage.state_dict())
    assert restored.slots() == [0, 1] and restored.add("f") == (2, None)


def test_corrupt_or_mismatched_checkpoints_are_rejected() -> None:
    storage: RingStorage[int] = RingStorage(3)
    storage.add(7)
    state = storage.state_dict()
    with pytest.raises(ValueError, match="build the storage with capacity=3"):
        RingStorage(4).load_state_dict(state)
    with pytest.raises(ValueError, match="corrupt storage checkpoint"):
        RingStorage(3).load_state_dict({**state, "next_slot": 3})
    with pytest.raises(ValueError, match="corrupt storage checkpoint"):
        RingStorage(3).load_state_dict({**state, "filled": [True, False]})
    with pytest.raises(ValueError, match="corrupt storage checkpoint"):
        RingStorage(3).load_state_dict({**state, "items": [1, 2]})


def test_check_slots() -> None:
    np.testing.assert_array_equal(check_slots(np.array([2, 0], dtype=np.int32), 3), [2, 0])
    assert check_slots(1, 3).tolist() == [1]
    assert check_slots([], 3).dtype == np.int64
    with pytest.raises(ValueError, match="1-D"):
        check_slots([[0]], 3)
    with pytest.raises(TypeError, match="integers"):
        check_slots([0.0], 3)
    with pytest.raises(ValueError, match="slot 3 is out of range"):
        check_slots([0, 3], 3)
