"""Replay: a storage of items plus a sampler of slots, behind :class:`ReplayBuffer` (pure numpy).

Uniform and prioritized (sum-tree) sampling are interchangeable; see docs/design.md §7 for the
prioritized replay the A-RIDE learner uses.
"""

from distrl.replay.buffer import ReplayBuffer, SampledBatch
from distrl.replay.samplers import EmptyReplayError, PrioritizedSampler, Sampler, UniformSampler
from distrl.replay.storage import RingStorage, Storage
from distrl.replay.sum_tree import SumTree
from distrl.replay.windows import windows

__all__ = [
    "EmptyReplayError",
    "PrioritizedSampler",
    "ReplayBuffer",
    "RingStorage",
    "SampledBatch",
    "Sampler",
    "Storage",
    "SumTree",
    "UniformSampler",
    "windows",
]
