"""One Android device behind an adb server, through adbutils, with timeouts and clear failures.

Every command runs under a deadline (``command_timeout_seconds``): a device that stops answering
is a :class:`~distrl.core.faults.DeviceHung`, a device or server that goes away mid-episode a
:class:`~distrl.core.faults.DeviceCrashed`, so the runtime restarts it like any other device.
What the user can fix before a run starts (no adb server, a wrong serial, a device that is offline
or has not authorised this computer) is an :class:`~distrl.errors.InputError` naming the fix.

adbutils starts a local adb server (``adb start-server``) whenever it cannot connect. That would
leave a daemon running on the default port behind the user's back and hide a wrong
``adb_host``/``adb_port``; the client here connects without that fallback.

Commands go over shell protocol v2 when the device offers it (exit status and stderr apart, as
since Android 7), else over the plain shell service with the status echoed after a marker.
"""

from __future__ import annotations

import io
import re
import socket
import struct
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

import adbutils
import numpy as np
from adbutils.errors import AdbConnectionError, AdbError, AdbTimeout
from PIL import Image, UnidentifiedImageError

from distrl.config.schema import AndroidConfig
from distrl.core.faults import DeviceCrashed, DeviceFault, DeviceHung
from distrl.envs.android.escape import input_text_commands
from distrl.errors import InputError

