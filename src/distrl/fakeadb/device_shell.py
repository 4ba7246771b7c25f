"""What a fake-adb device does with a shell command line: a PhoneSim phone behind Android tools.

The line is read the way the device's ``/system/bin/sh -c`` reads it, and nothing is ever run on
the host: words are split with :mod:`shlex` in POSIX mode (quotes, backslashes), and a small scan
over the quoting finds what a real shell would *interpret* there: command substitution (``$(...)``,
backticks), parameter expansion (``$x``), globs, ``~``, pipes, redirections, ``&``, subshells,
line breaks. The fake emulates none of those; a line that holds one is refused as a whole with an
error (exit status 2) and recorded in :attr:`FakeDevice.refused`, so a test sees at once when a
backend let shell syntax reach a device. Unquoted ``;`` separates commands, as in sh.

Commands emulated (what :mod:`distrl.envs.android` and adbutils use): ``screencap -p [FILE]``,
``uiautomator dump [FILE]`` (default ``/sdcard/window_dump.xml``; ``/dev/tty`` prints it),
``cat``, ``rm``, ``input tap|swipe|keyevent|text``, ``getprop``, ``wm size``, ``am force-stop``,
``echo``, and the task harness a real phone lacks: ``distrl-task setup TASK_ID``,
``distrl-task status`` (``success`` / ``running``) and ``distrl-task expert`` (the scripted
expert's next action in canonical text). Anything else gets the Android shell's answer,
``/system/bin/sh: NAME: inaccessible or not found``, exit status 127.
"""

from __future__ import annotations

import io
import shlex
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PIL import Image

from distrl.config.schema import DynamicsConfig, PhoneSimConfig
from distrl.core.action import MAX_TYPED_TEXT, Action, format_action
from distrl.core.task import Task
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.phone import PhoneSim
from distrl.envs.phonesim.world import populate_world
from distrl.fakeadb.ui_dump import elements_to_xml

SHELL = "/system/bin/sh"
DEFAULT_DUMP_PATH = "/sdcard/window_dump.xml"
_KEYCODES = {"KEYCODE_BACK": "back", "KEYCODE_HOME": "home", "KEYCODE_ENTER": "enter"}
_KEYCODES |= {"4": "back", "3": "home", "66": "enter", "BACK": "back", "HOME": "home"}
_KEYCODES |= {"ENTER": "enter"}
_INPUT_SOURCES = frozenset(
    ("keyboard", "mouse", "joystick", "touchnavigation", "touchpad", "trackball", "stylus")
    + ("dpad", "gamepad", "touchscreen")
)
_GLOB_CHARS = frozenset("*?[{")
_OPERATOR_CHARS = frozenset("&|<>()")


@dataclass(frozen=True)
class ShellResult:
    """A finished command: its output streams and exit status."""

    stdout: bytes = b""
    stderr: bytes = b""
    exit_code: int = 0


def _fail(message: str, exit_code: int = 1) -> ShellResult:
    return ShellResult(stderr=(message + "\n").encode(), exit_code=exit_code)


def _ok(text: str | bytes = b"") -> ShellResult:
    return ShellResult(stdout=text.encode() if isinstance(text, str) else text)


def interpreted_syntax(line: str) -> tuple[list[str], list[int]]:
    """What sh would interpret in ``line`` besides word splitting, and where ``;`` splits it.

    Returns ``(findings, separators)``: a description of each unquoted (or, for ``$`` and
    backticks, double-quoted) special character, and the offsets of unquoted ``;``. Raises
    ValueError for an unterminated quote.
    """
    findings: list[str] = []
    separators: list[int] = []
    state = "plain"
    word_start = True
    index = 0
    while index < len(line):
        char = line[index]
        if state == "single":
            state = "plain" if char == "'" else "single"
        elif state == "double":
            if char == "\\":
                index += 1
            elif char == '"':
                state = "plain"
            elif char in "$`":
                findings.append(f"{char!r} expansion inside double quotes at offset {index}")
        elif char == "\\":
            index += 1
        elif char == "'":
            state = "single"
        elif char == '"':
            state = "double"
        elif char == "#" and word_start:
            break  # a comment runs to the end of the line
        elif char == ";":
            separators.append(index)
        elif char in "$`":
            findings.append(f"{char!r} expansion at offset {index}")
        elif char == "\n":
            findings.append(f"line break at offset {index}")
        elif char in _OPERATOR_CHARS:
            findings.append(f"operator {char!r} at offset {index}")
        elif char in _GLOB_CHARS or (char == "~" and word_start):
            findings.append(f"pattern {char!r} at offset {index}")
        word_start = char in " \t;" if state == "plain" else False
        index += 1
    if state != "plain":
        raise ValueError("unterminated quoted string")
    return findings, separators


