"""Suite-wide test settings.

Hypothesis profiles live here so that every property test draws from the same budget:

* ``dev`` (default): no per-example deadline, because the suite runs on small, shared CI boxes
  (2 cores, other test processes at once) where a timing deadline only produces flaky failures.
* ``ci``: as ``dev``, plus derandomized (the same examples every run, so a red build is
  reproducible from the log alone) and no example database (CI has no persistent ``.hypothesis``).

Pick one with ``DISTRL_HYPOTHESIS_PROFILE=ci``. The example count of the heaviest property test is
set separately, by ``DISTRL_HYPOTHESIS_EXAMPLES`` (see ``tests/core/test_action.py``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import torch
from hypothesis import settings

import distrl

if TYPE_CHECKING:
    from distrl.policies.vlm import VLMPolicy

settings.register_profile("dev", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, database=None, print_blob=True)
settings.load_profile(os.environ.get("DISTRL_HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(scope="session")
def chromium() -> None:
    """Tests that drive a real browser ask for this: without Debian's chromium and chromedriver
    they are skipped on a user's machine, but fail in CI (``DISTRL_CI=1``), where `.ci/run`
    installs both and a skip would hide a broken backend."""
    missing = [p for p in ("/usr/bin/chromium", "/usr/bin/chromedriver") if not os.path.exists(p)]
    if not missing:
        return
    message = f"needs {' and '.join(missing)} (apt-get install chromium chromium-driver)"
    if os.environ.get("DISTRL_CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
def child_env() -> dict[str, str]:
    """The environment of a child ``python -m distrl.cli.main``: this checkout's sources first
    on its path (the venv may hold another checkout installed editable)."""
    src = str(Path(distrl.__file__).resolve().parents[1])
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}


def _element_name_vlm(**settings: bool | int) -> VLMPolicy:
    """A tiny VLM that reads the element list, taps by name and decodes admissible actions
    only, its tokenizer trained on the built-in suites' train instructions; ``settings`` add
    further switches (name_placeholders, text_placeholders, mask_unseen_words, ...). Imported
    here on demand: transformers loads only for the tests that build one."""
    from distrl.config.schema import VLMPolicyConfig
    from distrl.envs.phonesim.tasks.suites import suite_instructions
    from distrl.policies.vlm import VLMPolicy

    torch.set_num_threads(1)
    config = VLMPolicyConfig(
        tiny=True,
        element_list=True,
        element_reference="name",
        admissible_actions=True,
        max_new_tokens=24,
        **settings,
    )
    return VLMPolicy(config, suite_instructions())


@pytest.fixture(scope="session")
def element_name_vlm() -> Callable[..., VLMPolicy]:
    """:func:`_element_name_vlm`, for tests that choose the VLM's further switches."""
    return _element_name_vlm
