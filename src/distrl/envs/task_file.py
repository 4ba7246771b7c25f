"""Task files (``env.task_file``): JSONL, one task object a line, checked against a strict schema.

A task file is typed by hand or written by a script, and a mistake in it used to surface late (a
``horizon`` of ``10**30`` lost the episode when it was stored, ``"horizon": true`` ran as 1) or
never (an unknown ``spec.params`` key was ignored). Every line is therefore checked before any
task runs: field names and types (no coercion: ``true`` is not a number), ranges, the suite and
split names, the backend's own ``spec`` (a PhoneSim template and exactly its parameters, or a
MiniWoB++ task and seed range), and task ids unique in the file. Every problem is one
:class:`TaskFileError` line naming the file, the line and the field.

A PhoneSim task is composed from a template and its parameters (``spec``); its ``instruction``
may be left out, and the template then words it from the parameters. The format is documented
in docs/task-file.md, with a JSON schema (``docs/task-file.schema.json``, rendered by
:func:`task_file_schema`; ``python -m distrl.envs.task_file`` rewrites it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from distrl.core.task import Task
from distrl.envs.phonesim.tasks.registry import SUITE_HORIZONS, TEMPLATES
from distrl.errors import InputError

#: Longest episode a task may ask for (a step is seconds on a real device).
MAX_HORIZON = 1000
MAX_INSTRUCTION_CHARS = 2000
MAX_TASK_ID_CHARS = 200
#: Longest text and largest magnitude a template parameter may have.
MAX_PARAM_CHARS = 500
MAX_PARAM_INT = 1_000_000
#: MiniWoB++ problem seeds: what the ``miniwob`` package accepts.
MAX_MINIWOB_SEED = 2**31 - 1

PHONESIM_SUITES = tuple(SUITE_HORIZONS)
#: Suite names each backend's tasks may carry (Android runs PhoneSim tasks through fake-adb, or
#: instruction-only tasks judged by a VLM, labelled with a PhoneSim suite).
SUITES_BY_BACKEND: dict[str, tuple[str, ...]] = {
    "phonesim": PHONESIM_SUITES,
    "android": PHONESIM_SUITES,
    "miniwob": ("miniwob",),
}
_MINIWOB_SPEC_KEYS = ("task", "seeds", "data_mode", "seed")


class TaskFileError(InputError):
    """A task file that cannot be used; the message names the file, line and problem."""


class TaskRecord(BaseModel):
    """One line of a task file, as typed: strict types, no unknown fields."""

    model_config = ConfigDict(extra="forbid", strict=True)

    task_id: str = Field(
        min_length=1, max_length=MAX_TASK_ID_CHARS, description="Unique within the file."
    )
    instruction: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_INSTRUCTION_CHARS,
        description="What the user asks. PhoneSim tasks with a spec.template may leave it out: "
        "the template then words it from spec.params.",
    )
    suite: str = Field(
        min_length=1,
        max_length=100,
        description="phonesim and android: general or webshop (sets the default horizon); "
        "miniwob: miniwob.",
    )
    split: Literal["train", "test"] = Field(default="train", description="The task's split.")
    backend: Literal["phonesim", "android", "miniwob"] = Field(
        default="phonesim", description="The backend the task is for."
    )
    spec: dict[str, Any] = Field(
        default_factory=dict,
        description="phonesim: {template, params} (see `distrl tasks templates`); miniwob: "
        "{task, seeds?, seed?, data_mode?}; android: none (instruction-only, judged by a VLM).",
    )
    horizon: int | None = Field(
        default=None,
        ge=1,
        le=MAX_HORIZON,
        description="Steps before the episode is cut; default: the suite's (general 10, "
        "webshop 20; 10 otherwise).",
    )


def load_task_file(path: str | Path) -> list[Task]:
    """Read and check the tasks of a JSONL file (one :meth:`Task.to_dict` object per line).

    Every problem is reported as ``TaskFileError("task file tasks.jsonl line 12: ...")``.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise TaskFileError(f"task file {path}: cannot be read ({error.strerror})") from None
    except UnicodeDecodeError:
        raise TaskFileError(f"task file {path}: is not UTF-8 text; save it as UTF-8") from None
    tasks: list[Task] = []
    first_line_of: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"task file {path} line {number}"
        task = _parse_line(line, where)
        if task.task_id in first_line_of:
            raise TaskFileError(
                f"{where}: task_id {task.task_id!r} is already used on line "
                f"{first_line_of[task.task_id]} (task ids must be unique)"
            )
        first_line_of[task.task_id] = number
        tasks.append(task)
    if not tasks:
        raise TaskFileError(f"task file {path}: holds no tasks")
    return tasks


