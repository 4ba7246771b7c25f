"""Every task template is solved by the scripted expert, with all dynamics on, within the horizon,
and also after random actions have put the phone in an arbitrary reachable state."""

from __future__ import annotations

import numpy as np
import pytest

from distrl.config.schema import PhoneSimConfig
from distrl.core.action import Action
from distrl.core.task import Task
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.registry import SUITE_HORIZONS, TEMPLATES
from distrl.envs.phonesim.tasks.suites import load_suite

TASKS_PER_TEMPLATE = 12


def _tasks_of(template_name: str) -> list[Task]:
    suite = TEMPLATES[template_name].suite
    tasks = [
        t
        for split in ("train", "test")
        for t in load_suite(suite, split)
        if t.spec["template"] == template_name
    ]
    return tasks[:: max(1, len(tasks) // TASKS_PER_TEMPLATE)][:TASKS_PER_TEMPLATE]


def _random_non_status_action(rng: np.random.Generator, env: PhoneSimEnv) -> Action:
    """A random action that does not end the episode (so the expert must take over)."""
    roll = rng.random()
    if roll < 0.55:
        elements = [e for e in env.phone.elements() if e.clickable] if env.phone else []
        if elements and rng.random() < 0.8:
            return Action.tap(*elements[int(rng.integers(len(elements)))].center_yx)
        return Action.tap(float(rng.random()), float(rng.random()))
    if roll < 0.7:
        return Action.swipe(
            (float(rng.uniform(0.3, 0.8)), 0.5), (float(rng.uniform(0.2, 0.8)), 0.5)
        )
    if roll < 0.8:
        return Action.type_text(str(rng.choice(["hello", "abc 12", "ebay.com", "7:30"])))
    return [Action.press_back(), Action.press_home(), Action.press_enter()][int(rng.integers(3))]


def test_there_are_at_least_twenty_templates() -> None:
    assert len(TEMPLATES) >= 20
    for suite in SUITE_HORIZONS:
        assert any(t.suite == suite for t in TEMPLATES.values())


@pytest.mark.parametrize("template_name", sorted(TEMPLATES))
def test_oracle_solves_template_from_the_start(template_name: str) -> None:
    tasks = _tasks_of(template_name)
    assert tasks, f"no tasks generated for template {template_name}"
    env = PhoneSimEnv(PhoneSimConfig(), seed=7)
    for task in tasks:
        env.reset(task)
        assert not env.is_success(), f"{task.instruction!r} is solved before any action"
        done, info = False, {}
        while not done:
            _, _, done, info = env.step(env.expert_action())
        assert info["success"], f"oracle failed {task.instruction!r} ({task.spec})"


@pytest.mark.parametrize("template_name", sorted(TEMPLATES))
def test_oracle_solves_template_from_a_random_state(template_name: str) -> None:
    rng = np.random.default_rng(11)
    env = PhoneSimEnv(PhoneSimConfig(), seed=3)
    for task in _tasks_of(template_name)[:6]:
        long_task = Task(
            task.task_id,
            task.instruction,
            task.suite,
            task.split,
            task.backend,
            task.spec,
            horizon=task.horizon + 40,
        )
        env.reset(long_task)
        for _ in range(int(rng.integers(3, 9))):
            _, _, done, _ = env.step(_random_non_status_action(rng, env))
            if done:
                break
        steps = 0
        while not env.done:
            _, _, _, info = env.step(env.expert_action())
            steps += 1
        assert env.is_success(), f"oracle failed {task.instruction!r} from a random state"
        assert steps <= task.horizon + 30
