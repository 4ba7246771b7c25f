"""fake-adb: an adb server that speaks the real host protocol and serves PhoneSim phones.

It lets the Android backend run, unchanged, where no Android can: tests, CI, a laptop. Start it
with ``distrl fake-adb`` (or :class:`FakeAdbServer` in code), then point ``env.backend=android``
at its port.
"""

from distrl.fakeadb.device_shell import FakeDevice, ShellResult
from distrl.fakeadb.server import FakeAdbServer

__all__ = ["FakeAdbServer", "FakeDevice", "ShellResult"]