DUMP_PATH = "/sdcard/window_dump.xml"
_EXIT_MARKER = "distrl-exit:"
_KEYCODE_RE = re.compile(r"^(KEYCODE_[A-Z0-9_]+|\d+)$")
_PROP_RE = re.compile(r"^[A-Za-z0-9_.\-]+$")
_PACKAGE_RE = re.compile(r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$")
_SIZE_RE = re.compile(r"(Physical|Override) size:\s*(\d+)x(\d+)")


class AdbServerUnavailable(InputError):
    """No adb server answers at the configured host and port."""


class DeviceUnavailable(InputError):
    """The adb server does not offer the device (absent, offline, unauthorised)."""


class AdbCommandFailed(DeviceFault):
    """A device command that must succeed (tap, screencap) failed; the device needs a restart."""


@dataclass(frozen=True)
class CommandResult:
    """What one device command printed and its exit status (None: the device did not say)."""

    stdout: bytes
    stderr: bytes
    exit_code: int | None

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")


class _DirectConnection(adbutils.AdbConnection):
    """An adbutils connection that never starts an adb server when none answers."""

    def _safe_connect(self) -> socket.socket:
        return self._create_socket()


class _Client(adbutils.AdbClient):
    """adbutils' client with :class:`_DirectConnection` and the server version asked once
    (adbutils asks it before every transport switch: one extra round trip per command)."""

    def __init__(self, host: str, port: int, timeout: float):
        super().__init__(host, port, socket_timeout=timeout)
        self._timeout = timeout
        self._version: int | None = None

    def make_connection(self, timeout: float | None = None) -> adbutils.AdbConnection:
        connection = _DirectConnection(self.host, self.port)
        connection.conn.settimeout(timeout or self._timeout)
        return connection

    def server_version(self) -> int:
        if self._version is None:
            self._version = super().server_version()
        return self._version


def _server_hint(host: str, port: int) -> str:
    return (
        f"start one with `adb -P {port} start-server` (phones, emulators) or "
        f"`distrl fake-adb --port {port}` (PhoneSim phones), or set env.android.adb_host/adb_port"
    )


def list_devices(host: str, port: int, timeout: float = 10.0) -> list[tuple[str, str]]:
    """``(serial, state)`` of every device the adb server at ``host:port`` lists."""
    client = _Client(host, port, timeout)
    try:
        return [(info.serial, info.state) for info in client.list()]
    except (AdbConnectionError, AdbTimeout, OSError) as error:
        raise AdbServerUnavailable(
            f"no adb server at {host}:{port} ({error}): {_server_hint(host, port)}"
        ) from error


def online_serials(config: AndroidConfig) -> list[str]:
    """Serials of the devices in state ``device`` (booted, authorised) at the configured server."""
    devices = list_devices(config.adb_host, config.adb_port, config.command_timeout_seconds)
    return [serial for serial, state in devices if state == "device"]


class AdbDevice:
    """A device at an adb server: screenshots, UI dumps, input, properties.

    Construction checks the server and the device and raises :class:`AdbServerUnavailable` or
    :class:`DeviceUnavailable` with the fix; later failures are device faults.

    >>> from distrl.fakeadb import FakeAdbServer
    >>> with FakeAdbServer(devices=1) as server:
    ...     device = AdbDevice("phonesim-0", port=server.port)
    ...     device.screen_size(), device.screenshot().shape
    ((360, 720), (720, 360, 3))
    """

    def __init__(
        self, serial: str, host: str = "127.0.0.1", port: int = 5037, timeout: float = 30.0
    ):
        self.serial = serial
        self.host = host
        self.port = port
        self.timeout = timeout
        self._client = _Client(host, port, timeout)
        self.check_available()
        self._device = self._client.device(serial)
        with self._errors("features"):
            self.shell_v2 = "shell_v2" in self._device.get_features().split(",")

    # -- availability ---------------------------------------------------------------------------
    def check_available(self) -> None:
        """Raise :class:`AdbServerUnavailable` / :class:`DeviceUnavailable` unless the device is
        listed in state ``device``."""
        devices = dict(list_devices(self.host, self.port, self.timeout))
        state = devices.get(self.serial)
        where = f"the adb server at {self.host}:{self.port}"
        if state is None:
            listed = ", ".join(f"{s} ({st})" for s, st in devices.items()) or "no devices"
            raise DeviceUnavailable(
                f"no device {self.serial!r} at {where} (it lists: {listed}); check "
                "env.android.serials or `adb devices`"
            )
        if state == "offline":
            raise DeviceUnavailable(
                f"device {self.serial} is offline at {where}: wait for it to boot, or reconnect "
                "it (`adb reconnect offline`)"
            )
        if state == "unauthorized":
            raise DeviceUnavailable(
                f"device {self.serial} is unauthorized at {where}: unlock it and accept the "
                "'Allow USB debugging' prompt, then retry"
            )
        if state != "device":
            raise DeviceUnavailable(
                f"device {self.serial} is in state {state!r} at {where}, not 'device'; boot it "
                "into Android first"
            )

    # -- running commands -----------------------------------------------------------------------
    @contextmanager
    def _errors(self, command: str) -> Iterator[None]:
        """Map transport failures onto device faults that name the device and the command."""
        try:
            yield
        except (AdbTimeout, TimeoutError) as error:
            raise DeviceHung(
                f"device {self.serial}: `{command}` got no answer within {self.timeout:.1f} s"
            ) from error
        except (AdbError, EOFError, OSError) as error:
            raise DeviceCrashed(
                f"device {self.serial} at {self.host}:{self.port} lost during `{command}`: "
                f"{error or type(error).__name__}"
            ) from error

    def _read(self, connection: adbutils.AdbConnection, deadline: float) -> Iterator[bytes]:
        """Chunks until the device closes the stream; :class:`TimeoutError` past ``deadline``."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("deadline passed")
            connection.conn.settimeout(remaining)
            chunk = connection.conn.recv(65536)
            if not chunk:
                return
            yield chunk

    def _open(self, service: str, deadline: float) -> adbutils.AdbConnection:
        connection = self._device.open_transport(timeout=max(deadline - time.monotonic(), 0.001))
        connection.send_command(service)
        connection.check_okay()
        return connection

    def shell(self, command: str, timeout: float | None = None) -> CommandResult:
        """Run ``command`` in the device shell (one string: the device's sh parses it)."""
        deadline = time.monotonic() + (timeout or self.timeout)
        with self._errors(command):
            if not self.shell_v2:
                return self._shell_v1(command, deadline)
            connection = self._open("shell,v2,raw:" + command, deadline)
            try:
                result = _parse_shell_v2(b"".join(self._read(connection, deadline)))
            finally:
                _drop(connection)
            if result.exit_code is None:
                raise EOFError("the shell stream ended without an exit status")
            return result

    def _shell_v1(self, command: str, deadline: float) -> CommandResult:
        connection = self._open(f'shell:{command}; echo "{_EXIT_MARKER}$?"', deadline)
        try:
            output = b"".join(self._read(connection, deadline))
        finally:
            _drop(connection)
        head, marker, tail = output.rpartition(_EXIT_MARKER.encode())
        if not marker:
            return CommandResult(output, b"", None)
        return CommandResult(head, b"", int(tail.strip() or b"0"))

    def exec_out(self, command: str, timeout: float | None = None) -> bytes:
        """``adb exec-out COMMAND``: the raw bytes the command wrote (no tty, no line ending
        translation), which is what binary output such as a PNG needs."""
        deadline = time.monotonic() + (timeout or self.timeout)
        with self._errors(command):
            connection = self._open("exec:" + command, deadline)
            try:
                return b"".join(self._read(connection, deadline))
            finally:
                _drop(connection)

    def run_checked(self, command: str) -> CommandResult:
        """:meth:`shell`, raising :class:`AdbCommandFailed` unless the command succeeded."""
        result = self.shell(command)
        if result.exit_code not in (0, None):
            detail = (result.stderr or result.stdout).decode("utf-8", errors="replace").strip()
            raise AdbCommandFailed(
                f"device {self.serial}: `{command}` failed (exit {result.exit_code}): {detail}"
            )
        return result

    # -- what the device shows ------------------------------------------------------------------
    def screenshot(self) -> np.ndarray:
        """The screen as HxWx3 uint8, from ``exec-out screencap -p``."""
        png = self.exec_out("screencap -p")
        try:
            image = Image.open(io.BytesIO(png))
            return np.asarray(image.convert("RGB"), dtype=np.uint8)
        except (UnidentifiedImageError, OSError) as error:
            raise AdbCommandFailed(
                f"device {self.serial}: screencap returned no PNG: {png[:80]!r}"
            ) from error

    def ui_dump(self) -> str:
        """The UI hierarchy XML from ``uiautomator dump`` (retried once: uiautomator fails now and
        then while the screen animates)."""
        message = ""
        for _ in range(2):
            result = self.shell(f"uiautomator dump {DUMP_PATH}")
            if "dumped to" in result.text:
                return self.run_checked(f"cat {DUMP_PATH}").text
            message = (result.text + result.stderr.decode("utf-8", errors="replace")).strip()
        raise AdbCommandFailed(f"device {self.serial}: uiautomator dump failed: {message}")

    def screen_size(self) -> tuple[int, int]:
        """``(width, height)`` in pixels from ``wm size`` (an override size wins)."""
        text = self.run_checked("wm size").text
        sizes = {kind: (int(w), int(h)) for kind, w, h in _SIZE_RE.findall(text)}
        size = sizes.get("Override") or sizes.get("Physical")
        if size is None:
            raise AdbCommandFailed(f"device {self.serial}: cannot read `wm size`: {text!r}")
        return size

    def getprop(self, name: str) -> str:
        if not _PROP_RE.match(name):
            raise ValueError(f"not a property name: {name!r}")
        return self.shell(f"getprop {name}").text.strip()

    # -- input ----------------------------------------------------------------------------------
    def tap(self, x: int, y: int) -> None:
        self.run_checked(f"input tap {int(x)} {int(y)}")

    def swipe(self, x0: int, y0: int, x1: int, y1: int, duration_ms: int = 300) -> None:
        self.run_checked(f"input swipe {int(x0)} {int(y0)} {int(x1)} {int(y1)} {int(duration_ms)}")

    def keyevent(self, keycode: str) -> None:
        if not _KEYCODE_RE.match(keycode):
            raise ValueError(f"not a key code: {keycode!r}")
        self.run_checked(f"input keyevent {keycode}")

    def type_text(self, text: str) -> None:
        """Type ``text`` literally (see :mod:`distrl.envs.android.escape`); raises
        :class:`~distrl.envs.android.escape.UntypeableText` before sending anything."""
        for command in input_text_commands(text):
            self.run_checked(command)

    def force_stop(self, package: str) -> None:
        if not _PACKAGE_RE.match(package):
            raise ValueError(f"not a package name: {package!r}")
        self.run_checked(f"am force-stop {package}")


def _parse_shell_v2(data: bytes) -> CommandResult:
    """Split a shell-v2 stream (``id``, u32 little-endian length, payload) into its parts."""
    stdout, stderr = bytearray(), bytearray()
    exit_code: int | None = None
    offset = 0
    while offset + 5 <= len(data):
        packet_id, length = struct.unpack_from("<BI", data, offset)
        payload = data[offset + 5 : offset + 5 + length]
        offset += 5 + length
        if packet_id == 1:
            stdout += payload
        elif packet_id == 2:
            stderr += payload
        elif packet_id == 3 and payload:
            exit_code = payload[0]
    return CommandResult(bytes(stdout), bytes(stderr), exit_code)


def _drop(connection: adbutils.AdbConnection) -> None:
    """Close a connection whose stream was read to its end. (adbutils' ``close`` half-closes and
    then sleeps 10 ms for the peer; at several commands a step that was most of a step's time.)"""
    with suppress(OSError):
        connection.conn.close()
