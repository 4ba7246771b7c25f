"""A success judge defined outside distrl: it looks at the last screenshot only.

Use it with ``judge.kind=brightness_judge:BrightnessJudge``: distrl then asks it after every
step instead of trusting the device's own success, on any backend (the device is wrapped in a
:class:`distrl.envs.judged.JudgedDevice` and asked for screenshots). For the light-switch
example a bright screen means the light is on.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from distrl.config.schema import RunConfig
from distrl.core.action import Action
from distrl.core.task import Task


class BrightnessJudge:
    """A :class:`distrl.judges.base.SuccessJudge`; its constructor takes the run config."""

    def __init__(self, cfg: RunConfig, threshold: float = 127.0):
        self.threshold = threshold
        self.calls = 0

    def judge(
        self, task: Task, screenshots: Sequence[np.ndarray], actions: Sequence[Action]
    ) -> bool:
        self.calls += 1
        light_on = float(np.mean(screenshots[-1])) > self.threshold
        return light_on == (task.spec.get("want") == "on")
