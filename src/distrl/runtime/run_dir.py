"""Run folders: every command that produces data writes it under one folder per run.

Layout: ``<run_root>/<name>/config.yaml`` (the resolved config), ``trajectories/`` (Parquet
shards), ``summary.json`` (the figures the command printed).

A run folder is always one folder directly inside the run root (the config refuses run names that
are paths, and :func:`create_run_dir` checks the resolved result again), and a folder a run will
write into is checked to be writable before any work starts: a background writer (TensorBoard's)
that finds it read-only later would only print tracebacks from its own thread.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from distrl.config.loader import config_to_yaml
from distrl.config.schema import RunConfig
from distrl.errors import InputError, describe_os_error

#: Sub-folders a training run writes into (checked on ``--resume`` before anything starts).
RUN_SUBFOLDERS = ("checkpoints", "tensorboard", "trajectories")


def create_run_dir(cfg: RunConfig, command: str) -> Path:
    """A new, empty run folder for ``command`` with the resolved config saved in it."""
    root = Path(cfg.run_root)
    name = cfg.run_name or f"{command}-{time.strftime('%Y%m%d-%H%M%S')}"
    _make_root(root)
    run_dir = root / name
    suffix = 1
    while True:
        _check_inside(root, run_dir)
        try:
            run_dir.mkdir()
            break
        except FileExistsError:
            suffix += 1
            run_dir = root / f"{name}-{suffix}"
        except OSError as error:
            raise InputError(f"run folder {run_dir}: {describe_os_error(error)}") from None
    try:
        (run_dir / "config.yaml").write_text(config_to_yaml(cfg), encoding="utf-8")
    except OSError as error:
        raise InputError(f"run folder {run_dir}: {describe_os_error(error)}") from None
    return run_dir


def check_writable(run_dir: Path) -> None:
    """Raise :class:`InputError` unless a run can write into ``run_dir`` and the sub-folders it
    already has (probed by creating a file: permission bits say nothing about a read-only mount,
    and nothing at all to root)."""
    for folder in (run_dir, *(run_dir / sub for sub in RUN_SUBFOLDERS)):
        if not folder.exists():
            continue
        try:
            with tempfile.TemporaryFile(dir=folder):
                pass
        except OSError as error:
            raise InputError(
                f"run folder {folder} cannot be written ({describe_os_error(error)}); a resumed "
                "run writes its checkpoints, logs and trajectories there"
            ) from None


def _make_root(root: Path) -> None:
    if root.exists() and not root.is_dir():
        raise InputError(f"run root {root} is a file, not a folder; choose another --run-root")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"run root {root}: {describe_os_error(error)}") from None


def _check_inside(root: Path, run_dir: Path) -> None:
    """The run folder's parent must be the run root itself (after resolving links and ``..``)."""
    if run_dir.resolve().parent != root.resolve():
        raise InputError(
            f"run folder {run_dir} would not be directly inside the run root {root}; "
            "give --run-name a plain folder name"
        )


def write_summary(run_dir: Path, summary: dict[str, Any]) -> None:
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