def _parse_line(line: str, where: str) -> Task:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as error:
        raise TaskFileError(f"{where}: not valid JSON ({error.msg})") from None
    if not isinstance(data, dict):
        raise TaskFileError(f"{where}: expected a JSON object, got {type(data).__name__}")
    if "horizon" in data and data["horizon"] is None:
        raise TaskFileError(
            f"{where}: 'horizon' = null: give an integer, or leave it out for the suite's default"
        )
    try:
        record = TaskRecord.model_validate(data)
    except ValidationError as error:
        raise TaskFileError(f"{where}: {_describe(error)}") from None
    allowed_suites = SUITES_BY_BACKEND[record.backend]
    if record.suite not in allowed_suites:
        raise TaskFileError(
            f"{where}: 'suite' = {record.suite!r} is unknown for backend {record.backend!r} "
            f"(allowed: {', '.join(allowed_suites)})"
        )
    if record.instruction is None and not (record.backend == "phonesim" and record.spec):
        raise TaskFileError(
            f"{where}: missing or empty 'instruction' (a string; a PhoneSim task with a "
            "spec.template may leave it out)"
        )
    _check_spec(record, where)
    fields = dict(record)  # a record has the fields of a Task; instruction and horizon may be
    if record.instruction is None:  # left out: the template words one, the suite has a horizon
        fields["instruction"] = _worded_by_template(record)
    if record.horizon is None:
        fields["horizon"] = _default_horizon(record.suite)
    return Task(**fields)


def _worded_by_template(record: TaskRecord) -> str:
    """The instruction a PhoneSim template words from the task's parameters (its phrasing
    drawn with a generator seeded by the task id, so a file always reads the same)."""
    template = TEMPLATES[record.spec["template"]]
    seed = int.from_bytes(record.task_id.encode("utf-8")[-8:].rjust(8, b"\0"), "little")
    rng = np.random.default_rng(seed)
    return template.instruction(record.spec.get("params", {}), rng, record.split)


def _default_horizon(suite: str) -> int:
    return SUITE_HORIZONS.get(suite, 10)


def _describe(error: ValidationError) -> str:
    """The first problem of a task line, in one sentence naming the field."""
    detail = error.errors(include_url=False)[0]
    field = ".".join(str(part) for part in detail["loc"]) or "<task>"
    kind = detail["type"]
    if kind == "extra_forbidden":
        return f"'{field}' is not a task field (fields: {', '.join(TaskRecord.model_fields)})"
    if kind in ("missing", "string_too_short") and field in ("task_id", "instruction", "suite"):
        return f"missing or empty '{field}' (a string)"
    if kind == "missing":
        return f"missing '{field}'"
    return f"'{field}' = {_show(detail.get('input'))}: {detail['msg']}"


def _show(value: Any, limit: int = 60) -> str:
    text = json.dumps(value) if _jsonable(value) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


# -- the backends' specs -------------------------------------------------------------------------


def _check_spec(record: TaskRecord, where: str) -> None:
    if record.backend == "miniwob":
        _check_miniwob_spec(record.spec, where)
    elif record.backend == "phonesim":
        _check_phonesim_spec(record.spec, where)
    elif record.spec:  # android: instruction-only tasks, judged from the screen
        raise TaskFileError(
            f"{where}: backend 'android' tasks are instruction-only and take no 'spec' "
            f"(got keys {', '.join(sorted(record.spec))}); use backend 'phonesim' for a "
            "PhoneSim template"
        )


def _check_phonesim_spec(spec: Mapping[str, Any], where: str) -> None:
    unknown = sorted(set(spec) - {"template", "params"})
    if unknown:
        raise TaskFileError(
            f"{where}: 'spec' has unknown keys {', '.join(unknown)} (allowed: template, params)"
        )
    template = spec.get("template")
    if not isinstance(template, str) or template not in TEMPLATES:
        raise TaskFileError(
            f"{where}: 'spec.template' must name a PhoneSim template "
            f"(got {_show(template)}; see `distrl tasks templates`)"
        )
    params = spec.get("params", {})
    if not isinstance(params, dict):
        raise TaskFileError(f"{where}: 'spec.params' must be an object, got {_show(params)}")
    expected = template_param_types(template)
    missing = sorted(set(expected) - set(params))
    if missing:
        raise TaskFileError(
            f"{where}: 'spec.params' lacks {', '.join(missing)} for template {template!r}"
        )
    unknown = sorted(set(params) - set(expected))
    if unknown:
        raise TaskFileError(
            f"{where}: 'spec.params' has unknown keys {', '.join(unknown)} for template "
            f"{template!r} (its parameters: {', '.join(expected)})"
        )
    for name, kind in expected.items():
        _check_param(f"{where}: 'spec.params.{name}'", params[name], kind)


