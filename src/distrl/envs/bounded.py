"""Any device, its screenshots bounded at the source (``env.screenshot_encoding``,
``env.screenshot_max_side``; :mod:`distrl.core.screenshot`).

Bounding here, where observations are born, rather than where trajectories are sent, is what
keeps act and score in agreement: the policy acts on exactly the (downscaled, losslessly
encoded) screenshot that the replay keeps and the learner later scores, and evaluation and the
warm start's demonstrations see the same images as training.
"""

from __future__ import annotations

from typing import Any

from distrl.config.schema import EnvConfig
from distrl.core.action import Action
from distrl.core.observation import Observation
from distrl.core.screenshot import ScreenshotEncoding, bound_observation
from distrl.core.task import Task
from distrl.envs.protocol import DeviceEnv
from distrl.envs.wrapper import DeviceWrapper

__all__ = ["BoundedScreenshots", "bounded_device"]


class BoundedScreenshots(DeviceWrapper):
    """``device`` whose observations carry bounded screenshots."""

    def __init__(self, device: DeviceEnv, encoding: ScreenshotEncoding, max_side: int | None):
        super().__init__(device)
        self.encoding, self.max_side = encoding, max_side

    def _bound(self, observation: Observation) -> Observation:
        return bound_observation(observation, self.encoding, self.max_side)

    def reset(self, task: Task) -> Observation:
        return self._bound(self.device.reset(task))

    def step(self, action: Action) -> tuple[Observation, float, bool, dict[str, Any]]:
        observation, reward, done, info = self.device.step(action)
        return self._bound(observation), reward, done, info


def bounded_device(device: DeviceEnv, env: EnvConfig) -> DeviceEnv:
    """``device`` wrapped in :class:`BoundedScreenshots` unless ``env`` keeps raw screenshots
    at the device's resolution."""
    if env.screenshot_encoding == "raw" and env.screenshot_max_side is None:
        return device
    return BoundedScreenshots(device, env.screenshot_encoding, env.screenshot_max_side)
