"""Android over adb as a :class:`~distrl.envs.protocol.DeviceEnv`: the same episode as PhoneSim's.

An episode: ``reset(task)`` brings the device back to a known start (``env.android.reset``:
``home`` presses HOME and force-stops the apps the last episode opened; ``snapshot`` loads the
emulator snapshot through the emulator console), sets the task up on devices that can (the
``distrl-task`` harness of fake-adb's PhoneSim phones) and observes. Each ``step(action)`` turns
the AitW action into ``adb shell input`` (a tap or swipe in pixels, text typed literally, key
events), waits ``settle_seconds``, observes (``screencap`` + ``uiautomator dump``) and judges
success: from the device (``distrl-task status``) or from a :class:`SuccessJudge` (a VLM looking
at the last screenshots). Ends, reward and ``info`` keys are exactly PhoneSim's.

Text a device cannot type (non-ASCII, control characters) is not sent; the step counts as invalid
with the reason, like an unparsable action, so a policy that emits it is penalised and the run
goes on.

>>> from distrl.config.schema import AndroidConfig
>>> from distrl.envs.phonesim.tasks.suites import load_suite
>>> from distrl.fakeadb import FakeAdbServer
>>> with FakeAdbServer(devices=1) as server:
...     env = AndroidEnv(AndroidConfig(adb_port=server.port), "phonesim-0")
...     obs = env.reset(load_suite("general", "train")[0])
...     obs.screenshot.shape
(720, 360, 3)
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

import numpy as np

from distrl.config.schema import AndroidConfig
from distrl.core.action import Action, ActionType, parse_action
from distrl.core.faults import DeviceCrashed, DeviceFault
from distrl.core.observation import Observation
from distrl.core.task import Task
from distrl.envs.android.adb_device import (
    AdbCommandFailed,
    AdbDevice,
    CommandResult,
    DeviceUnavailable,
)
from distrl.envs.android.emulator import EmulatorConsole
from distrl.envs.android.escape import UntypeableText, quote
from distrl.envs.android.ui_xml import UIDumpError, dump_packages, parse_ui_xml
from distrl.envs.protocol import StepRules
from distrl.errors import InputError
from distrl.judges.base import SuccessJudge

#: Screenshots kept for the success judge (the current one and the two before it).
JUDGE_SCREENSHOTS = 3
SWIPE_MILLISECONDS = 300
_NOT_FOUND_EXIT = 127
#: Packages never force-stopped at a ``home`` reset (the system UI, the framework).
_SYSTEM_PACKAGES = frozenset({"android", "com.android.systemui"})
_KEYS = {
    ActionType.PRESS_BACK: "KEYCODE_BACK",
    ActionType.PRESS_HOME: "KEYCODE_HOME",
    ActionType.PRESS_ENTER: "KEYCODE_ENTER",
}


class TaskHarnessMissing(InputError):
    """The device cannot set up tasks, report success or give expert actions."""


class TaskSetupError(InputError):
    """The device's task harness could not set the task up (unknown task id)."""


def _pixel(coordinate: float, size: int) -> int:
    """The pixel holding normalised ``coordinate``: ``[l/size, r/size)`` maps into ``[l, r)``."""
    return min(max(int(coordinate * size), 0), size - 1)


