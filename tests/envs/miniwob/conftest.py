"""One real headless Chromium shared by the MiniWoB++ test modules (a browser start costs ~1 s
and ~350 MiB). Tests that need a fresh browser start their own and close it."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

from distrl.config.schema import MiniWoBConfig
from distrl.core.task import Task
from distrl.envs.miniwob import MiniWoBEnv, miniwob_tasks
from distrl.envs.miniwob.browser import resolve_binaries

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


def _chromium_missing() -> str | None:
    for path in resolve_binaries(CONFIG):
        if not os.access(path, os.X_OK):
            return f"{path} is not installed (apt-get install chromium chromium-driver)"
    return None


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
def miniwob_env() -> Iterator[MiniWoBEnv]:
    missing = _chromium_missing()
    if missing:
        pytest.skip(missing)
    env = MiniWoBEnv(CONFIG, seed=0, device_id="miniwob-test")
    try:
        yield env
    finally:
        env.close()


@pytest.fixture()
def fresh_env() -> Iterator[MiniWoBEnv]:
    """A second, private browser (for tests that break or reconfigure one)."""
    missing = _chromium_missing()
    if missing:
        pytest.skip(missing)
    env = MiniWoBEnv(
        CONFIG.model_copy(update={"time_limit_seconds": 0.3}), seed=1, device_id="miniwob-spare"
    )
    try:
        yield env
    finally:
        env.close()