def split_command_line(line: str) -> list[list[str]]:
    """``line`` as the argument vectors of its ``;``-separated commands (see
    :func:`interpreted_syntax` for what is refused).

    >>> split_command_line("input text 'a b;c' ; echo  hi")
    [['input', 'text', 'a b;c'], ['echo', 'hi']]
    """
    _, separators = interpreted_syntax(line)
    bounds = [-1, *separators, len(line)]
    commands = []
    for start, end in zip(bounds, bounds[1:], strict=False):
        argv = shlex.split(line[start + 1 : end], comments=True, posix=True)
        if argv:
            commands.append(argv)
    return commands


def android_input_text(argument: str) -> str:
    """What Android's ``input text ARG`` types: every ``%s`` becomes a space.

    Follows the loop in Android's InputShellCommand: a ``%`` arms the escape, and an ``s`` right
    after an armed ``%`` replaces both with a space; there is no way to write a literal ``%s``.
    """
    out: list[str] = []
    armed = False
    for char in argument:
        if armed and char == "s":
            out[-1] = " "
            armed = False
            continue
        out.append(char)
        armed = char == "%"
    return "".join(out)


@lru_cache(maxsize=1)
def _suite_tasks() -> dict[str, Task]:
    from distrl.envs.phonesim.tasks.suites import SPLITS, SUITES, load_suite

    return {task.task_id: task for s in SUITES for p in SPLITS for task in load_suite(s, p)}


def _parse_coordinate(raw: str) -> float:
    value = float(raw)
    return value + 0.5 if value.is_integer() else value  # an integer pixel: touch its centre


