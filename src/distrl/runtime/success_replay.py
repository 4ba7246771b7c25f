"""Success replay: successful trajectories kept beyond the staleness bound, rare ones above all
(docs/design.md §7.14).

The online replay forgets a success as soon as its windows grow stale, so a task the policy
solves once in a hundred episodes leaves almost nothing to learn from. :class:`SuccessStore`
keeps the windows of successful trajectories in a bounded store of their own, per task family
(:func:`~distrl.envs.task_sets.task_family`):

* **admission**: every success the algorithm admits enters; when the store holds more than
  ``capacity`` trajectories, the family holding the most gives up its oldest (ties: the family
  whose oldest entered first), so a frequent family cannot crowd out a rare one's few
  successes, and each family tends to an equal share;
* **draws**: a family is drawn with probability proportional to its *rarity*,
  ``max(1 - s_f, RARITY_FLOOR)`` where ``s_f`` is its success rate over every episode the
  store has seen, then one of its trajectories uniformly, then one of that trajectory's windows
  uniformly.

The windows keep their behaviour log-probs and policy versions: the learner treats them as the
off-policy data they are (Retrace's truncated traces and the ratio clip bound what an old
behaviour policy can do to an update), never as on-policy. Its state is rebuilt on resume by
offering the run's stored trajectories again in store order, which gives exactly the store the
run had (admission depends on nothing else).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from distrl.algos.step_window import StepWindow
from distrl.core.trajectory import Trajectory
from distrl.envs.task_sets import task_family

#: The least a family's draw weight falls to as its success rate reaches 1 (a solved family's
#: successes still appear now and then, so it is not unlearnt).
RARITY_FLOOR = 0.05


@dataclass(frozen=True)
class _Kept:
    """One stored success: its windows and when it entered (for tie-breaking evictions)."""

    trajectory_id: str
    windows: tuple[StepWindow, ...]
    entered: int


class SuccessStore:
    """Successful trajectories' windows, bounded at ``capacity`` trajectories (see the module
    docstring)."""

    def __init__(self, capacity: int):
        if capacity < 1:
            raise ValueError(f"success replay capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self.kept: dict[str, deque[_Kept]] = {}
        #: Per family: (episodes seen, successes among them), every episode offered.
        self.seen: dict[str, list[int]] = {}
        self._entered = 0

    def __len__(self) -> int:
        """Trajectories held."""
        return sum(len(entries) for entries in self.kept.values())

    def windows(self) -> int:
        """Windows held."""
        return sum(len(k.windows) for entries in self.kept.values() for k in entries)

    def families(self) -> list[str]:
        """The families with at least one success held, sorted."""
        return sorted(family for family, entries in self.kept.items() if entries)

    def observe(self, trajectory: Trajectory, windows: Sequence[StepWindow] | None) -> bool:
        """Count ``trajectory`` in its family's success rate and, if it is a success, keep its
        ``windows`` (None: the algorithm did not admit it); returns whether it was kept."""
        family = task_family(trajectory.task)
        counts = self.seen.setdefault(family, [0, 0])
        counts[0] += 1
        counts[1] += int(trajectory.success)
        if not (trajectory.success and windows):
            return False
        self.kept.setdefault(family, deque()).append(
            _Kept(trajectory.trajectory_id, tuple(windows), self._entered)
        )
        self._entered += 1
        while len(self) > self.capacity:
            self._evict()
        return True

    def _evict(self) -> None:
        """The oldest success of the family holding the most (ties: the oldest entry)."""
        family = min(self.families(), key=lambda f: (-len(self.kept[f]), self.kept[f][0].entered))
        self.kept[family].popleft()

    def rarity(self) -> dict[str, float]:
        """Each held family's draw weight, ``max(1 - success rate, RARITY_FLOOR)``."""
        weights = {}
        for family in self.families():
            episodes, successes = self.seen[family]
            weights[family] = max(1.0 - successes / episodes, RARITY_FLOOR)
        return weights

    def sample(self, count: int, rng: np.random.Generator) -> list[StepWindow]:
        """``count`` windows drawn with replacement (family by rarity, then trajectory, then
        window, each uniformly within the one above); none while the store is empty."""
        if count <= 0 or len(self) == 0:
            return []
        rarity = self.rarity()
        families = list(rarity)
        weights = np.array([rarity[f] for f in families])
        picked = rng.choice(len(families), size=count, p=weights / weights.sum())
        drawn = []
        for index in picked.tolist():
            entries = self.kept[families[index]]
            kept = entries[int(rng.integers(len(entries)))]
            drawn.append(kept.windows[int(rng.integers(len(kept.windows)))])
        return drawn

    def figures(self) -> dict[str, float]:
        """What the run logs about the store: trajectories, windows and families held."""
        return {
            "success_stored": float(len(self)),
            "success_store_windows": float(self.windows()),
            "success_tasks": float(len(self.families())),
        }
