"""An intrinsic reward for changing the screen, by count-based novelty (docs/design.md §7.12).

Why. From scratch, a multi-step typing task (focus a field, type the instruction's text, press
Submit) succeeds about once in ten thousand random episodes, and until it does every episode
scores the same 0 minus the step cost, so the cheapest policy ends the episode at once (taps
Submit). A reward for steps that *change* the screen gives the intermediate steps credit before
any success: focusing a field, typing into it and ticking a box all change what the element list
shows, while a tap on static text or a key the page ignores does not.

What counts as a change is abstract, so it generalises across episodes of a task whose texts
are drawn at random: the set of ``(element kind, how)`` pairs between the screen before and
after the step, ``how`` being ``text``, ``focus``, ``checked``, ``appeared`` or ``gone``
(:func:`screen_change`). The bonus for a change is ``bonus / sqrt(n)``, ``n`` the number of
times the task's family (the PhoneSim template, the MiniWoB++ task name) has now seen that
change, so a change the policy makes all the time stops paying; and it is scaled by a linear
decay to 0 over ``decay_trajectories`` trajectories, so late training optimises success alone.
Bounded: never more than ``bonus`` per step. The episode's last step earns none: what it
leads to is no state to act in (a finished MiniWoB++ page clears its elements), and paying for
it would pay for ending episodes, the very habit the bonus is there to counter.

The counts live in the replay that cuts windows (one per run) and are not checkpointed: a
resumed run rebuilds them from the trajectories its replay re-ingests from the store.
"""

from __future__ import annotations

import math
from collections import Counter

from distrl.core.observation import Observation, UIElement
from distrl.core.trajectory import Trajectory
from distrl.envs.task_sets import task_family

__all__ = ["ScreenNovelty", "screen_change"]

#: One kind of change: (element kind, "text" | "focus" | "checked" | "appeared" | "gone").
Change = tuple[str, str]


def _element_key(element: UIElement) -> tuple[str, str, tuple[float, ...]]:
    """Which element this is across two screens: its kind, id and (rounded) place."""
    return (element.kind, element.resource_id, tuple(round(v, 3) for v in element.bbox))


def screen_change(before: Observation, after: Observation) -> frozenset[Change]:
    """The kinds of change from ``before`` to ``after``; empty when the element list shows the
    same thing (the instruction is not part of the screen).

    >>> from distrl.core.observation import NO_SCREENSHOT
    >>> field = UIElement("", (0.1, 0.1, 0.9, 0.2), True, "f", "field")
    >>> typed = UIElement("Ana", (0.1, 0.1, 0.9, 0.2), True, "f", "field", focused=True)
    >>> sorted(screen_change(Observation(NO_SCREENSHOT, "x", (field,)),
    ...                      Observation(NO_SCREENSHOT, "x", (typed,))))
    [('field', 'focus'), ('field', 'text')]
    """
    old = {_element_key(e): e for e in before.elements}
    new = {_element_key(e): e for e in after.elements}
    changes: set[Change] = set()
    for key, element in new.items():
        previous = old.get(key)
        if previous is None:
            changes.add((element.kind, "appeared"))
            continue
        if previous.text != element.text:
            changes.add((element.kind, "text"))
        if previous.focused != element.focused:
            changes.add((element.kind, "focus"))
        if previous.checked != element.checked:
            changes.add((element.kind, "checked"))
    changes.update((element.kind, "gone") for key, element in old.items() if key not in new)
    return frozenset(changes)


class ScreenNovelty:
    """Per-step intrinsic rewards ``scale * bonus / sqrt(n)`` for screen-changing steps, with
    counts kept across the trajectories it is shown (in arrival order)."""

    def __init__(self, bonus: float, decay_trajectories: int):
        if bonus < 0:
            raise ValueError(f"bonus must be >= 0, got {bonus}")
        if decay_trajectories < 1:
            raise ValueError(f"decay_trajectories must be >= 1, got {decay_trajectories}")
        self.bonus = bonus
        self.decay_trajectories = decay_trajectories
        self.counts: Counter[tuple[str, frozenset[Change]]] = Counter()
        self.trajectories = 0

    @property
    def scale(self) -> float:
        """The linear decay's factor for the next trajectory: 1 at the start, 0 once
        ``decay_trajectories`` trajectories have been rewarded."""
        return max(0.0, 1.0 - self.trajectories / self.decay_trajectories)

    def rewards(self, trajectory: Trajectory) -> list[float]:
        """One intrinsic reward per step of ``trajectory`` (counting its changes), 0 for a step
        that changes nothing, for the last (``done``) step and where the next screen is
        unknown."""
        scale = self.scale
        self.trajectories += 1
        steps = trajectory.steps
        if scale == 0.0 or self.bonus == 0.0:
            return [0.0] * len(steps)
        family = task_family(trajectory.task)
        out = []
        for index, step in enumerate(steps):
            if step.done:
                out.append(0.0)
                continue
            after = (
                steps[index + 1].observation
                if index + 1 < len(steps)
                else trajectory.final_observation
            )
            change = screen_change(step.observation, after) if after is not None else frozenset()
            if not change:
                out.append(0.0)
                continue
            key = (family, change)
            self.counts[key] += 1
            out.append(scale * self.bonus / math.sqrt(self.counts[key]))
        return out
