"""The ``general`` and ``webshop`` suites: fixed, seeded train/test task lists, and task files.

Suites are generated, not shipped: the same code and seed give the same tasks on every machine.
Templates are drawn round-robin so every template is represented; duplicates are dropped, and any
test instruction that also occurs in train is dropped from test, so the splits never overlap.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from distrl.core.task import Task
from distrl.envs.phonesim.tasks.registry import SUITE_HORIZONS, TEMPLATES, suite_templates
from distrl.errors import InputError

SUITES = tuple(SUITE_HORIZONS)
SPLITS = ("train", "test")
SPLIT_SIZES = {"train": 600, "test": 250}
_SUITE_SEED = 20241021
_MAX_TRIES_PER_TASK = 40


class TaskFileError(InputError):
    """A task file that cannot be used; the message names the file, line and problem."""


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


def load_task_file(path: str | Path) -> list[Task]:
    """Read tasks from a JSONL file (one :meth:`Task.to_dict` object per line).

    Every problem is reported as ``TaskFileError("tasks.jsonl line 12: ...")``.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise TaskFileError(f"task file {path}: cannot be read ({error.strerror})") from None
    except UnicodeDecodeError:
        raise TaskFileError(f"task file {path}: is not UTF-8 text") from None
    tasks: list[Task] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"task file {path} line {number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as error:
            raise TaskFileError(f"{where}: not valid JSON ({error.msg})") from None
        if not isinstance(data, dict):
            raise TaskFileError(f"{where}: expected a JSON object, got {type(data).__name__}")
        for key in ("task_id", "instruction", "suite"):
            if not isinstance(data.get(key), str) or not data[key]:
                raise TaskFileError(f"{where}: missing or empty '{key}' (a string)")
        data.setdefault("split", "train")
        data.setdefault("horizon", SUITE_HORIZONS.get(data["suite"], 10))
        if not isinstance(data["horizon"], int) or data["horizon"] < 1:
            raise TaskFileError(f"{where}: 'horizon' must be a positive integer")
        if data.get("backend", "phonesim") == "phonesim":
            spec = data.get("spec")
            template = spec.get("template") if isinstance(spec, dict) else None
            if template not in TEMPLATES:
                raise TaskFileError(
                    f"{where}: 'spec.template' must name a PhoneSim template "
                    f"(got {template!r}; see `distrl tasks templates`)"
                )
            params = spec.get("params", {})
            if not isinstance(params, dict):
                raise TaskFileError(f"{where}: 'spec.params' must be an object")
            expected = TEMPLATES[template].sample_params(np.random.default_rng(0), "train")
            missing = sorted(set(expected) - set(params))
            if missing:
                raise TaskFileError(
                    f"{where}: 'spec.params' lacks {', '.join(missing)} for template {template!r}"
                )
        tasks.append(Task.from_dict(data))
    if not tasks:
        raise TaskFileError(f"task file {path}: holds no tasks")
    return tasks


def suite_instructions(suites: tuple[str, ...] = ("general", "webshop")) -> tuple[str, ...]:
    """The instructions of ``suites``' train splits: the words a run's tiny VLM tokenizer is
    trained on (:func:`distrl.policies.vlm.tiny.tiny_tokenizer`)."""
    return tuple(t.instruction for suite in suites for t in load_suite(suite, "train"))
