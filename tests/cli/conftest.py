"""Fixtures of the command-line tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import distrl


@pytest.fixture
def child_env() -> dict[str, str]:
    """The environment of a child ``python -m distrl.cli.main``: this checkout's sources first
    on its path (the venv may hold another checkout installed editable)."""
    src = str(Path(distrl.__file__).resolve().parents[1])
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
