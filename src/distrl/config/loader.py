"""Build a :class:`RunConfig` from a YAML preset plus ``key=value`` overrides, with one-line errors.

A run is configured the same way from the CLI and from Python: pick a preset (a name from the
package's ``configs/`` folder or a path to a YAML file), then override dotted keys::

    cfg = load_config("webshop", ["play.episodes=5", "env.phonesim.dynamics.ads=false"])

Every failure is a :class:`ConfigError` whose message is one line naming the key, the bad value and
what would be accepted. The messages are derived from pydantic's ``ValidationError`` (error type,
location, context) and the schema's own field metadata, never from per-field checks here, so a new
field gets good messages for free.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterable, Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from distrl.config.renames import RenameConflict, current_key, migrate_mapping
from distrl.config.schema import RunConfig

__all__ = [
    "ConfigError",
    "apply_overrides",
    "available_presets",
    "config_fields",
    "config_to_yaml",
    "load_config",
]

ConfigT = TypeVar("ConfigT", bound=BaseModel)

_PRESET_PACKAGE = "distrl"
_PRESET_FOLDER = "configs"
_YAML_SUFFIXES = (".yaml", ".yml")

# What pydantic's type errors expected, in words a config author uses. Keyed by error type.
_EXPECTED_BY_ERROR_TYPE: dict[str, str] = {
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_parsing_size": "an integer of reasonable size",
    "int_from_float": "a whole number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "string_unicode": "a string",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}

_BOUND_SYMBOLS: dict[str, str] = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}
_RANGE_ERROR_TYPES = frozenset(
    {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}
)


class ConfigError(ValueError):
    """A configuration problem, told in one line: the key, the bad value, what is allowed.

    ``key`` is the dotted key at fault (``None`` when the problem is not about one key, such as an
    unreadable file). ``str(error)`` never spans lines, so a CLI can print it as-is.

    >>> try:
    ...     load_config(overrides=["play.episodes=0"])
    ... except ConfigError as error:
    ...     print(error)
    config key 'play.episodes' = 0 is out of range (must be >= 1 and <= 1000000)
    """

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(_one_line(message))
        self.key = key

    @classmethod
    def from_validation_error(
        cls,
        error: ValidationError,
        model: type[BaseModel] = RunConfig,
        prefix: Sequence[str | int] = (),
        source: str | None = None,
    ) -> ConfigError:
        """Translate a pydantic ``ValidationError`` raised while validating ``model``.

        ``prefix`` is the location of ``model`` inside the full config (so an error in a
        sub-section still names the full dotted key); ``source`` (e.g. a file name) is appended so
        the user knows where to look. Several problems are joined on one line with ``"; "``.
        """
        problems: list[str] = []
        first_key: str | None = None
        for detail in error.errors(include_url=False):
            loc = tuple(detail["loc"])
            message = _describe(detail, model, tuple(prefix), loc)
            problems.append(message)
            if first_key is None:
                first_key = _dotted(tuple(prefix) + loc)
        message = "; ".join(problems)
        if source:
            message = f"{message} (in {source})"
        return cls(message, key=first_key)


def available_presets() -> list[str]:
    """Names of the presets shipped in ``distrl/configs/`` (file names without ``.yaml``)."""
    folder = resources.files(_PRESET_PACKAGE).joinpath(_PRESET_FOLDER)
    return sorted(
        entry.name.rsplit(".", 1)[0]
        for entry in folder.iterdir()
        if entry.is_file() and entry.name.endswith(_YAML_SUFFIXES)
    )


def load_config(preset: str | Path | None = None, overrides: Sequence[str] = ()) -> RunConfig:
    """Load a preset (name or YAML path; ``None`` means ``"default"``) and apply overrides.

    The preset is validated on its own first so a bad key in a file is reported with the file's
    name; overrides are then applied on top and the result validated again.

    >>> load_config("webshop", ["play.episodes=3"]).env.suite
    'webshop'
    """
    raw, source = _read_preset("default" if preset is None else preset)
    _migrate(raw, source)
    try:
        RunConfig.model_validate(raw)
    except ValidationError as error:
        raise ConfigError.from_validation_error(error, RunConfig, source=source) from None
    for key, value in _parse_overrides(overrides):
        _set_dotted(raw, key, value)
    return _validate(RunConfig, raw)


def apply_overrides(cfg: ConfigT, overrides: Sequence[str]) -> ConfigT:
    """Return a copy of ``cfg`` with ``key=value`` overrides applied; ``cfg`` is left unchanged.

    Values are parsed as YAML (``true``, ``3``, ``0.5``, ``null``; anything else stays a string).
    A mapping value (``env.phonesim.dynamics={ads: false}``) is merged into that section, not a
    replacement of it, so the section's other settings survive.

    >>> apply_overrides(RunConfig(), ["env.phonesim.dynamics.ads=false"]).env.phonesim.dynamics.ads
    False
    """
    raw = cfg.model_dump(mode="python")
    for key, value in _parse_overrides(overrides):
        _set_dotted(raw, key, value)
    return _validate(type(cfg), raw)


def config_fields(
    model: type[BaseModel] = RunConfig, prefix: str = ""
) -> Iterator[tuple[str, FieldInfo]]:
    """Every leaf setting of ``model`` as (dotted key, pydantic field), sections walked into:
    what a config author can set, for documentation and for tests that cover every key.

    >>> dict(config_fields())["train.batch_size"].default
    32
    """
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        section = _model_in(field.annotation)
        if section is not None:
            yield from config_fields(section, key + ".")
        else:
            yield key, field


def config_to_yaml(cfg: BaseModel) -> str:
    """Render the fully resolved config as YAML, every value spelled out.

    A run folder saves this so the run can be reproduced with ``load_config(path)`` even after
    the defaults in the code change.
    """
    return yaml.safe_dump(
        cfg.model_dump(mode="json"), sort_keys=False, default_flow_style=False, allow_unicode=True
    )


# --- presets and overrides ----------------------------------------------------------------------


def _read_preset(preset: str | Path) -> tuple[dict[str, Any], str]:
    """Resolve ``preset`` to a file and parse it; returns the mapping and a name for messages.

    A ``Path``, or a string that names an existing file or contains a path separator, is a file;
    otherwise the string is a preset name (with or without ``.yaml``).
    """
    if isinstance(preset, str):
        looks_like_path = "/" in preset or "\\" in preset or Path(preset).is_file()
        if not looks_like_path:
            return _read_packaged_preset(preset)
    path = Path(preset)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise ConfigError(f"config file '{path}' cannot be read ({reason})") from None
    except UnicodeDecodeError as error:
        line = error.object[: error.start].count(b"\n") + 1
        raise ConfigError(
            f"config file '{path}' is not UTF-8 text (byte {error.object[error.start]:#04x} on "
            f"line {line}); save it as UTF-8"
        ) from None
    return _parse_yaml_mapping(text, f"config file '{path}'"), f"config file '{path}'"


def _read_packaged_preset(name: str) -> tuple[dict[str, Any], str]:
    stem = name[: -len(suffix)] if (suffix := _matching_suffix(name)) else name
    folder = resources.files(_PRESET_PACKAGE).joinpath(_PRESET_FOLDER)
    for candidate_suffix in _YAML_SUFFIXES:
        entry = folder.joinpath(stem + candidate_suffix)
        if entry.is_file():
            source = f"preset '{stem}'"
            return _parse_yaml_mapping(entry.read_text(encoding="utf-8"), source), source
    presets = available_presets()
    hint = _did_you_mean(stem, presets)
    raise ConfigError(
        f"config preset '{name}' is unknown "
        f"(available: {', '.join(presets)}; or give a path to a YAML file){hint}"
    )


def _matching_suffix(name: str) -> str | None:
    return next((suffix for suffix in _YAML_SUFFIXES if name.endswith(suffix)), None)


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, but a key given twice in one mapping is an error: plain PyYAML keeps
    the last value silently, so a preset that sets ``episodes`` twice would run with whichever
    came last and nobody would know."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)  # type: ignore[no-untyped-call]
            if isinstance(key, typing.Hashable) and key in seen:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"key {key!r} appears twice (first on line {seen[key].start_mark.line + 1})",
                    key_node.start_mark,
                )
            if isinstance(key, typing.Hashable):
                seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


def _parse_yaml_mapping(text: str, source: str) -> dict[str, Any]:
    """Parse YAML text whose top level must be a mapping of sections (empty means defaults)."""
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 (a SafeLoader subclass)
    except yaml.YAMLError as error:
        raise ConfigError(f"{source} is not valid YAML: {_yaml_error_summary(error)}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source} must hold a mapping of config keys at the top level, "
            f"not {_kind_of(data)} (e.g. 'play:' then '  episodes: 5')"
        )
    return data


def _yaml_error_summary(error: yaml.YAMLError) -> str:
    """'line N: problem' from a PyYAML error (marks are 0-based; people count from 1)."""
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    problem = getattr(error, "problem", None) or str(error)
    context = getattr(error, "context", None)
    what = f"{problem} ({context})" if context else str(problem)
    if mark is None:
        return what
    return f"line {mark.line + 1}, column {mark.column + 1}: {what}"


def _parse_overrides(overrides: Sequence[str] | str) -> list[tuple[str, Any]]:
    """Split ``key=value`` strings; a bare string is one override, not a sequence of characters."""
    items: Iterable[str] = (overrides,) if isinstance(overrides, str) else overrides
    parsed: list[tuple[str, Any]] = []
    for item in items:
        key, sep, text = str(item).partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"config override '{item}' is not key=value (e.g. play.episodes=5)")
        parts = key.split(".")
        if any(not part.strip() for part in parts):
            raise ConfigError(
                f"config override '{item}' has an empty part in key '{key}' (e.g. play.episodes=5)"
            )
        dotted = current_key(".".join(part.strip() for part in parts))
        parsed.append((dotted, _parse_value(text.strip())))
    return parsed


def _parse_value(text: str) -> Any:
    """YAML-parse an override value; text that is not valid YAML is kept as a plain string."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def _set_dotted(raw: dict[str, Any], key: str, value: Any) -> None:
    """Set ``a.b.c`` in nested dicts, creating sections as needed and merging mapping values."""
    parts = key.split(".")
    node = raw
    for depth, part in enumerate(parts[:-1]):
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        elif not isinstance(child, dict):
            section = ".".join(parts[: depth + 1])
            raise ConfigError(
                f"config key '{section}' = {_show(child)} is not a section, "
                f"so '{key}' cannot be set",
                key=key,
            )
        node = child
    last = parts[-1]
    if isinstance(value, dict) and isinstance(node.get(last), dict):
        for sub_key, sub_value in value.items():
            _set_dotted(node, f"{last}.{sub_key}", sub_value)
    else:
        node[last] = value


