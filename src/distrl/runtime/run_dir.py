"""Run folders: every command that produces data writes it under one folder per run.

Layout: ``<run_root>/<name>/config.yaml`` (the resolved config), ``trajectories/`` (Parquet
shards), ``summary.json`` (the figures the command printed).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from distrl.config.loader import config_to_yaml
from distrl.config.schema import RunConfig


def create_run_dir(cfg: RunConfig, command: str) -> Path:
    """A new, empty run folder for ``command`` with the resolved config saved in it."""
    root = Path(cfg.run_root)
    name = cfg.run_name or f"{command}-{time.strftime('%Y%m%d-%H%M%S')}"
    run_dir = root / name
    suffix = 1
    while run_dir.exists():
        suffix += 1
        run_dir = root / f"{name}-{suffix}"
    run_dir.mkdir(parents=True)
    (run_dir / "config.yaml").write_text(config_to_yaml(cfg), encoding="utf-8")
    return run_dir


def write_summary(run_dir: Path, summary: dict[str, Any]) -> None:
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