class FakeDevice:
    """One fake Android device: a PhoneSim phone that answers shell command lines.

    ``typed`` lists every text ``input text`` received (after Android's ``%s`` decoding);
    ``commands`` every argument vector run; ``refused`` every line refused for shell syntax.
    ``harness=False`` makes a device like a real phone: no ``distrl-task``.
    """

    def __init__(
        self,
        serial: str,
        seed: int = 0,
        phonesim_config: PhoneSimConfig | None = None,
        boot_seconds: float = 0.0,
        harness: bool = True,
    ):
        self.serial = serial
        self.seed = seed
        self.harness = harness
        self.env = PhoneSimEnv(phonesim_config, seed=seed, device_id=serial)
        self.width = self.env.config.width
        self.height = self.env.config.height
        self.booted_at = time.monotonic() + boot_seconds
        self.files: dict[str, bytes] = {}
        self.typed: list[str] = []
        self.commands: list[list[str]] = []
        self.refused: list[str] = []
        self.force_stopped: list[str] = []
        self.lock = threading.Lock()
        rng = np.random.default_rng([seed, 0x1D1E])
        self._idle_phone = PhoneSim(self.env.apps, DynamicsConfig.none(), rng)
        populate_world(self._idle_phone.state, rng)
        self._commands: dict[str, Callable[[list[str]], ShellResult]] = {
            "screencap": self._screencap,
            "uiautomator": self._uiautomator,
            "cat": self._cat,
            "rm": self._rm,
            "input": self._input,
            "getprop": self._getprop,
            "wm": self._wm,
            "am": self._am,
            "echo": lambda argv: _ok(" ".join(argv[1:]) + "\n"),
        }
        if harness:
            self._commands["distrl-task"] = self._distrl_task

    # -- the shell ------------------------------------------------------------------------------
    def run(self, line: str) -> ShellResult:
        """Run one ``sh -c`` command line; the exit status is the last command's."""
        try:
            findings, _ = interpreted_syntax(line)
            commands = split_command_line(line)
        except ValueError as error:
            return _fail(f"{SHELL}: syntax error: {error}", 2)
        if findings:
            self.refused.append(line)
            return _fail(f"{SHELL}: fake-adb does not emulate {'; '.join(findings)}", 2)
        stdout, stderr, result = b"", b"", ShellResult()
        with self.lock:
            for argv in commands:
                self.commands.append(argv)
                handler = self._commands.get(argv[0])
                if handler is None:
                    result = _fail(f"{SHELL}: {argv[0]}: inaccessible or not found", 127)
                else:
                    result = handler(argv)
                stdout += result.stdout
                stderr += result.stderr
        return ShellResult(stdout, stderr, result.exit_code)

    @property
    def phone(self) -> PhoneSim:
        return self.env.phone if self.env.phone is not None else self._idle_phone

    @property
    def boot_completed(self) -> bool:
        return time.monotonic() >= self.booted_at

    # -- what the screen shows ------------------------------------------------------------------
    def screenshot(self) -> np.ndarray:
        phone = self.phone
        return self.env.renderer.render(phone.screen(), phone.theme())

    def png(self) -> bytes:
        buffer = io.BytesIO()
        Image.fromarray(self.screenshot()).save(buffer, format="PNG", compress_level=1)
        return buffer.getvalue()

    def ui_xml(self) -> str:
        phone = self.phone
        return elements_to_xml(
            phone.elements(), self.width, self.height, phone.screen().page.package
        )

    # -- commands -------------------------------------------------------------------------------
    def _screencap(self, argv: list[str]) -> ShellResult:
        args = argv[1:]
        if "-p" not in args:
            return _fail("fake-adb: screencap writes PNG only (use screencap -p)")
        paths = [a for a in args if a != "-p"]
        if len(paths) > 1 or any(p.startswith("-") for p in paths):
            return _fail(f"fake-adb: screencap: unsupported arguments {paths}")
        if paths:
            self.files[paths[0]] = self.png()
            return _ok()
        return _ok(self.png())

    def _uiautomator(self, argv: list[str]) -> ShellResult:
        args = [a for a in argv[1:] if a != "--compressed"]
        if not args or args[0] != "dump" or len(args) > 2:
            return _fail("Usage: uiautomator dump [--compressed] [file]")
        path = args[1] if len(args) == 2 else DEFAULT_DUMP_PATH
        xml = self.ui_xml().encode()
        message = f"UI hierchary dumped to: {path}\n".encode()  # sic: Android's own spelling
        if path == "/dev/tty":
            return _ok(xml + message)
        self.files[path] = xml
        return _ok(message)

    def _cat(self, argv: list[str]) -> ShellResult:
        out, err, code = b"", b"", 0
        for path in argv[1:]:
            if path in self.files:
                out += self.files[path]
            else:
                err += f"cat: {path}: No such file or directory\n".encode()
                code = 1
        return ShellResult(out, err, code)

    def _rm(self, argv: list[str]) -> ShellResult:
        force = "-f" in argv[1:]
        for path in (a for a in argv[1:] if a != "-f"):
            if self.files.pop(path, None) is None and not force:
                return _fail(f"rm: {path}: No such file or directory")
        return _ok()

    def _getprop(self, argv: list[str]) -> ShellResult:
        props = {
            "sys.boot_completed": "1" if self.boot_completed else "",
            "ro.product.model": "PhoneSim",
            "ro.product.manufacturer": "distrl",
            "ro.build.version.sdk": "34",
            "ro.build.version.release": "14",
        }
        if len(argv) == 1:
            return _ok("".join(f"[{name}]: [{value}]\n" for name, value in props.items()))
        return _ok(props.get(argv[1], argv[2] if len(argv) > 2 else "") + "\n")

    def _wm(self, argv: list[str]) -> ShellResult:
        if argv[1:] == ["size"]:
            return _ok(f"Physical size: {self.width}x{self.height}\n")
        return _fail(f"fake-adb: wm {' '.join(argv[1:])}: not emulated")

    def _am(self, argv: list[str]) -> ShellResult:
        if len(argv) == 3 and argv[1] == "force-stop":
            self.force_stopped.append(argv[2])
            return _ok()
        return _fail(f"fake-adb: am {' '.join(argv[1:])}: not emulated")

    # -- input ----------------------------------------------------------------------------------
    def _input(self, argv: list[str]) -> ShellResult:
        args = argv[1:]
        if args and args[0] in _INPUT_SOURCES:
            args = args[1:]
        if len(args) >= 2 and args[0] == "-d":
            args = args[2:]
        if not args:
            return _fail("Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]")
        command, rest = args[0], args[1:]
        try:
            actions = self._input_actions(command, rest)
        except ValueError as error:
            return _fail(f"Error: {error}")
        for action in actions:
            self._apply(action)
        return _ok()

    def _input_actions(self, command: str, args: list[str]) -> list[Action]:
        if command == "tap" and len(args) == 2:
            x, y = (_parse_coordinate(a) for a in args)
            return [self._touch((x, y), (x, y))] if self._on_screen(x, y) else []
        if command == "swipe" and len(args) in (4, 5):
            x0, y0, x1, y1 = (_parse_coordinate(a) for a in args[:4])
            if not (self._on_screen(x0, y0) and self._on_screen(x1, y1)):
                return []
            return [self._touch((x0, y0), (x1, y1))]
        if command == "keyevent" and args:
            keys = [a for a in args if a not in ("--longpress", "--doubletap")]
            unknown = [k for k in keys if k not in _KEYCODES]
            if unknown or not keys:
                raise ValueError(f"keycode(s) {unknown} not emulated by fake-adb")
            press = {"back": Action.press_back, "home": Action.press_home}
            press["enter"] = Action.press_enter
            return [press[_KEYCODES[k]]() for k in keys]
        if command == "text" and len(args) == 1:
            text = android_input_text(args[0])
            bad = [c for c in text if not " " <= c <= "~"]
            if bad:
                raise ValueError(f"no key for {bad[0]!r} in the virtual keyboard map")
            self.typed.append(text)
            return [
                Action.type_text(text[i : i + MAX_TYPED_TEXT])
                for i in range(0, len(text), MAX_TYPED_TEXT)
            ]
        raise ValueError(f"invalid arguments for input {command}: {args}")

    def _on_screen(self, x: float, y: float) -> bool:
        return 0 <= x < self.width and 0 <= y < self.height

    def _touch(self, start: tuple[float, float], end: tuple[float, float]) -> Action:
        def yx(point: tuple[float, float]) -> tuple[float, float]:
            return (min(point[1] / self.height, 1.0), min(point[0] / self.width, 1.0))

        return Action.dual_point(yx(start), yx(end))

    def _apply(self, action: Action) -> None:
        """One input event: the phone takes it (and, when the latency model is on, its time and
        faults, which the server turns into a vanished or silent device)."""
        if self.env.phone is not None:
            self.env.latency.step(action)
        self.phone.apply(action)

    # -- the device-side task harness -----------------------------------------------------------
    def _distrl_task(self, argv: list[str]) -> ShellResult:
        args = argv[1:]
        if len(args) == 2 and args[0] == "setup":
            task = _suite_tasks().get(args[1])
            if task is None:
                return _fail(
                    f"distrl-task: unknown task {args[1]!r} (this device knows the PhoneSim "
                    "suites' task ids, e.g. general-train-0000)"
                )
            self.env.reset(task)
            return _ok(f"task {task.task_id} set up\n")
        if args in (["status"], ["expert"]):
            if self.env.phone is None:
                return _fail("distrl-task: no task set up (run: distrl-task setup TASK_ID)")
            if args == ["status"]:
                return _ok("success\n" if self.env.is_success() else "running\n")
            return _ok(format_action(self.env.expert_action()) + "\n")
        return _fail("Usage: distrl-task setup TASK_ID | status | expert")
