"""The task-level curriculum: which task families train episodes draw, by learning progress
(docs/design.md §7.13).

Uniform draws spend most episodes where nothing is learnt: on families the policy already
solves and on families it cannot solve yet. The curriculum keeps, per family (the PhoneSim
template, the MiniWoB++ task: :func:`~distrl.envs.task_sets.task_family`), the outcomes of its
last ``window`` finished train episodes, oldest first, and scores each family by

    score = min(1, 4 p (1 - p) + |p_late - p_early|)

where ``p`` is the window's success rate and ``p_early``/``p_late`` those of its older and newer
halves (the middle outcome of an odd window belongs to neither): 1 at 50 % success or where
success is moving, 0 for a family steadily solved or steadily failed. A family with fewer than
``min_episodes`` outcomes scores 1, so every family is tried early. A family with no success in
its window scores ``unsolved_score`` (default 0) instead of 0: a family whose first success is
rare (a typing task found by exploration) then keeps being drawn above the floor, where a
hopeless one at 0 would get only ``floor / F`` of the draws. The draw probabilities are

    q_f = floor / F + (1 - floor) * score_f / sum(score)    (uniform when every score is 0)

over the F families, so each family keeps at least ``floor / F`` of the draws: a solved family
is still revisited and a hopeless one is retried as the policy improves.

Data flows one way: the run loop records the outcomes of finished trajectories as they reach the
replay, computes the probabilities and hands them to the workers' task samplers, the way weights
reach workers. The state (the outcome windows) goes into checkpoints; the probabilities are a
pure function of it, so a resumed run draws as the original would have.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence

from distrl.config.schema import CurriculumConfig
from distrl.core.task import Task
from distrl.envs.task_sets import task_family

#: One finished train episode as the curriculum sees it: (task family, success).
Outcome = tuple[str, bool]


def family_score(outcomes: Sequence[bool], min_episodes: int, unsolved_score: float = 0.0) -> float:
    """A family's learning-progress score in [0, 1] from its outcomes, oldest first (see the
    module docstring)."""
    count = len(outcomes)
    if count < max(min_episodes, 1):
        return 1.0
    rate = sum(outcomes) / count
    if rate == 0.0:
        return unsolved_score
    half = count // 2
    change = abs(sum(outcomes[count - half :]) - sum(outcomes[:half])) / half if half else 0.0
    return min(1.0, 4.0 * rate * (1.0 - rate) + change)


class TaskCurriculum:
    """Per-family outcome windows and the draw probabilities they give."""

    def __init__(self, families: Iterable[str], cfg: CurriculumConfig):
        self.cfg = cfg
        #: Sorted, so the probabilities (and a sampler's draws) never depend on set order.
        self.families = sorted(set(families))
        if not self.families:
            raise ValueError("a curriculum needs at least one task family")
        self.windows: dict[str, deque[bool]] = {
            family: deque(maxlen=cfg.window) for family in self.families
        }

    @classmethod
    def for_tasks(cls, tasks: Iterable[Task], cfg: CurriculumConfig) -> TaskCurriculum:
        """A curriculum over the families of ``tasks`` (a run's train split)."""
        return cls((task_family(task) for task in tasks), cfg)

    def record(self, outcomes: Iterable[Outcome]) -> int:
        """Add finished episodes' outcomes in arrival order; returns how many counted (a family
        outside the train split, e.g. from a changed task file, is ignored)."""
        counted = 0
        for family, success in outcomes:
            window = self.windows.get(family)
            if window is not None:
                window.append(bool(success))
                counted += 1
        return counted

    def success(self) -> dict[str, float | None]:
        """Each family's success rate over its window (None before its first episode)."""
        return {
            family: (sum(window) / len(window) if window else None)
            for family, window in self.windows.items()
        }

    def probabilities(self) -> dict[str, float]:
        """Each family's share of the next draws (they sum to 1)."""
        scores = {
            family: family_score(list(window), self.cfg.min_episodes, self.cfg.unsolved_score)
            for family, window in self.windows.items()
        }
        total = sum(scores.values())
        count = len(self.families)
        floor = self.cfg.floor if total > 0 else 1.0
        return {
            family: floor / count + (1.0 - floor) * (score / total if total > 0 else 0.0)
            for family, score in scores.items()
        }

    def table(self) -> dict[str, dict[str, float | int | None]]:
        """Per family: its draw probability, window success and episodes in the window (what
        the run's summary shows)."""
        probabilities, success = self.probabilities(), self.success()
        return {
            family: {
                "weight": round(probabilities[family], 4),
                "success": None if success[family] is None else round(success[family], 4),
                "episodes": len(self.windows[family]),
            }
            for family in self.families
        }

    def state_dict(self) -> dict[str, list[int]]:
        """The outcome windows (1 success, 0 failure), oldest first."""
        return {family: [int(o) for o in window] for family, window in self.windows.items()}

    def load_state_dict(self, state: dict[str, list[int]]) -> None:
        """Restore :meth:`state_dict`; families no longer in the train split are dropped."""
        for family, outcomes in state.items():
            if family in self.windows:
                self.windows[family].clear()
                self.windows[family].extend(bool(o) for o in outcomes)
