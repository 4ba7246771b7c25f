"""The faults a device can raise, shared by every layer that meets a device.

Backends raise them, judges that stand in for a device's success signal raise them, and the
runtime catches :class:`DeviceFault` to restart a device and drop its partial episode, so
algorithms never see a dead device. They live in ``core`` because all of those layers need
them and none should import another's module to get them.
"""

from __future__ import annotations


class DeviceFault(RuntimeError):
    """A device failed; the episode on it is lost and the device must be restarted."""


class DeviceCrashed(DeviceFault):
    """The device died (emulator process gone, adb connection lost)."""


class DeviceHung(DeviceFault):
    """The device stopped answering within its step timeout."""


class InferenceUnavailable(RuntimeError):
    """The inference service that chooses a worker's actions did not answer (it died and was
    not back within the retry period): the episodes waiting for an action are dropped, the
    devices themselves are fine."""
