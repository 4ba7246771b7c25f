"""What every device wrapper shares: closing the device it wraps, and passing calls through."""

from __future__ import annotations

from typing import Any

from distrl.envs.protocol import DeviceEnv

__all__ = ["DeviceWrapper"]


class DeviceWrapper:
    """Base of wrappers that change some of a device's behaviour (``reset``/``step``) and leave
    the rest to it: ``close`` closes the device, and backend-specific calls (PhoneSim's
    ``expert_action`` for the oracle) reach it unchanged."""

    def __init__(self, device: DeviceEnv):
        self.device = device

    def close(self) -> None:
        self.device.close()

    def __getattr__(self, name: str) -> Any:
        if name == "device":  # not set yet (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.device, name)
