"""Property: whatever bad input a user gives, the CLI ends with one ``distrl: error:`` line.

Hypothesis draws bad command-line arguments, ``key=value`` overrides, presets and task files, each
bad by construction (a value past a field's bound, a type the field does not take, an unknown
key, bytes that are not UTF-8, a task field of the wrong kind...). For every draw the command must
exit 2 with exactly one line on stderr starting ``distrl: error:``, no traceback, and write
nothing outside its run root. Commands run in-process through ``main()`` so a few hundred draws
take seconds.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
import typing
from collections.abc import Iterator
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic.fields import FieldInfo

from distrl.cli.main import main
from distrl.config.loader import config_fields

EXAMPLES = int(os.environ.get("DISTRL_FUZZ_EXAMPLES", "60"))
#: Commands whose config is loaded before anything else happens.
COMMANDS = (
    ["tasks", "list"],
    ["play"],
    ["train"],
    ["collect-demos"],
    ["eval", "--checkpoint", "x"],
)

FIELDS: dict[str, FieldInfo] = dict(config_fields())
SECTIONS = sorted({key.rsplit(".", 1)[0] for key in FIELDS if "." in key})

# -- what is bad about a value -------------------------------------------------------------------


def _bound(field: FieldInfo, name: str) -> float | None:
    return next(
        (getattr(c, name) for c in field.metadata if getattr(c, name, None) is not None), None
    )


def _kinds(field: FieldInfo) -> set[type]:
    args = typing.get_args(field.annotation) or (field.annotation,)
    return {typing.get_origin(arg) or arg for arg in args}


def _choices(field: FieldInfo) -> list[str]:
    args = typing.get_args(field.annotation) or (field.annotation,)
    return [
        str(c) for a in args if typing.get_origin(a) is typing.Literal for c in typing.get_args(a)
    ]


@st.composite
def bad_override(draw: st.DrawFn) -> str:
    """``key=value`` that the schema must refuse."""
    key = draw(st.sampled_from(sorted(FIELDS)))
    field = FIELDS[key]
    kinds = _kinds(field)
    wrong_kind = st.sampled_from(["[1, 2]", "{a: 1}", "abc", "'12'x"])
    if bool in kinds:
        value = draw(st.sampled_from(["maybe", "2", "[true]", "{}"]))
    elif kinds & {int, float}:
        high, low = (
            _bound(field, "le") or _bound(field, "lt"),
            _bound(field, "ge") or _bound(field, "gt"),
        )
        past = []
        if high is not None:
            past.append(st.integers(min_value=int(high) + 1, max_value=10**40).map(str))
        if low is not None:
            past.append(st.integers(min_value=-(10**40), max_value=int(low) - 1).map(str))
        value = draw(st.one_of(*past, wrong_kind, st.sampled_from([".inf", ".nan"])))
    elif choices := _choices(field):
        value = draw(
            st.text(alphabet="abcxyz_", min_size=1, max_size=12).filter(lambda v: v not in choices)
        )
    elif list in kinds:
        value = draw(st.sampled_from(["{a: 1}", "7", "[[1]]", "[{x: 1}]"]))
    elif key == "run_name":
        value = draw(st.sampled_from(["../..", "/abs", "a/b", ".", "..", "-x"]))
    else:  # a string setting: a mapping or a list is never a string, nor text with a NUL
        value = draw(st.sampled_from(["{a: 1}", "[1, 2]", '"a\\0b"', "x" * 5000]))
    if draw(st.booleans()) and "." in key:  # or an unknown key beside it
        key = f"{key.rsplit('.', 1)[0]}.{draw(st.text(alphabet='qz_', min_size=3, max_size=8))}"
        value = "1"
    return f"{key}={value}"


BAD_FLAGS = st.one_of(
    st.tuples(st.just("--limit"), st.integers(max_value=-1).map(str)),
    st.tuples(st.just("--limit"), st.text(alphabet="abc.", min_size=1, max_size=5)),
    st.tuples(st.just("--seed"), st.sampled_from(["-1", "x", "1.5", str(2**40)])),
    st.tuples(st.just("--episodes"), st.sampled_from(["0", "-3", "1e29", str(10**30)])),
    st.tuples(
        st.sampled_from(["--suite", "--split", "--env", "--policy"]),
        st.text(alphabet="xyz", min_size=1, max_size=6),
    ),
    st.tuples(st.just("--run-name"), st.sampled_from(["../..", "/tmp/x", "a/../../b", ".."])),
    st.tuples(
        st.text(alphabet="abcdefgh-", min_size=3, max_size=10).map(lambda t: "--zz" + t),
        st.just("1"),
    ),
    st.tuples(st.just("not-an-override"), st.just("--json")),
)


@st.composite
def bad_preset(draw: st.DrawFn) -> bytes:
    """A preset file that is not a usable config."""
    kind = draw(st.sampled_from(["bytes", "list", "unknown", "duplicate", "scalar", "override"]))
    if kind == "bytes":
        return b"\xff" + draw(st.binary(max_size=40))
    if kind == "list":
        return ("- " + draw(st.text(alphabet="abc :", max_size=10))).encode()
    if kind == "unknown":
        return f"{draw(st.text(alphabet='qxz', min_size=2, max_size=8))}:\n  a: 1\n".encode()
    if kind == "duplicate":
        section = draw(st.sampled_from(["play", "train", "env"]))
        return f"{section}: {{}}\n{section}: {{}}\n".encode()
    if kind == "scalar":
        return draw(st.sampled_from([b"3", b"'text'", b"true"]))
    key, _, value = draw(bad_override()).partition("=")
    *sections, leaf = key.split(".")
    text = "".join(f"{'  ' * i}{s}:\n" for i, s in enumerate(sections))
    return (text + f"{'  ' * len(sections)}{leaf}: {value}\n").encode()


GOOD_TASK = {
    "task_id": "t-1",
    "instruction": "Open the clock",
    "suite": "general",
    "spec": {"template": "open_app", "params": {"app": "clock", "label": "Clock"}},
}
NOT_INT = st.one_of(st.booleans(), st.text(max_size=3), st.floats(allow_nan=False), st.none())


@st.composite
def bad_task_line(draw: st.DrawFn) -> str:
    record = json.loads(json.dumps(GOOD_TASK))
    kind = draw(
        st.sampled_from(
            [
                "horizon",
                "horizon-range",
                "spec",
                "param",
                "field",
                "suite",
                "id",
                "json",
                "duplicate",
            ]
        )
    )
    if kind == "horizon":
        record["horizon"] = draw(NOT_INT)
    elif kind == "horizon-range":
        record["horizon"] = draw(st.one_of(st.integers(max_value=0), st.integers(min_value=1001)))
    elif kind == "spec":
        record["spec"] = draw(
            st.one_of(st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=2))
        )
    elif kind == "param":
        record["spec"]["params"][draw(st.sampled_from(["app", "label", "extra"]))] = draw(
            st.one_of(st.integers(), st.booleans(), st.none())
        )
    elif kind == "field":
        record[draw(st.text(alphabet="qxz", min_size=1, max_size=6))] = 1
    elif kind == "suite":
        record["suite"] = draw(
            st.text(min_size=1, max_size=8).filter(lambda s: s not in ("general", "webshop"))
        )
    elif kind == "id":
        record["task_id"] = draw(st.one_of(st.integers(), st.just(""), st.none()))
    elif kind == "json":
        return draw(st.sampled_from(["{", "[1, 2]", '"text"', "{'single': 1}", "nul"]))
    else:
        return json.dumps(GOOD_TASK) + "\n" + json.dumps(GOOD_TASK)
    return json.dumps(record)


# -- running one command -------------------------------------------------------------------------


@contextlib.contextmanager
def sandbox() -> Iterator[Path]:
    """A fresh folder as the working directory (so stray writes would show)."""
    previous = Path.cwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            yield Path(folder)
        finally:
            os.chdir(previous)


def assert_one_error_line(folder: Path, argv: list[str]) -> None:
    before = sorted(folder.rglob("*"))
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main([*argv, "--run-root", str(folder / "runs")])
    lines = err.getvalue().splitlines()
    assert code == 2, (argv, err.getvalue())
    assert len(lines) == 1 and lines[0].startswith("distrl: error: "), (argv, err.getvalue())
    assert "Traceback" not in err.getvalue()
    written = [p for p in sorted(folder.rglob("*")) if p not in before]
    assert all(p.is_relative_to(folder / "runs") for p in written), written


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    command=st.sampled_from(COMMANDS), overrides=st.lists(bad_override(), min_size=1, max_size=3)
)
def test_bad_overrides(command: list[str], overrides: list[str]) -> None:
    with sandbox() as folder:
        assert_one_error_line(folder, [*command, *overrides])


@settings(max_examples=EXAMPLES, deadline=None)
@given(command=st.sampled_from(COMMANDS[:3]), flag=BAD_FLAGS)
def test_bad_arguments(command: list[str], flag: tuple[str, str]) -> None:
    with sandbox() as folder:
        assert_one_error_line(folder, [*command, *flag])


@settings(max_examples=EXAMPLES, deadline=None)
@given(command=st.sampled_from(COMMANDS), preset=bad_preset())
def test_bad_presets(command: list[str], preset: bytes) -> None:
    with sandbox() as folder:
        path = folder / "preset.yaml"
        path.write_bytes(preset)
        assert_one_error_line(folder, [*command, "--preset", str(path)])


@settings(max_examples=EXAMPLES, deadline=None)
@given(command=st.sampled_from(COMMANDS[:2]), line=bad_task_line(), at=st.integers(0, 2))
def test_bad_task_files(command: list[str], line: str, at: int) -> None:
    with sandbox() as folder:
        good = [json.dumps(GOOD_TASK | {"task_id": f"good-{i}"}) for i in range(2)]
        path = folder / "tasks.jsonl"
        path.write_text("\n".join([*good[:at], line, *good[at:]]) + "\n", encoding="utf-8")
        assert_one_error_line(folder, [*command, "--task-file", str(path)])
