"""MiniWoB++ tasks as distrl :class:`~distrl.core.task.Task` objects, with train/test splits.

A MiniWoB++ task is a generator: every episode draws a new problem (which button, which text)
from the page's seeded random generator, and the instruction is that episode's utterance, which
the env puts in each observation. So a :class:`Task` names the generator, and a split is a range
of episode seeds:

* ``train`` episodes use seeds in ``[0, 1_000_000)``, ``test`` episodes seeds in
  ``[1_000_000, 2_000_000)``; the env draws each episode's seed uniformly from the task's
  ``spec["seeds"]`` range, so no test problem instance is ever trained on (up to problems that
  two seeds happen to generate alike; small tasks such as click-test have few distinct ones);
* ``spec["data_mode"]`` is the split too: the few ``*-transfer`` tasks draw their test problems
  from a different distribution in the package's ``test`` data mode;
* ``spec["seed"]`` (optional, not set here) pins one episode, for replays and tests.

>>> from distrl.config.schema import MiniWoBConfig
>>> task = miniwob_tasks(MiniWoBConfig(tasks=["click-button"]), "test")[0]
>>> task.task_id, task.spec["seeds"]
('miniwob-click-button-test', [1000000, 2000000])
"""

from __future__ import annotations

import difflib
from functools import lru_cache

import gymnasium

from distrl.config.schema import MiniWoBConfig
from distrl.core.task import Task
from distrl.envs.miniwob.browser import task_page
from distrl.errors import InputError

__all__ = ["SEED_RANGES", "SPLITS", "UnknownMiniWoBTask", "check_task_name", "miniwob_tasks"]

SPLITS = ("train", "test")
#: Episode seed ranges ``[start, stop)`` per split; disjoint, so test problems are unseen.
SEED_RANGES: dict[str, tuple[int, int]] = {"train": (0, 1_000_000), "test": (1_000_000, 2_000_000)}


class UnknownMiniWoBTask(InputError):
    """A task name the ``miniwob`` package does not have (or one this backend cannot run)."""


@lru_cache(maxsize=1)
def available_tasks() -> tuple[str, ...]:
    """MiniWoB++ task names registered by the ``miniwob`` package (``miniwob/<name>-v1``).

    The FlightWoB tasks (``flight.*``) are left out: they need the package's HTTP server and a
    375x667 task area, which this backend does not set up.
    """
    import miniwob  # noqa: F401  (registers the environments)

    names = []
    for env_id in gymnasium.envs.registry:
        if env_id.startswith("miniwob/") and env_id.endswith("-v1"):
            name = env_id[len("miniwob/") : -len("-v1")]
            if not name.startswith("flight.") and task_page(name).is_file():
                names.append(name)
    return tuple(sorted(names))


def check_task_name(name: str) -> str:
    """``name`` if it is a runnable MiniWoB++ task, else :class:`UnknownMiniWoBTask`."""
    known = available_tasks()
    if name in known:
        return name
    close = difflib.get_close_matches(name, known, n=3)
    hint = f"did you mean {', '.join(close)}?" if close else f"known tasks: {', '.join(known)}"
    raise UnknownMiniWoBTask(f"unknown MiniWoB++ task {name!r} in env.miniwob.tasks; {hint}")


def miniwob_tasks(config: MiniWoBConfig, split: str) -> list[Task]:
    """One :class:`Task` per configured task name, for ``split`` ("train" or "test")."""
    if split not in SEED_RANGES:
        raise InputError(f"unknown split {split!r} for MiniWoB++ tasks; use one of {SPLITS}")
    start, stop = SEED_RANGES[split]
    return [
        Task(
            task_id=f"miniwob-{check_task_name(name)}-{split}",
            instruction=name,
            suite="miniwob",
            split=split,
            backend="miniwob",
            spec={"task": name, "seeds": [start, stop], "data_mode": split},
            horizon=config.horizon,
        )
        for name in config.tasks
    ]