def _migrate(raw: dict[str, Any], source: str) -> None:
    """Move renamed keys (``config/renames.py``) to their new names in a parsed file."""
    try:
        migrate_mapping(raw, source)
    except RenameConflict as conflict:
        raise ConfigError(str(conflict), key=conflict.key) from None


def _validate(model: type[ConfigT], raw: Mapping[str, Any]) -> ConfigT:
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        raise ConfigError.from_validation_error(error, model) from None


# --- turning pydantic errors into sentences -----------------------------------------------------


def _describe(
    detail: Mapping[str, Any],
    model: type[BaseModel],
    prefix: tuple[str | int, ...],
    loc: tuple[str | int, ...],
) -> str:
    """One sentence for one pydantic error detail, using the schema to name what is allowed."""
    error_type = str(detail["type"])
    key = _dotted(prefix + loc) or "<config>"
    value = detail.get("input")
    ctx: Mapping[str, Any] = detail.get("ctx") or {}
    owner = _section_at(model, loc[:-1])
    field = _field_at(model, loc)

    if error_type in ("extra_forbidden", "no_such_attribute"):
        allowed = list(owner.model_fields) if owner is not None else []
        hint = _did_you_mean(str(loc[-1]), allowed) if loc else ""
        return f"config key '{key}' is unknown (allowed: {', '.join(allowed)}){hint}"
    if error_type == "literal_error":
        choices = _literal_choices(field) or [str(ctx.get("expected", "?"))]
        return f"config key '{key}' = {_show(value)} is not allowed (allowed: {', '.join(choices)})"
    if error_type in _RANGE_ERROR_TYPES:
        bounds = _range_words(field) or _range_words_from_ctx(ctx)
        return f"config key '{key}' = {_show(value)} is out of range (must be {bounds})"
    if error_type == "missing":
        return f"config key '{key}' is missing (it is required)"
    if error_type in ("string_too_long", "too_long"):
        limit = ctx.get("max_length", "?")
        unit = "characters" if error_type == "string_too_long" else "items"
        return f"config key '{key}' = {_show(value)} is too long (at most {limit} {unit})"
    if error_type in ("string_too_short", "too_short"):
        return f"config key '{key}' = {_show(value)} is too short or empty"
    if error_type == "value_error":
        # A validator's own sentence; for a whole section the value would only repeat it.
        reason = str(detail.get("msg", "")).removeprefix("Value error, ")
        if _section_at(model, loc) is not None:
            return f"config section '{key}' is invalid: {reason}"
        return f"config key '{key}' = {_show(value)} is invalid: {reason}"
    if error_type in _EXPECTED_BY_ERROR_TYPE:
        expected = _EXPECTED_BY_ERROR_TYPE[error_type]
        section = _section_at(model, loc)
        if section is not None:
            expected = f"a section with keys: {', '.join(section.model_fields)}"
        if field is not None and _allows_none(field):
            expected += " or null"
        return f"config key '{key}' = {_show(value)} has the wrong type (expected {expected})"
    return f"config key '{key}' = {_show(value)} is invalid ({detail.get('msg', error_type)})"


