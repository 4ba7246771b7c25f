"""Which task a worker's next episode plays."""

from __future__ import annotations

import numpy as np

from distrl.core.task import Task


class TaskSampler:
    """Draws tasks uniformly at random (with replacement) from ``tasks`` with ``rng`` (a stream
    of the run's seed tree, or a seed); its state goes into checkpoints so a resumed run
    continues the same task stream."""

    def __init__(self, tasks: list[Task], rng: np.random.Generator | int):
        self.tasks = tasks
        self.rng = np.random.default_rng(rng)

    def __call__(self) -> Task:
        return self.tasks[int(self.rng.integers(len(self.tasks)))]
