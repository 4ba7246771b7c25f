"""The success-judge protocol: who decides whether an episode did what its instruction asked.

PhoneSim and MiniWoB++ judge from their own state inside ``step``; a real Android device has no
such state, so its backend asks a :class:`SuccessJudge` after each step (DigiRL's autoevaluator
did the same with Gemini). Judges see only what a person watching the screen would: the
instruction, the last screenshots and the actions taken.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from distrl.core.action import Action
from distrl.core.task import Task


@runtime_checkable
class SuccessJudge(Protocol):
    """judge(task, screenshots, actions) -> True when the task is done.

    ``screenshots`` are HxWx3 uint8 arrays, oldest first, the last one the current screen;
    ``actions`` are the episode's actions so far, oldest first.
    """

    def judge(
        self, task: Task, screenshots: Sequence[np.ndarray], actions: Sequence[Action]
    ) -> bool: ...
