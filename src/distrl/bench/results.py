"""A train bench's results folder: one file per finished (method, seed) run, written the moment
the run ends, so a bench interrupted after hours keeps every run it finished and the same command
run again does only what is left.

Layout (all JSON, each file written to a temporary name and renamed into place, so a file is
either whole or absent)::

    DIR/bench-setting.json              the setting the runs were made under (see below)
    DIR/results/seed<S>-<method>.json   one finished run: its curve, figures, diagnostics, load
    DIR/seed<S>-warm-start.pt           the seed's cloned weights and where its demos are
    DIR/seed<S>-<method>/               the run folders themselves (``distrl view`` opens them)

The setting is the bench's resolved config less what tells its runs apart (the seed) or only
says where they go (``run_root``, ``run_name``): results made under one setting are comparable,
so a folder refuses a command with another one instead of mixing them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from distrl.config.schema import RunConfig
from distrl.errors import InputError

SETTING_FILE = "bench-setting.json"
RESULTS = "results"
#: Config keys that do not make a setting: the seed (runs are keyed by it) and the location.
_NOT_SETTING = ("seed", "run_root", "run_name")


def setting_of(base: RunConfig) -> dict[str, Any]:
    """What a bench's results depend on: the resolved config less seed and location."""
    dumped = base.model_dump(mode="json")
    for key in _NOT_SETTING:
        dumped.pop(key, None)
    return dumped


def setting_digest(base: RunConfig) -> str:
    """A short name for a setting (the default results folder is named by it)."""
    text = json.dumps(setting_of(base), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def write_json_atomically(path: Path, data: Any) -> None:
    """``path`` holds ``data`` whole or is left as it was (written aside, then renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def claim_folder(folder: Path, base: RunConfig, report: dict[str, Any]) -> None:
    """Make ``folder`` the results folder of ``base``'s setting, or check that it already is;
    ``report`` (target, baseline, the bench's named setting) is what the report step reads and
    is updated by every command (it does not change what a run measures)."""
    path = folder / SETTING_FILE
    setting = setting_of(base)
    if path.exists():
        recorded = read_json(path)
        if recorded.get("config") != setting:
            changed = _first_difference(recorded.get("config", {}), setting)
            raise InputError(
                f"--results {folder} holds runs made with another setting ({changed} differs); "
                "give a new --results folder, or the command that made it"
            )
    write_json_atomically(path, {"config": setting, "report": report})


def _first_difference(old: Any, new: Any, prefix: str = "") -> str:
    """The first dotted key whose value differs between two dumped configs."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key):
                return _first_difference(old.get(key), new.get(key), f"{prefix}{key}.")
    return prefix.rstrip(".") or "the config"


def read_json(path: Path) -> dict[str, Any]:
    """A results file, or one line naming it when it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise InputError(f"{path}: not a readable bench result ({error})") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: not a bench result (a JSON object)")
    return data


def result_path(folder: Path, method: str, seed: int) -> Path:
    return folder / RESULTS / f"seed{seed}-{method}.json"


def is_done(folder: Path, method: str, seed: int) -> bool:
    """True when the (method, seed) run finished under this folder's setting."""
    return result_path(folder, method, seed).exists()


def save_result(folder: Path, record: dict[str, Any]) -> Path:
    """Keep one finished run (``record`` has at least ``method`` and ``seed``)."""
    path = result_path(folder, record["method"], record["seed"])
    write_json_atomically(path, record)
    return path


def load_results(folder: Path) -> Iterator[dict[str, Any]]:
    """Every finished run of ``folder``, by file name (seed, then method)."""
    results = folder / RESULTS
    if not (folder / SETTING_FILE).exists() or not results.is_dir():
        raise InputError(f"{folder}: not a bench train results folder (no {SETTING_FILE})")
    for path in sorted(results.glob("seed*.json")):
        record = read_json(path)
        for key in ("method", "seed", "curve"):
            if key not in record:
                raise InputError(f"{path}: not a bench result (no {key!r})")
        yield record
