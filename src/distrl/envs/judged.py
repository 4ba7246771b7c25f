"""Any device, its success decided by a judge instead of its own state.

PhoneSim and MiniWoB++ know when a task is done; a custom device may not, and a run may prefer
a judge anyway (``judge.kind=vlm`` or a plug-in judge). :class:`JudgedDevice` wraps a device
and, after every step, asks the judge about the episode so far (the instruction, the last
screenshots, the actions), as the Android backend does for real phones (docs/design.md §6): its
verdict is the step's ``success`` and reward, and ends the episode.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from distrl.core.action import Action
from distrl.core.observation import Observation
from distrl.core.task import Task
from distrl.envs.protocol import DeviceEnv, episode_end
from distrl.envs.wrapper import DeviceWrapper
from distrl.judges.base import SuccessJudge

#: Screenshots kept for the judge (the newest last).
JUDGED_SCREENSHOTS = 4


class JudgedDevice(DeviceWrapper):
    """``device`` with ``judge`` deciding success (see the module docstring)."""

    def __init__(self, device: DeviceEnv, judge: SuccessJudge):
        super().__init__(device)
        self.judge = judge
        self.task: Task | None = None
        self.actions: list[Action] = []
        self.screenshots: deque[np.ndarray] = deque(maxlen=JUDGED_SCREENSHOTS)

    def reset(self, task: Task) -> Observation:
        observation = self.device.reset(task)
        self.task, self.actions = task, []
        self.screenshots.clear()
        self.screenshots.append(observation.screenshot)
        return observation

    def step(self, action: Action) -> tuple[Observation, float, bool, dict[str, Any]]:
        assert self.task is not None, "step() before reset()"
        observation, _, device_done, info = self.device.step(action)
        self.actions.append(action)
        self.screenshots.append(observation.screenshot)
        success = bool(self.judge.judge(self.task, list(self.screenshots), list(self.actions)))
        done, truncated = episode_end(
            success, action.is_status, len(self.actions), self.task.horizon
        )
        if device_done and not done:  # the device cannot go on (its own end or its horizon)
            done, truncated = True, not success
        info = {**info, "success": success, "truncated": truncated}
        return observation, float(success), done, info
