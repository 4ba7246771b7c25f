"""PhoneSim through gymnasium: registration, the env checker, determinism, text actions."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import check_env

import distrl  # noqa: F401  (registers distrl/PhoneSim-v0)
from distrl.core.action import Action, format_action
from distrl.envs.phonesim.gym_env import INSTRUCTION_CHARSET
from distrl.envs.phonesim.tasks.suites import load_suite


def test_env_checker_passes_for_both_suites() -> None:
    for suite in ("general", "webshop"):
        env = gym.make("distrl/PhoneSim-v0", suite=suite)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a checker warning is a failure here
            check_env(env.unwrapped, skip_render_check=True)
        env.close()


def test_same_seed_same_episode() -> None:
    env = gym.make("distrl/PhoneSim-v0", suite="webshop", render_mode="rgb_array")
    first, info_a = env.reset(seed=5)
    second, info_b = env.reset(seed=5)
    assert info_a["task_id"] == info_b["task_id"]
    assert np.array_equal(first["screenshot"], second["screenshot"])
    assert env.render() is not None


def test_text_actions_and_dict_actions_are_accepted() -> None:
    env = gym.make("distrl/PhoneSim-v0", suite="general").unwrapped
    task = load_suite("general", "train")[0]
    env.reset(seed=0, options={"task": task.task_id})
    _, reward, terminated, truncated, info = env.step(format_action(Action.press_home()))
    assert info["event"] == "home" and reward == 0.0 and not terminated and not truncated
    _, _, _, _, info = env.step("not an action at all")
    assert info["invalid"] and "Action Decision" in info["invalid_reason"]
    _, _, _, _, info = env.step(
        {"action_type": 3, "touch_yx": np.zeros(2), "lift_yx": np.zeros(2), "text": "x"}
    )
    assert info["event"] == "home"


def test_every_instruction_fits_the_observation_space() -> None:
    for suite in ("general", "webshop"):
        for split in ("train", "test"):
            for task in load_suite(suite, split):
                assert set(task.instruction) <= set(INSTRUCTION_CHARSET), task.instruction
