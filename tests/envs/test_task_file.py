"""Task files are checked line by line against a strict schema before any task runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from distrl.config.schema import PhoneSimConfig
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.envs.task_file import MAX_HORIZON, TaskFileError, load_task_file

OPEN_CLOCK = {
    "task_id": "mine-1",
    "instruction": "Open the clock",
    "suite": "general",
    "spec": {"template": "open_app", "params": {"app": "clock", "label": "Clock"}},
}


def write(tmp_path: Path, *records: object) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n",
        encoding="utf-8",
    )
    return path


def with_(**changes: object) -> dict[str, object]:
    record = json.loads(json.dumps(OPEN_CLOCK))
    for key, value in changes.items():
        node = record
        *parents, last = key.split("__")
        for parent in parents:
            node = node[parent]
        if value is ...:
            del node[last]
        else:
            node[last] = value
    return record


def test_suite_tasks_round_trip(tmp_path: Path) -> None:
    tasks = load_suite("general", "train")[:5] + load_suite("webshop", "test")[:5]
    loaded = load_task_file(write(tmp_path, *(t.to_dict() for t in tasks)))
    assert loaded == tasks


def test_defaults_fill_split_backend_and_the_suite_horizon(tmp_path: Path) -> None:
    (task,) = load_task_file(write(tmp_path, OPEN_CLOCK))
    assert (task.split, task.backend, task.horizon) == ("train", "phonesim", 10)


@pytest.mark.parametrize(
    ("record", "needle"),
    [
        (with_(horizon=True), "'horizon' = true"),
        (with_(horizon=10**30), f"less than or equal to {MAX_HORIZON}"),
        (with_(horizon=0), "'horizon' = 0"),
        (with_(horizon="10"), "'horizon' = \"10\""),
        (with_(spec=5), "'spec' = 5"),
        (with_(spec=["open_app"]), "'spec' = [\"open_app\"]"),
        (with_(task_id=7), "'task_id' = 7"),
        (with_(instruction=""), "missing or empty 'instruction'"),
        (with_(colour="red"), "'colour' is not a task field"),
        (with_(suite="shopping"), "'suite' = 'shopping' is unknown for backend 'phonesim'"),
        (with_(split="validation"), "'split' = \"validation\""),
        (with_(backend="ios"), "'backend' = \"ios\""),
        (with_(spec__extra=1), "'spec' has unknown keys extra"),
        (with_(spec__template="nope"), "'spec.template' must name a PhoneSim template"),
        (with_(spec__params=[]), "'spec.params' must be an object"),
        (with_(spec__params__label=...), "'spec.params' lacks label"),
        (with_(spec__params__volume=11), "'spec.params' has unknown keys volume"),
        (with_(spec__params__app=3), "'spec.params.app' = 3 must be a string"),
        (with_(spec__params__label="x" * 600), "'spec.params.label' is longer than 500"),
        (
            {**OPEN_CLOCK, "backend": "android", "spec": {"template": "open_app"}},
            "backend 'android' tasks are instruction-only",
        ),
        (
            {
                **OPEN_CLOCK,
                "backend": "miniwob",
                "suite": "miniwob",
                "spec": {"task": "x", "seeds": [5, 1]},
            },
            "'spec.seeds' = [5, 1] must be [start, stop]",
        ),
        (
            {
                **OPEN_CLOCK,
                "backend": "miniwob",
                "suite": "miniwob",
                "spec": {"task": "x", "seed": True},
            },
            "'spec.seed' = true must be an integer",
        ),
        (
            {**OPEN_CLOCK, "backend": "miniwob", "suite": "general", "spec": {"task": "x"}},
            "unknown for backend 'miniwob' (allowed: miniwob)",
        ),
    ],
)
def test_bad_fields_name_file_line_and_field(tmp_path: Path, record: object, needle: str) -> None:
    path = write(tmp_path, OPEN_CLOCK | {"task_id": "first"}, record)
    with pytest.raises(TaskFileError) as caught:
        load_task_file(path)
    message = str(caught.value)
    assert message.startswith(f"task file {path} line 2: ") and needle in message, message
    assert "\n" not in message


def test_integer_params_must_be_integers_not_booleans(tmp_path: Path) -> None:
    alarm = {
        "task_id": "alarm",
        "instruction": "Set an alarm for 7:30 AM",
        "suite": "general",
        "spec": {"template": "set_alarm", "params": {"hour": 7, "minute": 30, "time": "7:30 AM"}},
    }
    assert load_task_file(write(tmp_path, alarm))[0].spec["params"]["hour"] == 7
    alarm["spec"]["params"]["hour"] = True  # type: ignore[index]
    with pytest.raises(TaskFileError, match="'spec.params.hour' = true must be an integer"):
        load_task_file(write(tmp_path, alarm))
    alarm["spec"]["params"]["hour"] = 10**30  # type: ignore[index]
    with pytest.raises(TaskFileError, match="out of range"):
        load_task_file(write(tmp_path, alarm))


def test_duplicate_task_ids_name_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path, OPEN_CLOCK, "", OPEN_CLOCK)
    with pytest.raises(TaskFileError, match="line 3: task_id 'mine-1' is already used on line 1"):
        load_task_file(path)


def test_android_and_miniwob_tasks_pass(tmp_path: Path) -> None:
    android = {
        "task_id": "a",
        "instruction": "open settings",
        "suite": "general",
        "backend": "android",
    }
    miniwob = {
        "task_id": "m",
        "instruction": "click-test",
        "suite": "miniwob",
        "backend": "miniwob",
        "spec": {"task": "click-test", "seeds": [0, 10], "data_mode": "test", "seed": 3},
        "split": "test",
    }
    tasks = load_task_file(write(tmp_path, android, miniwob))
    assert [t.backend for t in tasks] == ["android", "miniwob"]


def test_unreadable_files(tmp_path: Path) -> None:
    binary = tmp_path / "tasks.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(TaskFileError, match="is not UTF-8 text"):
        load_task_file(binary)
    with pytest.raises(TaskFileError, match="cannot be read"):
        load_task_file(tmp_path / "missing.jsonl")


# -- the documented format -----------------------------------------------------------------------

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_committed_json_schema_is_current() -> None:
    from distrl.envs.task_file import render_schema

    assert (DOCS / "task-file.schema.json").read_text(encoding="utf-8") == render_schema(), (
        "docs/task-file.schema.json is out of date: run `python -m distrl.envs.task_file`"
    )


def test_documented_examples_load_and_match_the_schema(tmp_path: Path) -> None:
    lines = [
        line
        for line in (DOCS / "task-file.md").read_text(encoding="utf-8").splitlines()
        if line.startswith('{"task_id"')
    ]
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    tasks = load_task_file(path)
    assert len(tasks) == len(lines) >= 2
    jsonschema = pytest.importorskip("jsonschema")
    from distrl.envs.task_file import task_file_schema

    schema = task_file_schema()
    for line in lines:
        record = json.loads(line)
        jsonschema.validate(record, schema)
        spec_schema = {"$defs": schema["$defs"], "$ref": "#/$defs/PhoneSimSpec"}
        jsonschema.validate(record["spec"], spec_schema)


def test_a_template_words_the_instruction_when_it_is_left_out(tmp_path: Path) -> None:
    params = {"hour": 6, "minute": 45, "time": "6:45 AM"}
    line = {"task_id": "a", "suite": "general", "spec": {"template": "set_alarm", "params": params}}
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(line) + "\n" + json.dumps({**line, "task_id": "b"}), "utf-8")
    first, second = load_task_file(path)
    assert "6:45" in first.instruction and "6:45" in second.instruction
    assert load_task_file(path)[0].instruction == first.instruction  # the same every read
    env = PhoneSimEnv(PhoneSimConfig(), seed=0)
    observation = env.reset(first)
    assert observation.instruction == first.instruction
    android = {**line, "backend": "android", "spec": {}}
    path.write_text(json.dumps(android), "utf-8")
    with pytest.raises(TaskFileError, match="missing or empty 'instruction'"):
        load_task_file(path)
