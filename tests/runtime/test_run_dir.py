"""Run folders stay inside the run root, and unusable places are one clear InputError."""

from __future__ import annotations

import errno
import tempfile
from pathlib import Path

import pytest

from distrl.config import load_config
from distrl.errors import InputError
from distrl.runtime.run_dir import check_writable, create_run_dir


def test_run_folder_is_made_under_the_root_with_a_free_name(tmp_path: Path) -> None:
    cfg = load_config(None, [f"run_root={tmp_path / 'runs'}", "run_name=exp"])
    first, second = create_run_dir(cfg, "play"), create_run_dir(cfg, "play")
    assert first == tmp_path / "runs" / "exp" and second == tmp_path / "runs" / "exp-2"
    assert (first / "config.yaml").is_file()


def test_root_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    cfg = load_config(None, [f"run_root={tmp_path / 'afile'}"])
    with pytest.raises(InputError, match="is a file, not a folder; choose another --run-root"):
        create_run_dir(cfg, "play")
    cfg = load_config(None, [f"run_root={tmp_path / 'afile' / 'below'}"])
    with pytest.raises(InputError, match="run root .*afile/below: not a directory"):
        create_run_dir(cfg, "play")


def test_a_link_out_of_the_root_is_not_followed(tmp_path: Path) -> None:
    root, outside = tmp_path / "runs", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "exp").symlink_to(outside / "target")  # dangling: mkdir would create the target
    cfg = load_config(None, [f"run_root={root}", "run_name=exp"])
    with pytest.raises(InputError, match="would not be directly inside the run root"):
        create_run_dir(cfg, "play")
    assert not (outside / "target").exists()


def test_the_config_refuses_names_that_are_paths(tmp_path: Path) -> None:
    from distrl.config import ConfigError

    with pytest.raises(ConfigError, match="not a path"):
        load_config(None, [f"run_root={tmp_path}", "run_name=../.."])


def test_unwritable_run_folder_is_found_before_any_work(tmp_path: Path, monkeypatch) -> None:
    run_dir = tmp_path / "run"
    (run_dir / "tensorboard").mkdir(parents=True)
    check_writable(run_dir)  # writable: nothing to say
    # Permission bits do not bind root, who runs CI: refuse file creation at the OS boundary.
    real = tempfile.TemporaryFile

    def refuse_in_tensorboard(*args, dir=None, **kwargs):  # noqa: A002 (tempfile's own name)
        if dir is not None and Path(dir).name == "tensorboard":
            raise PermissionError(errno.EACCES, "Permission denied", str(dir))
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "TemporaryFile", refuse_in_tensorboard)
    with pytest.raises(InputError) as caught:
        check_writable(run_dir)
    message = str(caught.value)
    assert f"run folder {run_dir / 'tensorboard'} cannot be written (permission denied" in message
    assert "\n" not in message
