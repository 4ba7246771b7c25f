"""Shared PhoneSim episodes for the policy tests (both suites, all dynamics on)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch

from distrl.core.action import Action
from distrl.core.observation import Observation
from distrl.core.task import Task
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.policies.small import SmallPolicy, SmallPolicyConfig


@dataclass
class Demo:
    """One oracle episode: the task, the env seed that reproduces it, and its steps."""

    task: Task
    env_seed: int
    observations: list[Observation]
    actions: list[Action]
    success: bool


def oracle_episode(task: Task, env_seed: int) -> Demo:
    """Run the scripted expert on a fresh env (so ``env_seed`` replays the same phone)."""
    env = PhoneSimEnv(seed=env_seed)
    obs = env.reset(task)
    observations, actions = [], []
    done, reward = False, 0.0
    while not done:
        action = env.expert_action()
        observations.append(obs)
        actions.append(action)
        obs, reward, done, _ = env.step(action)
    return Demo(task, env_seed, observations, actions, reward > 0)


@pytest.fixture(scope="session")
def run_oracle() -> Callable[[Task, int], Demo]:
    """:func:`oracle_episode`, for tests that pick their own tasks."""
    return oracle_episode


@dataclass
class Rollout:
    """One episode acted by the policy, with the behaviour log-probs ``act`` reported."""

    observations: list[Observation]
    actions: list[Action]
    logprobs: torch.Tensor


@pytest.fixture(scope="session")
def oracle_demos() -> list[Demo]:
    """A few oracle episodes per suite and split (tasks spread over the templates)."""
    demos = []
    for suite in ("general", "webshop"):
        for split in ("train", "test"):
            tasks = load_suite(suite, split)
            for i, task in enumerate(tasks[:: len(tasks) // 8][:8]):
                demos.append(oracle_episode(task, env_seed=100 + i))
    return demos


@pytest.fixture(scope="session")
def policy_rollouts() -> tuple[SmallPolicy, list[Rollout]]:
    """Episodes acted by a freshly initialised policy (sampling), with its act() log-probs:
    the states an untrained learner really visits, popups and loading screens included."""
    policy = SmallPolicy(SmallPolicyConfig())
    generator = torch.Generator().manual_seed(1)
    rollouts = []
    for suite in ("general", "webshop"):
        env = PhoneSimEnv(seed=5)
        for task in load_suite(suite, "train")[:16]:
            obs = env.reset(task)
            observations, actions, logprobs = [], [], []
            done = False
            while not done:
                out = policy.act([obs], generator=generator)
                observations.append(obs)
                actions.append(out.actions[0])
                logprobs.append(out.logprobs[0])
                obs, _, done, _ = env.step(out.actions[0])
            rollouts.append(Rollout(observations, actions, torch.stack(logprobs)))
    return policy, rollouts


@pytest.fixture(scope="module")
def one_torch_thread():
    """The tiny VLM's ops are microseconds: torch's thread pool only adds contention (a module
    uses it with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def observations() -> list[Observation]:
    """The first screens of three general tasks, each followed by the screen after PRESS_HOME
    (one with previous actions in its prompt)."""
    env = PhoneSimEnv(seed=3)
    out = []
    for task in load_suite("general", "train")[:3]:
        out.append(env.reset(task))
        out.append(env.step(Action.press_home())[0])
    return out
