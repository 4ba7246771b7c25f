"""Optional dependencies: imported only when a feature needs them, named when they are missing.

The core install (PhoneSim, the small policy, the serial runtime) needs none of these; each
feature that does imports its package through :func:`require`, so a missing one ends the command
in one line naming the pip command that installs it, not in a ``ModuleNotFoundError`` traceback.

>>> EXTRAS["ray"]
('ray',)
"""

from __future__ import annotations

import importlib
from types import ModuleType

from distrl.errors import InputError

#: Extra name -> the top-level modules it installs (pyproject.toml's optional-dependencies).
EXTRAS: dict[str, tuple[str, ...]] = {
    "ray": ("ray",),
    "android": ("adbutils",),
    "miniwob": ("miniwob", "selenium"),
    "vlm": ("transformers", "peft", "tokenizers"),
    "judge": ("openai",),
    "wandb": ("wandb",),
}


class MissingExtra(InputError):
    """A feature was asked for whose optional dependencies are not installed."""


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Import ``module`` for ``feature`` (e.g. ``"--runtime ray"``), or raise
    :class:`MissingExtra` naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        missing = error.name or module
        if missing.split(".")[0] not in {name.split(".")[0] for name in EXTRAS[extra]}:
            raise  # the extra is there; something inside it is broken: that traceback helps
        raise MissingExtra(
            f"{feature} needs the '{extra}' extra: pip install 'distrl[{extra}]'"
        ) from None
