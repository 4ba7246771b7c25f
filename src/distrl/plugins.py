"""Plug-in names: what ``env.backend``, ``policy.kind``, ``train.algo`` and ``judge.kind`` may
say, and the one place such a name becomes the object it names.

A name is one of three things:

* a built-in name (``small``, ``phonesim``, ``aride``, ``state``...), resolved to distrl's own
  implementation, imported only then (a backend's or a policy's heavy dependencies load only
  when it is chosen);
* ``module:attribute``, e.g. ``mypkg.envs:backend``: the attribute of an importable module, so
  an env, a policy, an algorithm or a judge defined outside distrl plugs in without editing it;
* the name of an installed entry point in the kind's group (``distrl.envs``, ``distrl.policies``,
  ``distrl.algos``, ``distrl.judges``), which a package declares in its ``pyproject.toml``.

What each kind's attribute must be is in docs/guide.md#plug-ins. This module imports nothing
heavy, so the config schema can check names with it.

>>> POLICIES.check("small"), POLICIES.check("mypkg.policies:make")
('small', 'mypkg.policies:make')
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from typing import Any

from distrl.errors import InputError

#: ``package.module:attribute.path`` (dotted identifiers on both sides).
_DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
_MODULE_ATTRIBUTE = re.compile(rf"^({_DOTTED}):({_DOTTED})$")


class PluginError(InputError):
    """A plug-in name that names nothing usable; the message says what is allowed."""


@dataclass(frozen=True)
class PluginKind:
    """One extension point: its config key, built-ins and entry-point group."""

    key: str
    group: str
    #: Built-in name -> ``module:attribute`` of distrl's implementation.
    builtins: Mapping[str, str]
    #: A plug-in spelled out, for messages.
    example: str
    #: Name prefixes handled by a built-in of that name (``gym:ENV_ID`` -> ``gym``).
    prefixes: tuple[str, ...] = ()

    def allowed(self) -> str:
        """The sentence every refusal ends with."""
        plain = [name for name in self.builtins if name not in self.prefixes]
        forms = [*plain, *(f"{prefix}:ID" for prefix in self.prefixes)]
        return (
            f"built-in: {', '.join(forms)}; or a plug-in as module:attribute "
            f"(e.g. {self.example}) or an entry point of group {self.group!r}"
        )

    def check(self, name: str) -> str:
        """``name`` if it has one of the allowed forms (a module:attribute is not imported
        here: the config may be checked on a machine without the plug-in), else ValueError."""
        if name in self.prefixes:
            raise ValueError(f"{name!r} needs what it names after a colon ({name}:...)")
        if name in self.builtins or self._prefix(name) or _MODULE_ATTRIBUTE.match(name):
            return name
        if name in _entry_points(self.group):
            return name
        raise ValueError(f"{name!r} is not a known name ({self.allowed()})")

    def _prefix(self, name: str) -> str | None:
        head, colon, rest = name.partition(":")
        return head if colon and rest and head in self.prefixes else None

    def resolve(self, name: str) -> Any:
        """The object ``name`` stands for (a prefixed name resolves to its built-in)."""
        prefix = self._prefix(name)
        if prefix is not None:
            return _load(self.builtins[prefix], self.key, name)
        if name in self.builtins:
            return _load(self.builtins[name], self.key, name)
        points = _entry_points(self.group)
        if name in points:
            try:
                return points[name].load()
            except (ImportError, AttributeError) as error:
                raise PluginError(
                    f"{self.key}={name}: entry point {points[name].value!r} of group "
                    f"{self.group!r} cannot be loaded ({type(error).__name__}: {error})"
                ) from None
        if _MODULE_ATTRIBUTE.match(name):
            return _load(name, self.key, name)
        raise PluginError(f"{self.key}={name!r} is not a known name ({self.allowed()})")


def _load(target: str, key: str, name: str) -> Any:
    module_name, _, attribute = target.partition(":")
    try:
        found: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name is not None and module_name.startswith(error.name):
            raise PluginError(
                f"{key}={name}: no module {error.name!r} to import (is it installed, or its "
                "folder on PYTHONPATH?)"
            ) from None
        raise  # the plug-in's own import failed: its traceback is what its author needs
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise PluginError(f"{key}={name}: module {module_name!r} has no {attribute!r}")
        found = getattr(found, part)
    return found


@cache
def _entry_points(group: str) -> dict[str, Any]:
    return {point.name: point for point in entry_points(group=group)}


ENV_BACKENDS = PluginKind(
    key="env.backend",
    group="distrl.envs",
    builtins={
        "phonesim": "distrl.envs.backends:PHONESIM",
        "android": "distrl.envs.backends:ANDROID",
        "miniwob": "distrl.envs.backends:MINIWOB",
        "gym": "distrl.envs.gym_backend:GYM",
    },
    example="mypkg.envs:backend",
    prefixes=("gym",),
)
POLICIES = PluginKind(
    key="policy.kind",
    group="distrl.policies",
    builtins={
        "small": "distrl.policies.builtin:small_policy",
        "vlm": "distrl.runtime.components:vlm_policy",
    },
    example="mypkg.policies:make_policy",
)
ALGORITHMS = PluginKind(
    key="train.algo",
    group="distrl.algos",
    builtins={
        "aride": "distrl.algos.registry:aride",
        "digirl": "distrl.algos.registry:digirl",
        "fbc": "distrl.algos.registry:filtered_bc",
    },
    example="mypkg.algos:make_algorithm",
)
JUDGES = PluginKind(
    key="judge.kind",
    group="distrl.judges",
    builtins={
        "state": "distrl.judges.factory:state_judge",
        "vlm": "distrl.judges.factory:vlm_judge",
    },
    example="mypkg.judges:make_judge",
)
