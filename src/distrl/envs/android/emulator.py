"""Emulators from the user's Android SDK: start, wait for boot, snapshot, health check, restart.

DigiRL re-cloned AVDs for every reset, which cost most of each iteration; here each emulator
boots once, saves a snapshot (``env.android.emulator.snapshot``) and every reset loads it, which
takes seconds.

Snapshots go through the *emulator console*, the telnet-style text protocol every emulator serves
on its console port (the even port ``P`` of serial ``emulator-P``; adb is on ``P+1``):
``avd snapshot save NAME`` / ``avd snapshot load NAME``. ``adb emu ...`` is the same thing (the adb
client connects to that console itself; the adb server is not involved) and adbutils has no
``emu``, so :class:`EmulatorConsole` speaks it directly: read the banner, answer
``auth TOKEN`` from ``~/.emulator_console_auth_token`` when the banner asks, send the command,
read until ``OK`` (or ``KO: reason``).

An emulator counts as healthy when its process lives, ``getprop sys.boot_completed`` says ``1``
and ``screencap -p`` returns a PNG (a booted but wedged system server fails the last one).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from distrl.config.schema import AndroidConfig
from distrl.core.faults import DeviceCrashed, DeviceFault
from distrl.envs.android.adb_device import AdbDevice, list_devices
from distrl.errors import InputError

TOKEN_FILE = ".emulator_console_auth_token"
_POLL_SECONDS = 0.25
_LOG_TAIL_CHARS = 600


class EmulatorNotFound(InputError):
    """``env.android.emulator.binary`` is missing or not executable."""


class EmulatorBootError(InputError):
    """An emulator exited or did not boot in time; the message holds its log's tail."""


class ConsoleError(RuntimeError):
    """The emulator console refused a command (``KO: ...``) or could not be reached."""


class EmulatorConsole:
    """A client of one emulator's console (``adb emu`` without adb).

    ``token_path`` defaults to ``~/.emulator_console_auth_token``, which the emulator writes.
    """

    def __init__(
        self,
        port: int,
        host: str = "127.0.0.1",
        token_path: Path | None = None,
        timeout: float = 30.0,
    ):
        self.port = port
        self.host = host
        self.token_path = token_path
        self.timeout = timeout

    @classmethod
    def for_serial(cls, serial: str, **kwargs: object) -> EmulatorConsole:
        """The console of emulator ``emulator-PORT``; InputError for other serials."""
        prefix, _, port = serial.partition("-")
        if prefix != "emulator" or not port.isdigit():
            raise InputError(
                f"env.android.reset=snapshot needs emulators (serials like emulator-5554), but "
                f"{serial!r} is not one; use env.android.reset=home for phones and fake-adb"
            )
        return cls(int(port), **kwargs)  # type: ignore[arg-type]

    def _token(self) -> str:
        path = self.token_path or Path.home() / TOKEN_FILE
        try:
            return path.read_text().strip()
        except OSError as error:
            raise ConsoleError(
                f"emulator console on port {self.port} wants an auth token, but {path} cannot be "
                f"read ({error.strerror})"
            ) from error

    def command(self, line: str) -> str:
        """Send one console command; returns its output (the lines before ``OK``)."""
        try:
            with socket.create_connection((self.host, self.port), timeout=self.timeout) as sock:
                reader = sock.makefile("rb")
                banner = _read_reply(reader)
                if "Authentication required" in banner:
                    sock.sendall(f"auth {self._token()}\r\n".encode())
                    _read_reply(reader)
                sock.sendall(line.encode() + b"\r\n")
                reply = _read_reply(reader)
                with suppress(OSError):
                    sock.sendall(b"quit\r\n")
                return reply
        except OSError as error:
            raise ConsoleError(
                f"emulator console {self.host}:{self.port} unreachable ({error})"
            ) from error

    def save_snapshot(self, name: str) -> None:
        self.command(f"avd snapshot save {name}")

    def load_snapshot(self, name: str) -> None:
        """Load snapshot ``name``; a console refusal or a dead emulator is a device fault."""
        try:
            self.command(f"avd snapshot load {name}")
        except ConsoleError as error:
            raise DeviceCrashed(f"snapshot {name!r} not loaded: {error}") from error

    def kill(self) -> bool:
        """Ask the emulator to exit; False when its console did not take the command."""
        try:
            self.command("kill")
        except ConsoleError as error:
            return "closed the connection" in str(error)  # it exits as it answers
        return True


