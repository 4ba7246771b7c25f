"""The vlm-quick split-gap study's tally (docs/results/vlm-quick/split_gap.py): successes and
episodes per task family, the total first, from the episodes a policy played."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import numpy as np

from distrl.core.action import Action
from distrl.core.observation import Observation
from distrl.core.task import Task
from distrl.core.trajectory import Step, Trajectory


def _episode(template: str, success: bool) -> Trajectory:
    task = Task("t", "Do it", "general", "test", spec={"template": template, "params": {}})
    screen = Observation(np.zeros((4, 4, 3), np.uint8), task.instruction)
    return Trajectory(task, [Step(screen, Action.press_home(), 0.0, True)], success=success)


def test_episodes_are_counted_per_family_with_the_total_first(
    results_script: Callable[[str], ModuleType],
) -> None:
    count = results_script("vlm-quick/split_gap.py").count_by_family
    played = [
        _episode("set_alarm", True),
        _episode("create_note", False),
        _episode("set_alarm", False),
        _episode("create_note", True),
        _episode("set_alarm", True),
    ]
    table = count(played)
    assert list(table) == ["all", "create_note", "set_alarm"]
    assert table == {"all": [3, 5], "create_note": [1, 2], "set_alarm": [2, 3]}
    assert count([]) == {"all": [0, 0]}
