"""User-pointed torch files: data loads, every damaged or unsafe file is one line naming it."""

from __future__ import annotations

import pathlib
from pathlib import Path

import pytest
import torch

from distrl.errors import InputError
from distrl.torch_files import read_torch_file


def read(path: Path) -> object:
    return read_torch_file(path, "checkpoint", "start a new run")


def test_data_loads(tmp_path: Path) -> None:
    path = tmp_path / "ok.pt"
    torch.save({"weights": torch.ones(2), "version": 3}, path)
    data = read(path)
    assert isinstance(data, dict) and data["version"] == 3


def _damaged(tmp_path: Path, kind: str) -> Path:
    good = tmp_path / "good.pt"
    torch.save({"weights": torch.ones(64)}, good)
    path = tmp_path / f"{kind}.pt"
    if kind == "missing":
        return path
    if kind == "folder":
        path.mkdir()
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "truncated":
        path.write_bytes(good.read_bytes()[:200])
    elif kind == "garbage":
        path.write_bytes(bytes(range(256)) * 8)
    elif kind == "code":  # an object whose unpickling imports and calls arbitrary code
        torch.save({"path": pathlib.PurePosixPath("x")}, path)
    return path


@pytest.mark.parametrize(
    ("kind", "needle"),
    [
        ("missing", "no such file"),
        ("folder", "is a folder"),
        ("empty", "cannot be read"),
        ("truncated", "damaged or cut short"),
        ("garbage", "cannot be read"),
        ("code", "loading them could run code"),
    ],
)
def test_bad_files_are_one_line_naming_file_and_fix(tmp_path: Path, kind: str, needle: str) -> None:
    path = _damaged(tmp_path, kind)
    with pytest.raises(InputError) as caught:
        read(path)
    message = str(caught.value)
    assert "\n" not in message and needle in message
    assert str(path) in message and message.endswith("start a new run")
    assert "weights_only=False" not in message and "weights_only` set" not in message


def test_the_error_type_is_the_callers(tmp_path: Path) -> None:
    class PolicyFileError(InputError):
        pass

    with pytest.raises(PolicyFileError):
        read_torch_file(tmp_path / "nope.pt", "policy", "fix", PolicyFileError)
