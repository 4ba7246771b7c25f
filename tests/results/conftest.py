"""Shared by the tests of the scripts under docs/results/: loading one as a module (they are
scripts beside the results they made, not an importable package)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

RESULTS = Path(__file__).parents[2] / "docs" / "results"


@pytest.fixture
def results_script() -> Callable[[str], ModuleType]:
    """``load("vlm-quick/failure_modes.py")``: that script, imported as a module."""

    def load(relative: str) -> ModuleType:
        path = RESULTS / relative
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load