def _check_param(where: str, value: Any, kind: type) -> None:
    # type() rather than isinstance(): true is not a number here, as in JSON.
    if type(value) is not kind:
        raise TaskFileError(f"{where} = {_show(value)} must be {_KIND_WORDS.get(kind, kind)}")
    if kind is str and len(value) > MAX_PARAM_CHARS:
        raise TaskFileError(f"{where} is longer than {MAX_PARAM_CHARS} characters")
    if kind is int and abs(value) > MAX_PARAM_INT:
        raise TaskFileError(f"{where} = {value} is out of range (|value| <= {MAX_PARAM_INT})")


_KIND_WORDS: dict[type, str] = {str: "a string", int: "an integer", bool: "true or false"}


@cache
def template_param_types(template: str) -> dict[str, type]:
    """The parameters a PhoneSim template takes and their JSON types, read off a sample (every
    template draws the same parameter names and types every time)."""
    sample = TEMPLATES[template].sample_params(np.random.default_rng(0), "train")
    return {name: type(value) for name, value in sample.items()}


def _check_miniwob_spec(spec: Mapping[str, Any], where: str) -> None:
    unknown = sorted(set(spec) - set(_MINIWOB_SPEC_KEYS))
    if unknown:
        raise TaskFileError(
            f"{where}: 'spec' has unknown keys {', '.join(unknown)} "
            f"(allowed: {', '.join(_MINIWOB_SPEC_KEYS)})"
        )
    name = spec.get("task")
    if not isinstance(name, str) or not name or len(name) > MAX_TASK_ID_CHARS:
        raise TaskFileError(f"{where}: 'spec.task' must name a MiniWoB++ task (e.g. click-test)")
    seeds = spec.get("seeds")
    if seeds is not None and not (
        isinstance(seeds, list)
        and len(seeds) == 2
        and all(type(seed) is int for seed in seeds)
        and 0 <= seeds[0] < seeds[1] <= MAX_MINIWOB_SEED
    ):
        raise TaskFileError(
            f"{where}: 'spec.seeds' = {_show(seeds)} must be [start, stop] with "
            f"0 <= start < stop <= {MAX_MINIWOB_SEED}"
        )
    seed = spec.get("seed")
    if seed is not None and not (type(seed) is int and 0 <= seed <= MAX_MINIWOB_SEED):
        raise TaskFileError(
            f"{where}: 'spec.seed' = {_show(seed)} must be an integer in 0..{MAX_MINIWOB_SEED}"
        )
    mode = spec.get("data_mode")
    if mode is not None and mode not in ("train", "test"):
        raise TaskFileError(f"{where}: 'spec.data_mode' = {_show(mode)} must be train or test")


# -- the documented format -----------------------------------------------------------------------


def task_file_schema() -> dict[str, Any]:
    """The JSON schema of one task-file line: :class:`TaskRecord`'s, with PhoneSim's ``spec``
    spelled out (every template and its parameters' JSON types)."""
    schema = TaskRecord.model_json_schema()
    schema["title"] = "distrl task (one line of a JSONL task file)"
    json_types = {str: "string", int: "integer", bool: "boolean", float: "number"}
    templates = {
        name: {
            "type": "object",
            "properties": {
                "template": {"const": name},
                "params": {
                    "type": "object",
                    "properties": {
                        param: {"type": json_types.get(kind, "string")}
                        for param, kind in template_param_types(name).items()
                    },
                    "required": sorted(template_param_types(name)),
                    "additionalProperties": False,
                },
            },
            "required": ["template", "params"],
            "additionalProperties": False,
        }
        for name in sorted(TEMPLATES)
    }
    schema["$defs"] = {"PhoneSimSpec": {"oneOf": list(templates.values())}}
    schema["properties"]["spec"]["description"] += " PhoneSim specs: $defs/PhoneSimSpec."
    return schema


def render_schema() -> str:
    return json.dumps(task_file_schema(), indent=2, sort_keys=True) + "\n"


SCHEMA_PATH = Path("docs") / "task-file.schema.json"

if __name__ == "__main__":
    SCHEMA_PATH.write_text(render_schema(), encoding="utf-8")
    print(f"wrote {SCHEMA_PATH}")
