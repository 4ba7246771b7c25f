"""The one protocol every device backend implements, and the faults a device can raise.

Workers drive devices only through :class:`DeviceEnv`; the runtime catches :class:`DeviceFault`
to restart a device and drop its partial episode, so algorithms never see a dead device.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from distrl.core.action import Action
from distrl.core.observation import Observation
from distrl.core.task import Task


class DeviceFault(RuntimeError):
    """A device failed; the episode on it is lost and the device must be restarted."""


class DeviceCrashed(DeviceFault):
    """The device died (emulator process gone, adb connection lost)."""


class DeviceHung(DeviceFault):
    """The device stopped answering within its step timeout."""


@runtime_checkable
class DeviceEnv(Protocol):
    """reset(task) -> obs; step(action) -> (obs, reward, done, info); close()."""

    def reset(self, task: Task) -> Observation: ...

    def step(self, action: Action) -> tuple[Observation, float, bool, dict[str, Any]]: ...

    def close(self) -> None: ...
