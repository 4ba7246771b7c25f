"""The ``general`` and ``webshop`` suites: fixed, seeded train/test task lists.

Suites are generated, not shipped: the same code and seed give the same tasks on every machine.
Templates are drawn round-robin so every template is represented; duplicates are dropped, and any
test instruction that also occurs in train is dropped from test, so the splits never overlap.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from distrl.core.task import Task
from distrl.envs.phonesim.tasks.registry import SUITE_HORIZONS, suite_templates
from distrl.errors import InputError

SUITES = tuple(SUITE_HORIZONS)
SPLITS = ("train", "test")
SPLIT_SIZES = {"train": 600, "test": 250}
_SUITE_SEED = 20241021
_MAX_TRIES_PER_TASK = 40


def _draw(suite: str, split: str, count: int, exclude: frozenset[str]) -> list[Task]:
    templates = suite_templates(suite)
    if not templates:
        return []
    salt = sum(map(ord, suite + split))
    rng = np.random.default_rng([_SUITE_SEED, salt])
    seen: set[str] = set(exclude)
    tasks: list[Task] = []
    tries = 0
    while len(tasks) < count and tries < count * _MAX_TRIES_PER_TASK:
        template = templates[tries % len(templates)]
        tries += 1
        params = template.sample_params(rng, split)
        instruction = template.instruction(params, rng, split)
        if instruction in seen:
            continue
        seen.add(instruction)
        tasks.append(
            Task(
                task_id=f"{suite}-{split}-{len(tasks):04d}",
                instruction=instruction,
                suite=suite,
                split=split,
                backend="phonesim",
                spec={"template": template.name, "params": params},
                horizon=SUITE_HORIZONS[suite],
            )
        )
    return tasks


@lru_cache(maxsize=8)
def _suite(suite: str, split: str) -> tuple[Task, ...]:
    if suite not in SUITE_HORIZONS:
        raise InputError(f"unknown suite {suite!r} (available: {', '.join(SUITES)})")
    if split not in SPLITS:
        raise InputError(f"unknown split {split!r} (available: {', '.join(SPLITS)})")
    exclude: frozenset[str] = frozenset()
    if split == "test":
        exclude = frozenset(t.instruction for t in _suite(suite, "train"))
    return tuple(_draw(suite, split, SPLIT_SIZES[split], exclude))


def load_suite(suite: str, split: str) -> list[Task]:
    """The fixed task list of ``suite``/``split``; raises :class:`InputError` for a bad name."""
    return list(_suite(suite, split))


def suite_instructions(suites: tuple[str, ...] = ("general", "webshop")) -> tuple[str, ...]:
    """The instructions of ``suites``' train splits: the words a run's tiny VLM tokenizer is
    trained on (:func:`distrl.policies.vlm.tiny.tiny_tokenizer`)."""
    return tuple(t.instruction for suite in suites for t in load_suite(suite, "train"))
