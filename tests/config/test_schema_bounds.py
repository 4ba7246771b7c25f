"""Every config value is bounded, so a wild value fails at start-up with one line, not later."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest
from pydantic.fields import FieldInfo

from distrl.config import ConfigError, load_config
from distrl.config.loader import config_fields


def _kinds(field: FieldInfo) -> set[type]:
    args = typing.get_args(field.annotation) or (field.annotation,)
    return {typing.get_origin(arg) or arg for arg in args}


def _has(field: FieldInfo, *names: str) -> bool:
    return any(getattr(c, name, None) is not None for c in field.metadata for name in names)


def test_every_number_has_both_bounds_and_every_list_a_length() -> None:
    unbounded = []
    for key, field in config_fields():
        kinds = _kinds(field)
        numeric = bool(kinds & {int, float}) and bool not in kinds
        if numeric and not (_has(field, "le", "lt") and _has(field, "ge", "gt")):
            unbounded.append(key)
        if list in kinds and not _has(field, "max_length"):
            unbounded.append(key)
    assert unbounded == []


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        (
            "train.batch_size=99999999999999999999",
            "'train.batch_size' = 99999999999999999999 is out of range",
        ),
        ("play.episodes=100000000000000000000000000000", "must be >= 1 and <= 1000000"),
        ("play.episodes=1e29", "'play.episodes' = '1e29' has the wrong type"),
        ("train.replay_capacity=10**30", "'train.replay_capacity'"),
        ("env.miniwob.horizon=1000000", "'env.miniwob.horizon'"),
        ("seed=18446744073709551616", "'seed'"),
        ("env.task_file=" + "x" * 5000, "is too long (at most 4096 characters)"),
        ("env.miniwob.tasks=[]", "'env.miniwob.tasks' = [] is too short"),
        ('env.task_file="a\\0b"', "text cannot contain a NUL character"),
        ('env.miniwob.tasks=["ok", "a\\0b"]', "text cannot contain a NUL character"),
        ("train.min_replay=30000", "config section 'train' is invalid: train.min_replay=30000"),
    ],
)
def test_wild_values_fail_at_validation(override: str, needle: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(None, [override])
    assert needle in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "name", ["../..", "..", ".", "/tmp/elsewhere", "a/b", "a\\b", "-rf", "tab\there", " pad", ""]
)
def test_run_names_are_one_folder_name(name: str) -> None:
    with pytest.raises(ConfigError, match="'run_name'"):
        load_config(None, [f"run_name={json.dumps(name)}"])  # quoted: spaces survive


@pytest.mark.parametrize("name", ["my-run", "exp_3.seed-1", "Ünïcode run"])
def test_plain_run_names_pass(name: str) -> None:
    assert load_config(None, [f"run_name={name}"]).run_name == name


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (
            "play:\n  episodes: 3\nplay:\n  episodes: 4\n",
            "line 3, column 1: key 'play' appears twice (first on line 1)",
        ),
        ("play:\n  episodes: 3\n  episodes: 4\n", "key 'episodes' appears twice (first on line 2)"),
    ],
)
def test_duplicate_yaml_keys_are_refused(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert needle in str(caught.value) and str(path) in str(caught.value)


def test_non_utf8_preset_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("seed: 1\nrun_name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match=r"is not UTF-8 text \(byte 0xe9 on line 2\)"):
        load_config(path)