def _section_at(model: type[BaseModel], loc: Sequence[str | int]) -> type[BaseModel] | None:
    """The section model at ``loc`` inside ``model`` (``model`` itself for an empty ``loc``)."""
    current: type[BaseModel] | None = model
    for part in loc:
        if current is None or not isinstance(part, str) or part not in current.model_fields:
            return None
        current = _model_in(current.model_fields[part].annotation)
    return current


def _field_at(model: type[BaseModel], loc: Sequence[str | int]) -> FieldInfo | None:
    if not loc or not isinstance(loc[-1], str):
        return None
    owner = _section_at(model, loc[:-1])
    return owner.model_fields.get(loc[-1]) if owner is not None else None


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The section model an annotation holds, directly or inside ``X | None``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if _is_union(annotation):
        for arg in typing.get_args(annotation):
            found = _model_in(arg)
            if found is not None:
                return found
    return None


def _is_union(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    return origin is typing.Union or origin is types.UnionType


def _allows_none(field: FieldInfo) -> bool:
    return _is_union(field.annotation) and type(None) in typing.get_args(field.annotation)


def _literal_choices(field: FieldInfo | None) -> list[str]:
    if field is None:
        return []
    annotation = field.annotation
    candidates = typing.get_args(annotation) if _is_union(annotation) else (annotation,)
    return [
        str(choice)
        for candidate in candidates
        if typing.get_origin(candidate) is Literal
        for choice in typing.get_args(candidate)
    ]


def _range_words(field: FieldInfo | None) -> str:
    """Both bounds of a field (pydantic reports only the one violated), e.g. '>= 0 and <= 1'."""
    if field is None:
        return ""
    # Field(ge=..., le=...) stores annotated-types constraints whose attribute is the bound's name.
    bounds = {
        name: getattr(constraint, name)
        for constraint in field.metadata
        for name in _BOUND_SYMBOLS
        if getattr(constraint, name, None) is not None
    }
    return _bound_words(bounds)


def _range_words_from_ctx(ctx: Mapping[str, Any]) -> str:
    return _bound_words({name: ctx[name] for name in _BOUND_SYMBOLS if name in ctx})


def _bound_words(bounds: Mapping[str, Any]) -> str:
    words = [f"{_BOUND_SYMBOLS[name]} {_show(bound)}" for name, bound in bounds.items()]
    return " and ".join(words) or "within the allowed range"


# --- small formatting helpers -------------------------------------------------------------------


def _dotted(loc: Sequence[str | int]) -> str:
    """('env', 'phonesim', 'width') -> 'env.phonesim.width'; list indices become '[i]'."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _show(value: Any, limit: int = 60) -> str:
    """A value as a config author wrote it: YAML spellings for bools/null, quotes on strings."""
    if value is None:
        text = "null"
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        text = str(int(value))  # bounds like ge=0.0 read better as '>= 0'
    elif isinstance(value, (int, float, str)):
        text = repr(value)
    else:
        text = yaml.safe_dump(value, default_flow_style=True, width=10**6).strip()
        if text.endswith("..."):
            text = text[:-3].strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _kind_of(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    return f"a {type(value).__name__}"


def _did_you_mean(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def _one_line(message: str) -> str:
    """Collapse any line breaks (from YAML errors or reprs) so every ConfigError is one line."""
    return " ".join(line.strip() for line in message.splitlines() if line.strip())
