"""The Android backend: real phones and SDK emulators over an adb server (``env.backend=android``).

:class:`~distrl.envs.android.env.AndroidEnv` is the device; :mod:`~distrl.envs.android.adb_device`
talks to adb, :mod:`~distrl.envs.android.escape` makes typed text safe from the device shell,
:mod:`~distrl.envs.android.ui_xml` reads ``uiautomator dump`` and
:mod:`~distrl.envs.android.emulator` runs emulators from the SDK. Without Android at hand, run it
against :mod:`distrl.fakeadb`.
"""

from distrl.envs.android.adb_device import AdbDevice, list_devices, online_serials
from distrl.envs.android.emulator import EmulatorConsole, EmulatorPool
from distrl.envs.android.env import AndroidEnv

__all__ = [
    "AdbDevice",
    "AndroidEnv",
    "EmulatorConsole",
    "EmulatorPool",
    "list_devices",
    "online_serials",
]
