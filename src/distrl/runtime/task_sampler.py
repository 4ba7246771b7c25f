"""Which task a worker's next episode plays."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from distrl.algos.phrasing_augmentation import PhrasingEdit, task_template_words
from distrl.config.schema import RunConfig
from distrl.core.task import Task
from distrl.envs.task_sets import load_tasks, task_family


class TaskSampler:
    """Draws tasks uniformly at random (with replacement) from ``tasks`` with ``rng`` (a stream
    of the run's seed tree, or a seed); its state goes into checkpoints so a resumed run
    continues the same task stream.

    With family weights (the curriculum's probabilities, :meth:`set_family_weights`) a draw
    first picks a task family by weight, then a task of that family uniformly. With
    ``rewording`` a drawn task's instruction may be reworded (``train.task_phrasing_augmentation``,
    :meth:`~distrl.algos.phrasing_augmentation.PhrasingEdit.reword_task`), with the same
    generator, so a resumed run rewords as the original would have."""

    def __init__(
        self,
        tasks: list[Task],
        rng: np.random.Generator | int,
        rewording: PhrasingEdit | None = None,
    ):
        self.tasks = tasks
        self.rng = np.random.default_rng(rng)
        self.rewording = rewording
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

    @classmethod
    def for_training(cls, cfg: RunConfig, rng: np.random.Generator) -> TaskSampler:
        """A worker's sampler of ``cfg``'s train tasks, rewording them if the config says so."""
        tasks = load_tasks(cfg, "train")
        rate = cfg.train.task_phrasing_augmentation
        edits = cfg.train.phrasing_edits
        rewording = PhrasingEdit(task_template_words(tasks), rate, edits) if rate > 0 else None
        return cls(tasks, rng, rewording)

    def __call__(self) -> Task:
        task = self._draw()
        return task if self.rewording is None else self.rewording.reword_task(task, self.rng)

    def _draw(self) -> Task:
        if self._weighted is None:
            return self.tasks[int(self.rng.integers(len(self.tasks)))]
        families, cumulative = self._weighted
        drawn = int(np.searchsorted(cumulative, self.rng.random(), side="right"))
        index = min(drawn, len(families) - 1)  # a rounding of the last sum below 1
        members = self._by_family[families[index]]
        return members[int(self.rng.integers(len(members)))]
