"""Config keys that were renamed, so a run folder's ``config.yaml`` written before the rename
still loads (``distrl train --resume RUN`` reads it) and an old ``key=value`` still works.

Each rename moves the old key's value to the new key and logs one warning naming both; giving
the old and the new key together is an error, because there is no telling which was meant.
The table is the only place that knows the old names (docs/design.md §11, the glossary, says
why they changed).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

__all__ = ["RENAMED_KEYS", "RenameConflict", "current_key", "migrate_mapping"]

#: Old dotted key (or section) -> its new name.
RENAMED_KEYS: Mapping[str, str] = {
    "evaluator": "judge",
    "play.save_screens": "play.save_screenshots",
}

_log = logging.getLogger(__name__)


class RenameConflict(ValueError):
    """A mapping sets a key under its old and its new name (the loader reports it as a
    ``ConfigError`` naming ``key``)."""

    def __init__(self, message: str, key: str) -> None:
        super().__init__(message)
        self.key = key


def current_key(key: str, source: str = "config override") -> str:
    """``key`` under its current name (a key inside a renamed section is renamed with it),
    warning once when it was an old name.

    >>> current_key("play.episodes")
    'play.episodes'
    """
    for old, new in RENAMED_KEYS.items():
        if key == old or key.startswith(old + "."):
            renamed = new + key[len(old) :]
            _log.warning("%s: key '%s' is now '%s'", source, key, renamed)
            return renamed
    return key


def migrate_mapping(raw: dict[str, Any], source: str) -> dict[str, Any]:
    """Move every renamed key of a parsed config mapping (nested sections) to its new name, in
    place, and return the mapping."""
    for old, new in RENAMED_KEYS.items():
        old_parent, old_leaf = _parent(raw, old)
        if old_parent is None or old_leaf not in old_parent:
            continue
        new_parent, new_leaf = _parent(raw, new, create=True)
        assert new_parent is not None  # created
        if new_leaf in new_parent:
            raise RenameConflict(
                f"{source} sets both '{old}' (its old name) and '{new}'; keep only '{new}'", new
            )
        new_parent[new_leaf] = old_parent.pop(old_leaf)
        _log.warning("%s: key '%s' is now '%s'", source, old, new)
    return raw


def _parent(
    raw: dict[str, Any], dotted: str, create: bool = False
) -> tuple[dict[str, Any] | None, str]:
    """The mapping that holds ``dotted``'s last part (None when a section on the way is
    missing or is not a mapping), and that last part."""
    *sections, leaf = dotted.split(".")
    node: Any = raw
    for section in sections:
        if not isinstance(node, dict):
            return None, leaf
        if section not in node and create:
            node[section] = {}
        node = node.get(section)
    return (node if isinstance(node, dict) else None), leaf
