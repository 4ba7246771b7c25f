"""PhoneSim through gymnasium: registration, the env checker, determinism, text actions, the
element list in the observation, and vector envs (async, shared memory) with real instructions."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import check_env

import distrl  # noqa: F401  (registers distrl/PhoneSim-v0)
from distrl.core.action import Action, format_action
from distrl.core.observation import UIElement
from distrl.envs.gym_backend import elements_from_json
from distrl.envs.phonesim.gym_env import INSTRUCTION_CHARSET, elements_to_json
from distrl.envs.phonesim.tasks.registry import SUITE_HORIZONS
from distrl.envs.phonesim.tasks.suites import SPLITS, load_suite


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


def make_phonesim(**kwargs: object) -> gym.Env:
    return gym.make("distrl/PhoneSim-v0", **kwargs)


def test_async_vector_env_returns_the_real_instructions() -> None:
    """With its defaults (shared memory, copies), as after reset and after a step."""
    envs = gym.vector.AsyncVectorEnv([lambda: make_phonesim(elements=True) for _ in range(2)])
    try:
        observations, infos = envs.reset(seed=3)
        by_id = {t.task_id: t for s in ("train", "test") for t in load_suite("general", s)}
        expected = tuple(by_id[task_id].instruction for task_id in infos["task_id"])
        assert tuple(observations["instruction"]) == expected
        assert all(text and set(text) != {"0"} for text in observations["instruction"])
        action = envs.action_space.sample()
        observations, *_, infos = envs.step(action)
        assert all(text and set(text) != {"0"} for text in observations["instruction"])
        elements = [elements_from_json(text) for text in observations["elements"]]
        assert all(elements) and all(isinstance(e, UIElement) for e in elements[0])
    finally:
        envs.close()


def test_element_list_in_the_observation_matches_info() -> None:
    env = make_phonesim(elements=True)
    observation, info = env.reset(seed=1)
    assert elements_from_json(observation["elements"]) == tuple(info["elements"])
    assert env.observation_space.contains(observation)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)
    assert "elements" not in make_phonesim().observation_space.spaces  # an option, off by default


def test_an_element_list_too_long_for_the_space_is_cut_to_fit() -> None:
    env = make_phonesim(elements=True).unwrapped
    _, info = env.reset(seed=1)
    text = elements_to_json(info["elements"], limit=300)
    assert len(text) <= 300 and 0 < len(elements_from_json(text)) < len(info["elements"])


def test_suites_and_splits_are_registered_as_ids() -> None:
    for suite in SUITE_HORIZONS:
        for split in SPLITS:
            env = gym.make(f"distrl/PhoneSim-{suite}-{split}-v0").unwrapped
            assert {(t.suite, t.split) for t in env.tasks} == {(suite, split)}
            env.close()
