"""The Android backend, unchanged, driving fake-adb's PhoneSim phones over the adb protocol."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from distrl.agents import OracleAgent
from distrl.config.schema import AndroidConfig, LatencyConfig, PhoneSimConfig
from distrl.core.action import Action
from distrl.core.faults import DeviceCrashed, DeviceHung
from distrl.core.task import Task
from distrl.envs.android.adb_device import (
    AdbServerUnavailable,
    DeviceUnavailable,
    list_devices,
    online_serials,
)
from distrl.envs.android.env import AndroidEnv, TaskHarnessMissing, TaskSetupError
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.envs.protocol import DeviceEnv
from distrl.errors import InputError
from distrl.fakeadb import FakeAdbServer
from distrl.fakeadb.server import FAULT_RECOVERY_SECONDS
from distrl.runtime.rollout import run_episode

SEED = 11
#: End to end through adb; test_android_escape.py checks a longer list without a server.
INJECTIONS = [
    "hello world",
    'it\'s "quoted"',
    "a; reboot",
    "a && b || c & d",
    "x | cat > /sdcard/out < /etc/passwd",
    "(sub) {a,b} * ~ ! #",
    "$HOME ${IFS} back\\slash\\",
    "100%sure 50% off %%s",
]


@pytest.fixture()
def server() -> Iterator[FakeAdbServer]:
    with FakeAdbServer(devices=2, seed=SEED) as fake:
        yield fake


def config(server: FakeAdbServer, **changes: object) -> AndroidConfig:
    return AndroidConfig(adb_port=server.port, **changes)


def free_port() -> int:
    with FakeAdbServer(devices=0) as probe:
        return probe.port  # bound then released: nothing listens there afterwards


def test_oracle_through_adb_matches_phonesim_per_task(server: FakeAdbServer) -> None:
    tasks = load_suite("general", "test")[:10] + load_suite("webshop", "test")[:4]
    android = AndroidEnv(config(server), "phonesim-0")
    assert isinstance(android, DeviceEnv)
    phonesim = PhoneSimEnv(seed=SEED)  # the same seed as fake-adb's phonesim-0
    first = True
    through_adb, direct = [], []
    for task in tasks:
        a = run_episode(android, OracleAgent(android), task)
        b = run_episode(phonesim, OracleAgent(phonesim), task)
        through_adb.append(a.success)
        direct.append(b.success)
        if first:  # the very same phone: the PNG over adb is PhoneSim's render, pixel for pixel
            assert np.array_equal(
                a.steps[0].observation.screenshot, b.steps[0].observation.screenshot
            )
            assert [e.text for e in a.steps[0].observation.elements] == [
                e.text for e in b.steps[0].observation.elements
            ]
            first = False
    assert through_adb == direct
    assert sum(through_adb) / len(tasks) >= 0.9


def test_step_info_matches_phonesim_keys(server: FakeAdbServer) -> None:
    task = load_suite("general", "train")[0]
    android = AndroidEnv(config(server), "phonesim-0")
    phonesim = PhoneSimEnv(seed=SEED)
    obs = android.reset(task)
    phonesim.reset(task)
    assert obs.instruction == task.instruction and obs.previous_actions == ()
    action = android.expert_action()
    _, reward, _, info = android.step(action)
    _, _, _, reference = phonesim.step(action)
    assert set(info) == set(reference)
    assert info["steps"] == 1 and info["invalid"] is False and info["device_seconds"] > 0
    assert reward == float(info["success"])


def test_typed_text_reaches_the_device_literally(server: FakeAdbServer, tmp_path) -> None:
    marker = tmp_path / "pwned"
    payloads = [*INJECTIONS, f"$(touch {marker})", f"`touch {marker}`", f"x;touch {marker}"]
    payloads += ["two\nlines"]
    # A VLM-judged episode: any task, no device harness involved, so only typing is exercised.
    android = AndroidEnv(config(server), "phonesim-1", judge=NeverDone())
    device = server.device("phonesim-1")
    android.reset(Task("probe", "type things", "general", "train", backend="android", horizon=100))
    for text in payloads:
        before = len(device.typed)
        commands_before = len(device.commands)
        _, _, _, info = android.step(Action.type_text(text))
        assert not info["invalid"], info
        assert "".join(device.typed[before:]) == text.replace("\n", "")
        ran = device.commands[commands_before:]
        assert {argv[0] for argv in ran} <= {"input", "screencap", "uiautomator", "cat"}
        assert all(argv[1] in ("text", "keyevent") for argv in ran if argv[0] == "input")
    assert ["input", "keyevent", "KEYCODE_ENTER"] in device.commands
    assert device.refused == []
    assert not marker.exists()


class NeverDone:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    def judge(self, task: Task, screenshots: Sequence[np.ndarray], actions: Sequence[Action]):
        self.calls.append((task.task_id, len(screenshots), len(actions)))
        return False


def test_untypeable_text_is_an_invalid_step_not_a_crash(server: FakeAdbServer) -> None:
    android = AndroidEnv(config(server), "phonesim-0")
    android.reset(load_suite("general", "train")[0])
    typed_before = list(server.device("phonesim-0").typed)
    _, reward, _, info = android.step(Action.type_text("naïve"))
    assert info["invalid"] and "U+00EF" in info["invalid_reason"]
    assert server.device("phonesim-0").typed == typed_before
    assert reward == 0.0


def test_vlm_judge_sees_screenshots_and_actions(server: FakeAdbServer) -> None:
    judge = NeverDone()
    android = AndroidEnv(config(server), "phonesim-0", judge=judge)
    # An instruction-only task: nothing to set up on the device, the judge alone decides.
    task = Task("t", "open settings", "general", "train", backend="android", horizon=2)
    android.reset(task)
    android.step(Action.press_home())
    _, _, done, info = android.step(Action.press_back())
    assert judge.calls == [("t", 2, 1), ("t", 3, 2)]
    assert done and info["truncated"]
    assert not any(c[:1] == ["distrl-task"] for c in server.device("phonesim-0").commands)


def test_device_vanishing_mid_episode_is_a_crash(server: FakeAdbServer) -> None:
    android = AndroidEnv(config(server), "phonesim-0")
    android.reset(load_suite("general", "train")[1])
    server.remove_device("phonesim-0")
    with pytest.raises(DeviceCrashed, match="phonesim-0"):
        android.step(Action.press_back())
    with pytest.raises(DeviceCrashed):
        android.step(Action.press_back())
    with pytest.raises(DeviceCrashed, match="still unavailable"):
        android.reset(load_suite("general", "train")[1])


def test_wedged_device_is_hung_then_recovers_on_reset(server: FakeAdbServer) -> None:
    android = AndroidEnv(config(server, command_timeout_seconds=0.5), "phonesim-0")
    task = load_suite("general", "train")[2]
    android.reset(task)
    server.hang("phonesim-0")
    started = time.monotonic()
    with pytest.raises(DeviceHung, match="no answer within 0.5 s"):
        android.step(Action.press_back())
    assert time.monotonic() - started < 3
    server.hang("phonesim-0", hung=False)
    android.reset(task)  # the reset is the restart
    android.step(Action.press_back())


def test_home_reset_force_stops_the_apps_of_the_last_episode(server: FakeAdbServer) -> None:
    android = AndroidEnv(config(server), "phonesim-0")
    task = load_suite("general", "train")[0]
    run_episode(android, OracleAgent(android), task)
    seen = set(android.packages_seen)
    android.reset(task)
    stopped = set(server.device("phonesim-0").force_stopped)
    assert stopped and stopped <= seen
    assert "com.android.systemui" not in stopped
    assert all("launcher" not in package for package in stopped)


def test_setup_errors_are_clear(server: FakeAdbServer) -> None:
    android = AndroidEnv(config(server), "phonesim-0")
    with pytest.raises(TaskSetupError, match="unknown task 'nope-0001'"):
        android.reset(Task("nope-0001", "x", "general", "train"))
    snapshot = AndroidEnv(config(server, reset="snapshot"), "phonesim-0")
    with pytest.raises(InputError, match="reset=home"):
        snapshot.reset(load_suite("general", "train")[0])


def test_real_device_without_harness_needs_vlm(server: FakeAdbServer) -> None:
    server.add_device("real-phone", harness=False)
    android = AndroidEnv(config(server), "real-phone")
    with pytest.raises(TaskHarnessMissing, match="judge.kind=vlm"):
        android.reset(load_suite("general", "train")[0])
    vlm = AndroidEnv(config(server), "real-phone", judge=NeverDone())
    with pytest.raises(TaskHarnessMissing, match="judge.kind=vlm"):
        vlm.reset(load_suite("general", "train")[0])  # a PhoneSim task needs its world set up
    vlm.reset(Task("real-1", "open settings", "general", "train", backend="android"))
    with pytest.raises(TaskHarnessMissing, match="expert"):
        vlm.expert_action()


def test_connection_errors_name_the_fix(server: FakeAdbServer) -> None:
    port = free_port()
    with pytest.raises(AdbServerUnavailable, match=f"127.0.0.1:{port}.*distrl fake-adb"):
        AndroidEnv(AndroidConfig(adb_port=port), "phonesim-0")
    with pytest.raises(
        DeviceUnavailable, match="no device 'emulator-5554'.*phonesim-0 \\(device\\)"
    ):
        AndroidEnv(config(server), "emulator-5554")
    server.set_state("phonesim-1", "offline")
    with pytest.raises(DeviceUnavailable, match="offline"):
        AndroidEnv(config(server), "phonesim-1")
    server.set_state("phonesim-1", "unauthorized")
    with pytest.raises(DeviceUnavailable, match="Allow USB debugging"):
        AndroidEnv(config(server), "phonesim-1")
    assert list_devices("127.0.0.1", server.port) == [
        ("phonesim-0", "device"),
        ("phonesim-1", "unauthorized"),
    ]
    assert online_serials(config(server)) == ["phonesim-0"]


def test_latency_model_faults_look_like_real_device_faults() -> None:
    latency = LatencyConfig(enabled=True, time_scale=0.0, crash_prob=1.0)
    with FakeAdbServer(devices=1, phonesim_config=PhoneSimConfig(latency=latency)) as fake:
        android = AndroidEnv(config(fake), "phonesim-0")
        task = load_suite("general", "train")[0]
        android.reset(task)
        with pytest.raises(DeviceCrashed):
            android.step(android.expert_action())
        assert fake.serials == []  # gone, like a crashed emulator ...
        deadline = time.monotonic() + FAULT_RECOVERY_SECONDS + 5
        while fake.serials != ["phonesim-0"]:  # ... and back, restarted
            assert time.monotonic() < deadline, "the crashed device never came back"
            time.sleep(0.05)
        android.reset(task)