def _read_reply(reader: object) -> str:
    """Lines up to ``OK`` (returned, without it) or ``KO: ...`` (raised)."""
    lines: list[str] = []
    while True:
        raw = reader.readline()  # type: ignore[attr-defined]
        if not raw:
            raise ConsoleError("console closed the connection")
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if line == "OK" or line.startswith("OK:"):  # "OK: killing emulator, bye bye"
            return "\n".join(lines)
        if line.startswith("KO"):
            raise ConsoleError(line)
        lines.append(line)


@dataclass
class _Emulator:
    port: int
    process: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None

    @property
    def serial(self) -> str:
        return f"emulator-{self.port}"

    def log_tail(self) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return self.log_path.read_text(errors="replace")[-_LOG_TAIL_CHARS:].strip()


class EmulatorPool:
    """``config.emulator.count`` emulators of one AVD on consecutive console ports.

    ``start()`` boots them all and saves the snapshot once each; ``restart(i)`` replaces a dead
    one; ``stop()`` ends them. A context manager stops them on exit.
    """

    def __init__(self, config: AndroidConfig, log_dir: Path | None = None):
        emulator = config.emulator
        if emulator.binary is None or emulator.avd is None:
            raise InputError(
                "an emulator pool needs env.android.emulator.binary (the SDK's emulator) and "
                "env.android.emulator.avd (an AVD name from `emulator -list-avds`)"
            )
        if emulator.first_port % 2:
            raise InputError(
                f"env.android.emulator.first_port={emulator.first_port} must be even (emulator "
                "console ports are even; adb takes the odd port after each)"
            )
        self.config = config
        self.log_dir = log_dir or Path(tempfile.mkdtemp(prefix="distrl-emulators-"))
        self.emulators = [
            _Emulator(emulator.first_port + 2 * index) for index in range(emulator.count)
        ]

    # -- command line ---------------------------------------------------------------------------
    def executable(self) -> str:
        """The emulator binary's path; :class:`EmulatorNotFound` unless it can be run."""
        binary = str(self.config.emulator.binary)
        found = shutil.which(binary) if os.sep not in binary else binary
        if found is None or not Path(found).is_file():
            raise EmulatorNotFound(
                f"env.android.emulator.binary={binary!r} does not exist; point it at the SDK's "
                "emulator (usually $ANDROID_HOME/emulator/emulator)"
            )
        if not os.access(found, os.X_OK):
            raise EmulatorNotFound(
                f"env.android.emulator.binary={binary!r} is not executable (chmod +x it)"
            )
        return found

    def command_line(self, index: int, executable: str | None = None) -> list[str]:
        """The argv that starts emulator ``index``: headless, silent, on its console port."""
        emulator = self.config.emulator
        return [
            executable or str(emulator.binary),
            "-avd",
            str(emulator.avd),
            "-no-window",
            "-port",
            str(self.emulators[index].port),
            "-no-audio",
            "-no-boot-anim",
            *emulator.extra_args,
        ]

    # -- lifecycle ------------------------------------------------------------------------------
    @property
    def serials(self) -> list[str]:
        return [emulator.serial for emulator in self.emulators]

    def start(self) -> list[str]:
        """Boot every emulator, save the snapshot on each; returns their serials."""
        executable = self.executable()
        list_devices(self.config.adb_host, self.config.adb_port)  # no adb server: say so now
        for index in range(len(self.emulators)):
            self._launch(index, executable)
        for index in range(len(self.emulators)):
            self.wait_for_boot(index)
            self.console(index).save_snapshot(self.config.emulator.snapshot)
        return self.serials

    def _launch(self, index: int, executable: str) -> None:
        emulator = self.emulators[index]
        self.log_dir.mkdir(parents=True, exist_ok=True)
        emulator.log_path = self.log_dir / f"{emulator.serial}.log"
        environment = dict(os.environ, ANDROID_ADB_SERVER_PORT=str(self.config.adb_port))
        with open(emulator.log_path, "ab") as log:
            emulator.process = subprocess.Popen(
                self.command_line(index, executable),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=environment,
                start_new_session=True,  # Ctrl-C in the terminal stops us, then we stop it
            )

    def wait_for_boot(self, index: int) -> None:
        """Block until emulator ``index`` is listed and reports ``sys.boot_completed=1``."""
        emulator = self.emulators[index]
        timeout = self.config.emulator.boot_timeout_seconds
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if emulator.process is not None and emulator.process.poll() is not None:
                raise EmulatorBootError(
                    f"{emulator.serial} exited with status {emulator.process.returncode} while "
                    f"booting (log {emulator.log_path}): {emulator.log_tail()}"
                )
            if self._boot_completed(emulator.serial):
                return
            time.sleep(_POLL_SECONDS)
        self._terminate(emulator)
        raise EmulatorBootError(
            f"{emulator.serial} did not boot within {timeout:.0f} s (log {emulator.log_path}): "
            f"{emulator.log_tail()}; raise env.android.emulator.boot_timeout_seconds or check "
            "the AVD"
        )

    def _boot_completed(self, serial: str) -> bool:
        config = self.config
        devices = dict(list_devices(config.adb_host, config.adb_port))
        if devices.get(serial) != "device":
            return False
        try:
            device = AdbDevice(serial, config.adb_host, config.adb_port, timeout=5.0)
            return device.getprop("sys.boot_completed") == "1"
        except (InputError, DeviceFault):
            return False

    def healthy(self, index: int) -> bool:
        """Process alive, boot completed, and the screen answers a screencap with a PNG."""
        emulator = self.emulators[index]
        if emulator.process is None or emulator.process.poll() is not None:
            return False
        config = self.config
        try:
            device = AdbDevice(
                emulator.serial, config.adb_host, config.adb_port, config.command_timeout_seconds
            )
            if device.getprop("sys.boot_completed") != "1":
                return False
            return device.exec_out("screencap -p").startswith(b"\x89PNG\r\n\x1a\n")
        except (InputError, DeviceFault):
            return False

    def restart(self, index: int) -> str:
        """Replace emulator ``index`` (dead or wedged) and load the snapshot; a failed boot is a
        :class:`~distrl.core.faults.DeviceCrashed`."""
        emulator = self.emulators[index]
        self._terminate(emulator)
        try:
            self._launch(index, self.executable())
            self.wait_for_boot(index)
        except EmulatorBootError as error:
            raise DeviceCrashed(str(error)) from error
        self.console(index).load_snapshot(self.config.emulator.snapshot)
        return emulator.serial

    def console(self, index: int) -> EmulatorConsole:
        return EmulatorConsole(self.emulators[index].port, timeout=30.0)

    def stop(self) -> None:
        for emulator in self.emulators:
            self._terminate(emulator)

    def _terminate(self, emulator: _Emulator) -> None:
        process = emulator.process
        if process is None:
            return
        if process.poll() is None:
            asked = EmulatorConsole(emulator.port, timeout=5.0).kill()
            try:
                process.wait(timeout=10 if asked else 0.01)
            except subprocess.TimeoutExpired:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        emulator.process = None

    def __enter__(self) -> EmulatorPool:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
