"""One real headless Chromium shared by the MiniWoB++ test modules (a browser start costs ~1 s
and ~350 MiB). Tests that need a fresh browser start their own and close it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from distrl.config.schema import MiniWoBConfig
from distrl.core.task import Task
from distrl.envs.miniwob import MiniWoBEnv, miniwob_tasks

TASKS = [
    "click-test",
    "click-button",
    "click-link",
    "focus-text",
    "enter-text",
    "click-checkboxes",
    "click-tab",
    "enter-password",
]
CONFIG = MiniWoBConfig(tasks=TASKS, horizon=10)


@pytest.fixture(scope="session")
def miniwob_config() -> MiniWoBConfig:
    return CONFIG


@pytest.fixture(scope="session")
def train_tasks() -> dict[str, Task]:
    return {task.spec["task"]: task for task in miniwob_tasks(CONFIG, "train")}


def _pinned(task: Task, seed: int, **changes: object) -> Task:
    data = task.to_dict()
    data["spec"] = {**data["spec"], "seed": seed}
    data.update(changes)
    return Task.from_dict(data)


@pytest.fixture(scope="session")
def pinned() -> Callable[..., Task]:
    """``pinned(task, seed, **changes)``: ``task`` with its episode seed pinned (and other
    fields changed), for reproducible episodes."""
    return _pinned


@pytest.fixture(scope="session")
def miniwob_env(chromium: None) -> Iterator[MiniWoBEnv]:
    env = MiniWoBEnv(CONFIG, seed=0, device_id="miniwob-test")
    try:
        yield env
    finally:
        env.close()


@pytest.fixture()
def fresh_env(chromium: None) -> Iterator[MiniWoBEnv]:
    """A second, private browser (for tests that break or reconfigure one)."""
    env = MiniWoBEnv(
        CONFIG.model_copy(update={"time_limit_seconds": 0.3}), seed=1, device_id="miniwob-spare"
    )
    try:
        yield env
    finally:
        env.close()
