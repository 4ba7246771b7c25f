"""What the training loop logs about collection, computed the same way in both runtimes.

The replay is where every trajectory of a run arrives (in this process, or in the Ray replay
actor), so the figures are kept beside it: :class:`RecentCollection` accumulates the episodes
that arrived since the loop last looked, and :func:`replay_stats` adds the replay's counters.
"""

from __future__ import annotations

import time
from collections import deque

from distrl.algos.rewards import shaped_rewards
from distrl.core.trajectory import Trajectory
from distrl.envs.task_sets import task_family
from distrl.runtime.replay_service import ReplayService

#: Outcomes kept for the curriculum between two looks of the run loop; it looks every round,
#: so only a run without a curriculum (which never looks) reaches the bound.
MAX_PENDING_OUTCOMES = 100_000


class RecentCollection:
    """Collection figures accumulated between two :meth:`take` calls, and the (task family,
    success) of each arrival until :meth:`take_outcomes` (what the curriculum learns from)."""

    def __init__(self) -> None:
        self._reset()
        self.outcomes: deque[tuple[str, bool]] = deque(maxlen=MAX_PENDING_OUTCOMES)

    def _reset(self) -> None:
        self.count = self.successes = self.steps = 0
        self.returns = 0.0
        self.since = time.monotonic()

    def add(self, trajectory: Trajectory, episode_return: float) -> None:
        self.count += 1
        self.successes += int(trajectory.success)
        self.steps += len(trajectory)
        self.returns += episode_return
        self.outcomes.append((task_family(trajectory.task), bool(trajectory.success)))

    def take_outcomes(self) -> list[tuple[str, bool]]:
        """The outcomes that arrived since the previous call, in arrival order."""
        outcomes = list(self.outcomes)
        self.outcomes.clear()
        return outcomes

    def take(self) -> dict[str, float]:
        """``recent_*`` figures since the previous call (success, shaped return, steps per
        episode, env steps per wall-clock second), then start over."""
        seconds = max(time.monotonic() - self.since, 1e-9)
        figures = {"recent_trajectories": float(self.count)}
        if self.count:
            figures |= {
                "recent_success": self.successes / self.count,
                "recent_return": self.returns / self.count,
                "recent_episode_steps": self.steps / self.count,
                "recent_env_steps_per_s": self.steps / seconds,
            }
        self._reset()
        return figures


def take_in(
    service: ReplayService, recent: RecentCollection, trajectories: list[Trajectory]
) -> bool:
    """Hand ``trajectories`` to the replay and note them as collected; returns whether the
    replay takes more (backpressure)."""
    service.add(trajectories)
    for trajectory in trajectories:
        recent.add(trajectory, sum(shaped_rewards(trajectory, service.algorithm.shaping)))
    return service.can_accept()


def replay_stats(service: ReplayService, recent: RecentCollection) -> dict[str, float]:
    """The replay's counters and size (with the success store's, when on), and the collection
    figures since the previous call."""
    return {
        **vars(service.counters),
        "windows": len(service),
        **service.success_figures(),
        **recent.take(),
    }