class AndroidEnv(StepRules):
    """One Android device (phone, emulator or fake-adb phone) behind an adb server."""

    def __init__(
        self,
        config: AndroidConfig,
        serial: str,
        judge: SuccessJudge | None = None,
        device_id: str | None = None,
    ):
        self.config = config
        self.serial = serial
        self.judge = judge
        self.device_id = device_id or serial
        self.device = AdbDevice(
            serial, config.adb_host, config.adb_port, config.command_timeout_seconds
        )
        self.width, self.height = self.device.screen_size()
        self.task: Task | None = None
        self.steps = 0
        self.done = True
        self.faulted = False
        self.actions: list[Action] = []
        self.screenshots: deque[np.ndarray] = deque(maxlen=JUDGE_SCREENSHOTS)
        #: Apps seen in front during the episode: a ``home`` reset force-stops them.
        self.packages_seen: set[str] = set()

    # -- DeviceEnv -------------------------------------------------------------------------------
    def reset(self, task: Task) -> Observation:
        """Start ``task``; after a device fault this is also the restart (reconnect first)."""
        try:
            if self.faulted:
                self._reconnect()
            self._return_to_start()
            if self.judge is None or task.backend == "phonesim":
                self._set_up(task)  # PhoneSim tasks need their world; instructions alone don't
            self.task, self.steps, self.done = task, 0, False
            self.actions = []
            self.screenshots.clear()
            return self.observe()
        except DeviceFault:
            self.faulted = True
            raise

    def step(self, action: Action) -> tuple[Observation, float, bool, dict[str, Any]]:
        if self.faulted:
            raise DeviceCrashed(f"device {self.device_id} failed; reset it to restart")
        if self.done or self.task is None:
            raise RuntimeError("step() called on a finished episode; call reset(task) first")
        started = time.monotonic()
        try:
            event, refused = self._perform(action)
            self.steps += 1
            self.actions.append(action)
            if self.config.settle_seconds > 0 and not action.is_status:
                time.sleep(self.config.settle_seconds)
            observation = self.observe()
            success = self.is_success()
        except DeviceFault:
            self.faulted = True
            raise
        info = self._finish_step(
            action,
            event=event,
            success=success,
            device_seconds=time.monotonic() - started,
            invalid_reason=refused,
        )
        return observation, float(success), self.done, info

    def close(self) -> None:
        self.done = True
        self.task = None

    # -- observation and success ----------------------------------------------------------------
    def observe(self) -> Observation:
        """Screenshot, element list (from the UI dump), instruction and the actions so far."""
        screenshot = self.device.screenshot()
        self.height, self.width = screenshot.shape[:2]  # follows rotation, unlike `wm size`
        try:
            xml = self.device.ui_dump()
            elements = parse_ui_xml(xml, self.width, self.height)
            self.packages_seen |= dump_packages(xml)
        except (UIDumpError, AdbCommandFailed):
            elements = ()  # the screenshot still stands; uiautomator fails on some screens
        self.screenshots.append(screenshot)
        return Observation(
            screenshot=screenshot,
            instruction=self.task.instruction if self.task is not None else "",
            elements=elements,
            previous_actions=tuple(self.actions),
        )

    def is_success(self) -> bool:
        assert self.task is not None
        if self.judge is None:
            status = self._harness("status", "report task success")
            return status.text.strip() == "success"
        return bool(self.judge.judge(self.task, list(self.screenshots), list(self.actions)))

    def expert_action(self) -> Action:
        """The device's scripted expert's next action (fake-adb's PhoneSim phones have one);
        lets :class:`~distrl.agents.OracleAgent` play through adb."""
        return parse_action(self._harness("expert", "give expert actions").text.strip())

    # -- helpers --------------------------------------------------------------------------------
    def _reconnect(self) -> None:
        try:
            self.device.check_available()
        except DeviceUnavailable as error:
            raise DeviceCrashed(f"device {self.device_id} is still unavailable: {error}") from error
        self.faulted = False

    def _return_to_start(self) -> None:
        if self.config.reset == "snapshot":
            EmulatorConsole.for_serial(self.serial).load_snapshot(self.config.emulator.snapshot)
            self.device.shell("getprop sys.boot_completed")  # answers once adbd is back
            self.packages_seen.clear()  # the snapshot has none of them running
            return
        self.device.keyevent("KEYCODE_HOME")
        if self.packages_seen:
            home = dump_packages(self.device.ui_dump())
            for package in sorted(self.packages_seen - home - _SYSTEM_PACKAGES):
                self.device.force_stop(package)
        self.packages_seen.clear()

    def _set_up(self, task: Task) -> None:
        result = self._harness("setup " + quote(task.task_id), "set tasks up")
        if result.exit_code != 0:
            detail = (result.stderr or result.stdout).decode("utf-8", errors="replace").strip()
            raise TaskSetupError(
                f"device {self.device_id} cannot set up task {task.task_id}: {detail}"
            )

    def _harness(self, command: str, purpose: str) -> CommandResult:
        result = self.device.shell("distrl-task " + command)
        if result.exit_code == _NOT_FOUND_EXIT:
            raise TaskHarnessMissing(
                f"device {self.device_id} has no task harness (`distrl-task`) to {purpose}: "
                "judging success from device state, PhoneSim tasks and the oracle need a device "
                "that has it (fake-adb's PhoneSim phones); on real devices use judge.kind=vlm "
                "(a VLM judge) with instruction-only tasks (a task file with backend: android)"
            )
        if result.exit_code not in (0, None) and not command.startswith("setup"):
            detail = (result.stderr or result.stdout).decode("utf-8", errors="replace").strip()
            raise AdbCommandFailed(f"device {self.device_id}: distrl-task {command}: {detail}")
        return result

    def _perform(self, action: Action) -> tuple[str, str]:
        """Send ``action`` to the device; returns (event, why the device refused it or "")."""
        kind = action.action_type
        if kind is ActionType.INVALID:
            return f"INVALID: {action.invalid_reason}", ""
        if action.is_status:
            return kind.value, ""
        if kind in _KEYS:
            self.device.keyevent(_KEYS[kind])
            return f"keyevent {_KEYS[kind]}", ""
        if kind is ActionType.TYPE:
            try:
                self.device.type_text(action.text)
            except UntypeableText as error:
                return "text not typed", str(error)
            return f"typed {len(action.text)} characters", ""
        (y0, x0), (y1, x1) = action.touch_yx, action.lift_yx
        start = (_pixel(x0, self.width), _pixel(y0, self.height))
        if action.is_tap:
            self.device.tap(*start)
            return f"tap {start[0]} {start[1]}", ""
        end = (_pixel(x1, self.width), _pixel(y1, self.height))
        self.device.swipe(*start, *end, SWIPE_MILLISECONDS)
        return f"swipe {start[0]} {start[1]} {end[0]} {end[1]}", ""
