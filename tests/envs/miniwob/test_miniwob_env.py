"""MiniWoBEnv against real headless Chromium: episodes, rewards, ending, splits, faults."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

from distrl.config.schema import MiniWoBConfig
from distrl.core.action import Action
from distrl.core.faults import DeviceCrashed
from distrl.core.task import Task
from distrl.envs.miniwob import (
    MiniWoBEnv,
    MiniWoBSetupError,
    MiniWoBTaskError,
    UnknownMiniWoBTask,
    miniwob_tasks,
)
from distrl.envs.miniwob.tasks import SEED_RANGES
from distrl.envs.protocol import DeviceEnv

PHONESIM_INFO_KEYS = {
    "event",
    "success",
    "truncated",
    "steps",
    "invalid",
    "invalid_reason",
    "device_seconds",
}


# -- tasks and splits (no browser) -----------------------------------------------------------------
def test_tasks_follow_the_config_and_splits_use_disjoint_seed_ranges():
    config = MiniWoBConfig(tasks=["click-test", "enter-text"], horizon=7)
    train, test = miniwob_tasks(config, "train"), miniwob_tasks(config, "test")
    assert [t.spec["task"] for t in train] == ["click-test", "enter-text"]
    for task in train + test:
        assert (task.backend, task.suite, task.horizon) == ("miniwob", "miniwob", 7)
        assert task.instruction == task.spec["task"]
    (a0, a1), (b0, b1) = train[0].spec["seeds"], test[0].spec["seeds"]
    assert a1 <= b0 or b1 <= a0
    assert [train[0].spec["data_mode"], test[0].spec["data_mode"]] == ["train", "test"]
    assert Task.from_dict(test[1].to_dict()) == test[1]


def test_unknown_task_names_are_one_line_errors_with_a_hint():
    with pytest.raises(UnknownMiniWoBTask, match="did you mean click-button") as error:
        miniwob_tasks(MiniWoBConfig(tasks=["click-buton"]), "train")
    assert "\n" not in str(error.value)
    with pytest.raises(UnknownMiniWoBTask, match="flight"):
        miniwob_tasks(MiniWoBConfig(tasks=["flight.AA"]), "train")
    with pytest.raises(ValueError, match="split"):
        miniwob_tasks(MiniWoBConfig(), "validation")


def test_episode_seeds_are_reproducible_and_stay_in_the_split():
    test_task = miniwob_tasks(MiniWoBConfig(tasks=["click-test"]), "test")[0]

    def seeds(device_seed: int) -> list[int]:
        env = MiniWoBEnv(MiniWoBConfig(), seed=device_seed)  # no browser starts here
        out = []
        for episode in range(5):
            env.episodes = episode
            out.append(env._episode_seed(test_task))
        return out

    low, high = SEED_RANGES["test"]
    assert seeds(5) == seeds(5) != seeds(6)
    assert len(set(seeds(5))) == 5 and all(low <= seed < high for seed in seeds(5))


def test_bad_task_or_missing_binaries_fail_before_any_browser_starts(train_tasks, pinned):
    env = MiniWoBEnv(MiniWoBConfig(chrome_binary="/nonexistent/chromium"))
    with pytest.raises(MiniWoBSetupError, match="/nonexistent/chromium"):
        env.reset(train_tasks["click-test"])
    bad = pinned(train_tasks["click-test"], 1, spec={"task": "no-such-task"})
    with pytest.raises(MiniWoBTaskError, match="no-such-task"):
        env.reset(bad)
    with pytest.raises(MiniWoBTaskError, match="not miniwob"):
        env.reset(Task("t", "Open Clock", "general", "train"))
    assert env.browser is None


# -- episodes in Chromium -------------------------------------------------------------------------
def test_reset_gives_the_utterance_elements_and_a_screenshot(miniwob_env, train_tasks):
    assert isinstance(miniwob_env, DeviceEnv)
    for name in ("click-test", "click-button", "enter-text"):
        obs = miniwob_env.reset(train_tasks[name])
        assert obs.instruction == miniwob_env.state.utterance and obs.instruction
        assert obs.screenshot.shape == (210, 160, 3) and obs.screenshot.dtype == np.uint8
        assert obs.screenshot.std() > 0  # a rendered page, not a blank image
        assert obs.elements and obs.previous_actions == ()
        assert miniwob_env.browser_starts == 1  # one browser serves every task


def test_pinned_seed_reproduces_the_problem(miniwob_env, train_tasks, pinned):
    task = pinned(train_tasks["click-button"], 1234)
    first = miniwob_env.reset(task)
    again = miniwob_env.reset(task)
    assert first.instruction == again.instruction
    assert [e.text for e in first.elements] == [e.text for e in again.elements]


def test_success_is_binary_and_info_mirrors_phonesim(miniwob_env, train_tasks):
    miniwob_env.reset(train_tasks["click-test"])
    _, reward, done, info = miniwob_env.step(miniwob_env.expert_action())
    assert (reward, done, info["success"], info["raw_reward"]) == (1.0, True, True, 1.0)
    assert set(info) >= PHONESIM_INFO_KEYS and info["event"] == "CLICK_COORDS"
    with pytest.raises(RuntimeError, match="reset"):
        miniwob_env.step(Action.tap(0.5, 0.5))


def test_a_wrong_click_ends_the_episode_as_a_failure(miniwob_env, train_tasks, pinned):
    for seed in range(20):  # find a problem with a wrong button to press
        obs = miniwob_env.reset(pinned(train_tasks["click-button"], seed))
        wanted = obs.instruction.split('"')[1]
        wrong = [e for e in obs.elements if e.kind == "button" and e.text != wanted]
        if wrong:
            break
    _, reward, done, info = miniwob_env.step(Action.tap(*wrong[0].center_yx))
    assert (reward, done, info["success"], info["raw_reward"]) == (0.0, True, False, -1.0)


def test_noop_invalid_status_and_horizon(miniwob_env, train_tasks, pinned):
    miniwob_env.reset(pinned(train_tasks["click-test"], 3, horizon=3))
    _, reward, done, info = miniwob_env.step(Action.press_back())
    assert (reward, done, info["event"], info["invalid"]) == (0.0, False, "NONE", False)
    _, _, done, info = miniwob_env.step(Action.invalid("no Action Decision"))
    assert not done and info["invalid"] and info["invalid_reason"] == "no Action Decision"
    obs, _, done, info = miniwob_env.step(Action.press_home())
    assert done and info["truncated"] and not info["success"] and len(obs.previous_actions) == 3

    miniwob_env.reset(train_tasks["click-test"])
    _, reward, done, info = miniwob_env.step(Action.complete())
    assert (reward, done, info["truncated"], info["page_done"]) == (0.0, True, False, False)


def test_typing_enter_and_swipes_reach_the_page(miniwob_env, train_tasks):
    obs = miniwob_env.reset(train_tasks["enter-text"])
    field = next(e for e in obs.elements if e.kind == "field")
    obs, *_ = miniwob_env.step(Action.tap(*field.center_yx))
    obs, _, done, info = miniwob_env.step(Action.type_text("hello"))
    assert not done and info["event"] == "TYPE_TEXT"
    assert next(e for e in obs.elements if e.kind == "field").text == "hello"
    obs, _, done, info = miniwob_env.step(Action.press_enter())
    assert info["event"] == "PRESS_KEY"
    _, _, _, info = miniwob_env.step(Action.swipe((0.8, 0.5), (0.3, 0.5)))
    assert info["event"].startswith("MOUSEDOWN_COORDS+MOUSEUP_COORDS+SCROLL_DOWN_COORDS")


def test_the_in_page_time_limit_counts_as_a_failure(fresh_env, train_tasks):
    fresh_env.reset(train_tasks["click-test"])  # this env's pages time out after 0.3 s
    time.sleep(0.5)
    _, reward, done, info = fresh_env.step(Action.press_back())
    assert (reward, done, info["timed_out"], info["raw_reward"]) == (0.0, True, True, -1.0)


def test_a_killed_browser_raises_device_crashed_and_the_next_reset_restarts_it(
    miniwob_env, train_tasks
):
    miniwob_env.reset(train_tasks["click-test"])
    old_pids = miniwob_env.browser.process_ids()
    starts = miniwob_env.browser_starts
    chromium = [pid for pid in old_pids[1:] if b"--type=" not in _cmdline(pid)]
    assert len(chromium) == 1  # the browser process itself, not its renderers
    os.kill(chromium[0], signal.SIGKILL)
    with pytest.raises(DeviceCrashed, match="miniwob-test"):
        miniwob_env.step(Action.tap(0.5, 0.5))
    with pytest.raises(DeviceCrashed):
        miniwob_env.step(Action.tap(0.5, 0.5))  # still down until reset

    obs = miniwob_env.reset(train_tasks["click-test"])
    assert miniwob_env.browser_starts == starts + 1 and obs.instruction == "Click the button."
    assert miniwob_env.step(miniwob_env.expert_action())[1] == 1.0
    deadline = time.monotonic() + 5  # killed processes linger until init reaps them
    while [pid for pid in old_pids if b"chrom" in _cmdline(pid)]:
        assert time.monotonic() < deadline, "the old browser's processes were left behind"
        time.sleep(0.05)


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read()
    except OSError:
        return b""
