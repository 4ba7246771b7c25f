"""Every random stream of a run, derived from the run's one seed by a SeedSequence tree.

A run has a single root seed (``cfg.seed``). Each consumer takes its own child of
``numpy.random.SeedSequence(root)``, addressed by a spawn key that starts with the
:class:`Stream` it belongs to, followed by the indices that tell its members apart. Children
with different keys are statistically independent, so no two streams overlap (an evaluation
never replays a training device's episodes; a worker restarted by Ray never repeats its previous
life's task order), and adding a stream never shifts another.

The tree, by spawn key:

========================================  ======================================================
``(DEVICE, purpose, slot, incarnation,    device ``slot`` built for ``purpose`` (train,
*lineage)``                               evaluate, demonstrate, play); ``incarnation`` counts
                                          rebuilds of that slot (after a hang or crashes;
                                          PhoneSim evaluation devices: the evaluation's k);
                                          ``lineage`` is a Ray worker's ``(session, life)``
``(WORKER_ACTIONS, worker, session,       a worker's action sampling (a torch generator);
life)``                                   ``session`` counts resumes of the run, ``life``
                                          restarts of a Ray worker actor (0 in one process)
``(WORKER_TASKS, worker, session, life)`` a worker's task draws
``(REPLAY,)``                             the replay's batch sampling
``(CLONING,)``                            behaviour cloning's minibatches (the warm start)
``(EVALUATION, 0, k)`` /                  the k-th evaluation of a run (its curve point; 0
``(EVALUATION, 1, k)``                    for ``distrl eval``): its task order / its action
                                          sampling; its PhoneSim devices are incarnation k
``(PLAY,)``                               ``distrl play``'s task order and scripted agent
``(POLICY_INIT,)``                        torch's global RNG before a policy is built, so every
                                          process builds the same initial weights
========================================  ======================================================
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np


class Stream(IntEnum):
    """The first element of a spawn key: which consumer a random stream belongs to."""

    DEVICE = 0
    WORKER_ACTIONS = 1
    WORKER_TASKS = 2
    REPLAY = 3
    CLONING = 4
    EVALUATION = 5
    PLAY = 6
    POLICY_INIT = 7


def seed_sequence(root: int, stream: Stream, *indices: int) -> np.random.SeedSequence:
    """The child of ``SeedSequence(root)`` at spawn key ``(stream, *indices)``."""
    if root < 0 or any(i < 0 for i in indices):
        raise ValueError(f"seeds and indices must be >= 0, got {root} and {indices}")
    return np.random.SeedSequence(root, spawn_key=(int(stream), *map(int, indices)))


def derive_seed(root: int, stream: Stream, *indices: int) -> int:
    """An integer seed (63 bits: fits torch, numpy and the backends) for one stream."""
    return int(seed_sequence(root, stream, *indices).generate_state(1, np.uint64)[0] >> 1)


def derive_rng(root: int, stream: Stream, *indices: int) -> np.random.Generator:
    """A numpy generator for one stream."""
    return np.random.default_rng(seed_sequence(root, stream, *indices))
