"""ReplayBuffer: storage and sampler kept in step, empty-buffer errors, checkpoint round trips."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from distrl.replay import (
    EmptyReplayError,
    PrioritizedSampler,
    ReplayBuffer,
    RingStorage,
    SampledBatch,
    UniformSampler,
)

SAMPLERS = [PrioritizedSampler, UniformSampler]


def make_buffer(make_sampler: type, capacity: int = 8) -> ReplayBuffer[str]:
    return ReplayBuffer(RingStorage(capacity), make_sampler(capacity))


@pytest.mark.parametrize("make_sampler", SAMPLERS)
def test_add_returns_slots_and_sample_returns_their_items(make_sampler: type) -> None:
    buffer = make_buffer(make_sampler, capacity=4)
    assert [buffer.add(f"item-{k}") for k in range(3)] == [0, 1, 2]
    assert len(buffer) == 3
    batch = buffer.sample(32, np.random.default_rng(0))
    assert isinstance(batch, SampledBatch)
    assert len(batch) == 32 and batch.slots.shape == (32,) and batch.weights.shape == (32,)
    assert batch.items == [f"item-{slot}" for slot in batch.slots]
    assert np.all((batch.weights > 0) & (batch.weights <= 1))


@pytest.mark.parametrize("make_sampler", SAMPLERS)
def test_overwritten_items_are_never_sampled(make_sampler: type) -> None:
    buffer = make_buffer(make_sampler, capacity=4)
    rng = np.random.default_rng(1)
    for k in range(10):
        buffer.add(f"item-{k}")
        batch = buffer.sample(200, rng)
        oldest_live = max(0, k - 3)
        assert {int(item.split("-")[1]) for item in batch.items} <= set(range(oldest_live, k + 1))
        buffer.update_priorities(batch.slots, rng.exponential(size=len(batch)))
    assert len(buffer) == 4


def test_priorities_steer_sampling_through_the_buffer() -> None:
    buffer = ReplayBuffer(RingStorage(3), PrioritizedSampler(3, alpha=1.0, epsilon=0.0))
    for name in ("low", "high", "zero"):
        buffer.add(name)
    buffer.update_priorities([0, 1, 2], [1.0, 9.0, 0.0])
    items = buffer.sample(10_000, np.random.default_rng(2)).items
    assert "zero" not in items
    assert items.count("high") / len(items) == pytest.approx(0.9, abs=0.01)


@pytest.mark.parametrize("make_sampler", SAMPLERS)
def test_sampling_an_empty_buffer_raises_a_clear_error(make_sampler: type) -> None:
    with pytest.raises(EmptyReplayError, match="empty replay buffer: add items first"):
        make_buffer(make_sampler).sample(4, np.random.default_rng(0))


def test_bad_priorities_are_rejected_through_the_buffer() -> None:
    buffer = make_buffer(PrioritizedSampler)
    buffer.add("a")
    buffer.add("b")
    with pytest.raises(ValueError, match="priority for slot 1 is nan"):
        buffer.update_priorities([0, 1], [0.5, float("nan")])


def test_mismatched_parts_are_rejected() -> None:
    with pytest.raises(ValueError, match="storage capacity 4 and sampler capacity 5 differ"):
        ReplayBuffer(RingStorage(4), PrioritizedSampler(5))
    storage = RingStorage(4)
    storage.add("orphan")
    with pytest.raises(ValueError, match="already holds items"):
        ReplayBuffer(storage, UniformSampler(4))


def run_script(buffer: ReplayBuffer[str], rng: np.random.Generator, steps: range) -> list:
    """Adds, samples and priority write-backs in a fixed order; returns everything drawn."""
    drawn: list = []
    for step in steps:
        buffer.add(f"window-{step}")
        batch = buffer.sample(6, rng)
        drawn += [batch.items, batch.slots.tolist(), batch.weights.tolist()]
        buffer.update_priorities(batch.slots, rng.exponential(size=len(batch)))
    return drawn


@pytest.mark.parametrize("make_sampler", SAMPLERS)
def test_state_dict_round_trip_continues_identically(make_sampler: type) -> None:
    original = make_buffer(make_sampler, capacity=8)
    rng = np.random.default_rng(3)
    run_script(original, rng, range(13))  # wrapped around: the ring has overwritten items

    # A checkpoint is pickled to disk and read back into a fresh buffer in a new process.
    state = pickle.loads(pickle.dumps(original.state_dict()))
    rng_state = copy.deepcopy(rng.bit_generator.state)
    restored = make_buffer(make_sampler, capacity=8)
    restored.load_state_dict(state)
    assert len(restored) == len(original)
    assert restored.storage.slots() == original.storage.slots()

    resumed_rng = np.random.default_rng()
    resumed_rng.bit_generator.state = rng_state
    assert run_script(original, rng, range(13, 40)) == run_script(
        restored, resumed_rng, range(13, 40)
    )


def test_state_dict_is_a_snapshot() -> None:
    buffer = make_buffer(PrioritizedSampler, capacity=4)
    buffer.add("a")
    state = buffer.state_dict()
    for item in "bcde":
        buffer.add(item)
    buffer.update_priorities([0, 1], [5.0, 5.0])

    restored = make_buffer(PrioritizedSampler, capacity=4)
    restored.load_state_dict(state)
    assert len(restored) == 1
    assert restored.sample(5, np.random.default_rng(0)).items == ["a"] * 5
