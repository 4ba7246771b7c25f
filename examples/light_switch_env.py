"""A device backend defined outside distrl: one room, one light switch.

Train on it with ``env.backend=light_switch_env:backend`` (this folder on ``PYTHONPATH``)::

    PYTHONPATH=examples distrl train --env light_switch_env:backend --updates 20

The device shows a switch and a "Done" button; a task asks for the light on or off. Tapping
the switch toggles the light; success is the light in the asked state (the device's own state,
as PhoneSim judges). The screen is white while the light is on and black while it is off, so a
judge that only looks at screenshots can decide too (see ``brightness_judge.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from distrl.config.schema import RunConfig
from distrl.core.action import Action, ActionType
from distrl.core.observation import NO_SCREENSHOT, Observation, UIElement
from distrl.core.task import Task
from distrl.envs.protocol import episode_end, step_info

SWITCH = UIElement("Light switch", (0.3, 0.4, 0.7, 0.5), True, "room:id/switch", "button")
DONE = UIElement("Done", (0.3, 0.8, 0.7, 0.9), True, "room:id/done", "button")
SCREEN = (64, 32, 3)


class LightSwitchDevice:
    """A :class:`distrl.envs.protocol.DeviceEnv`: reset(task), step(action), close()."""

    def __init__(self, seed: int, screenshots: bool):
        self.seed = seed  # nothing here is random; a richer device draws from it
        self.screenshots = screenshots
        self.task: Task | None = None
        self.light_on = False
        self.steps = 0

    def reset(self, task: Task) -> Observation:
        self.task, self.steps = task, 0
        self.light_on = task.spec["want"] == "off"  # start where the task wants a change
        return self._observe()

    def step(self, action: Action) -> tuple[Observation, float, bool, dict[str, Any]]:
        assert self.task is not None
        self.steps += 1
        event = "nothing"
        if action.action_type is ActionType.DUAL_POINT and SWITCH.contains(*action.touch_yx):
            self.light_on, event = not self.light_on, "toggle"
        success = self.light_on == (self.task.spec["want"] == "on")
        done, truncated = episode_end(success, action.is_status, self.steps, self.task.horizon)
        info = step_info(
            event=event,
            success=success,
            truncated=truncated,
            steps=self.steps,
            action=action,
            device_seconds=0.0,
        )
        return self._observe(), float(success), done, info

    def _observe(self) -> Observation:
        assert self.task is not None
        screenshot = NO_SCREENSHOT
        if self.screenshots:
            screenshot = np.full(SCREEN, 255 if self.light_on else 0, dtype=np.uint8)
        state = UIElement(
            "Light is on" if self.light_on else "Light is off",
            (0.0, 0.0, 1.0, 0.2),
            False,
            "room:id/state",
            "text",
            checked=self.light_on,
        )
        return Observation(screenshot, self.task.instruction, (state, SWITCH, DONE))

    def close(self) -> None:
        pass


class LightSwitchBackend:
    """What ``env.backend`` names: devices and tasks (:class:`distrl.envs.backends.Backend`)."""

    def make_device(
        self, cfg: RunConfig, *, slot: int, seed: int, models_latency: bool, screenshots: bool
    ) -> LightSwitchDevice:
        return LightSwitchDevice(seed, screenshots)

    def tasks(self, cfg: RunConfig, split: str) -> list[Task]:
        return [
            Task(
                f"light-{split}-{want}",
                f"Turn the light {want}",
                "light",
                split,
                backend="light",
                spec={"want": want},
                horizon=4,
            )
            for want in ("on", "off")
        ]


backend = LightSwitchBackend()
