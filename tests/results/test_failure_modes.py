"""The vlm-quick failure study's sorting of episodes (docs/results/vlm-quick/failure_modes.py):
a stuck episode, a wrong declaration and a wandering one are told apart by how they end."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import numpy as np

from distrl.core.action import Action
from distrl.core.observation import Observation
from distrl.core.task import Task
from distrl.core.trajectory import Step, Trajectory

SCREEN = Observation(np.zeros((4, 4, 3), np.uint8), "Open the Clock app")
TASK = Task(task_id="t", instruction=SCREEN.instruction, suite="general", split="test")


def _episode(actions: list[Action], success: bool = False) -> Trajectory:
    steps = [Step(SCREEN, a, 0.0, i == len(actions) - 1) for i, a in enumerate(actions)]
    return Trajectory(TASK, steps, success=success)


def test_episodes_are_sorted_by_how_they_end(
    results_script: Callable[[str], ModuleType],
) -> None:
    ending = results_script("vlm-quick/failure_modes.py").ending
    enter, tap = Action.press_enter(), Action.tap(0.5, 0.5)
    assert ending(_episode([tap, enter], success=True)) == "success"
    assert ending(_episode([tap, enter, enter, enter])) == "repeat"
    assert ending(_episode([enter, enter, tap])) == "other"  # it moved on at the end
    assert ending(_episode([tap, tap, Action.complete()])) == "wrong status"
    assert ending(_episode([enter, enter])) == "other"  # fewer than three steps
