"""Which task a worker's next episode plays."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from distrl.core.task import Task
from distrl.envs.task_sets import task_family


class TaskSampler:
    """Draws tasks uniformly at random (with replacement) from ``tasks`` with ``rng`` (a stream
    of the run's seed tree, or a seed); its state goes into checkpoints so a resumed run
    continues the same task stream.

    With family weights (the curriculum's probabilities, :meth:`set_family_weights`) a draw
    first picks a task family by weight, then a task of that family uniformly."""

    def __init__(self, tasks: list[Task], rng: np.random.Generator | int):
        self.tasks = tasks
        self.rng = np.random.default_rng(rng)
        self._by_family: dict[str, list[Task]] = {}
        for task in tasks:
            self._by_family.setdefault(task_family(task), []).append(task)
        #: (families, cumulative probabilities) while weighted; None: uniform over tasks.
        self._weighted: tuple[list[str], np.ndarray] | None = None

    def set_family_weights(self, weights: Mapping[str, float] | None) -> None:
        """Draw families by ``weights`` from now on (families without tasks here are left out;
        None or no positive weight: uniform over tasks again)."""
        families = sorted(f for f, w in (weights or {}).items() if f in self._by_family and w > 0)
        if not families:
            self._weighted = None
            return
        assert weights is not None
        cumulative = np.cumsum([float(weights[f]) for f in families])
        self._weighted = (families, cumulative / cumulative[-1])

    def __call__(self) -> Task:
        if self._weighted is None:
            return self.tasks[int(self.rng.integers(len(self.tasks)))]
        families, cumulative = self._weighted
        drawn = int(np.searchsorted(cumulative, self.rng.random(), side="right"))
        index = min(drawn, len(families) - 1)  # a rounding of the last sum below 1
        members = self._by_family[families[index]]
        return members[int(self.rng.integers(len(members)))]
