"""Cutting finished trajectories into replay windows with shaped rewards."""

from __future__ import annotations

import numpy as np
import pytest

from distrl.agents import OracleAgent
from distrl.algos.rewards import RewardShaping, shaped_rewards
from distrl.algos.step_window import cut_windows
from distrl.core import Action, Observation, Step, Task, Trajectory
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.runtime.rollout import run_episode

SHAPING = RewardShaping(step_cost=0.01, invalid_penalty=0.1, repeat_penalty=0.05)


def _obs(tag: int) -> Observation:
    return Observation(np.full((2, 2, 3), tag, np.uint8), "task")


def _trajectory(actions: list[Action], rewards: list[float], final: bool = True) -> Trajectory:
    steps = [
        Step(_obs(i), action, reward, done=(final and i == len(actions) - 1))
        for i, (action, reward) in enumerate(zip(actions, rewards, strict=True))
    ]
    return Trajectory(
        Task("t", "task", "general", "train"),
        steps,
        success=rewards[-1] > 0,
        trajectory_id="traj",
        final_observation=_obs(99),
    )


def test_shaping_charges_steps_invalid_and_repeated_actions() -> None:
    back = Action.press_back()
    trajectory = _trajectory(
        [back, back, Action.invalid("junk"), Action.complete()], [0.0, 0.0, 0.0, 1.0]
    )
    assert shaped_rewards(trajectory, SHAPING) == pytest.approx([-0.01, -0.06, -0.11, 0.99])


def test_windows_cover_the_episode_and_bootstrap_only_where_it_goes_on() -> None:
    actions = [Action.tap(0.1 * i, 0.5) for i in range(7)]
    trajectory = _trajectory(actions, [0.0] * 6 + [1.0])
    windows = cut_windows(trajectory, 3, SHAPING)
    assert [(w.start, len(w)) for w in windows] == [(0, 3), (3, 3), (6, 1)]
    # Mid-episode windows bootstrap from the next step's observation; the last one ends it.
    assert windows[0].bootstrap_observation is trajectory.steps[3].observation
    assert windows[1].bootstrap_observation is trajectory.steps[6].observation
    assert windows[2].bootstrap_observation is None and windows[2].dones == (True,)
    assert sum(len(w) for w in windows) == 7
    flat = [r for w in windows for r in w.rewards]
    assert flat == shaped_rewards(trajectory, SHAPING)


def test_partial_episodes_are_refused() -> None:
    trajectory = _trajectory([Action.press_back()] * 2, [0.0, 0.0], final=False)
    with pytest.raises(ValueError, match="not a finished episode"):
        cut_windows(trajectory, 4, SHAPING)


def test_windows_of_real_oracle_episodes() -> None:
    env = PhoneSimEnv(seed=0)
    for task in load_suite("webshop", "train")[:5]:
        trajectory = run_episode(env, OracleAgent(env), task)
        windows = cut_windows(trajectory, 4, SHAPING)
        assert [a for w in windows for a in w.actions] == [s.action for s in trajectory.steps]
        assert windows[-1].dones[-1] and windows[-1].bootstrap_observation is None
        assert all(np.isnan(lp) for w in windows for lp in w.behaviour_logprobs)
