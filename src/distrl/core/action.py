"""The Android-in-the-Wild action space and its one canonical text form.

An LLM policy emits text, so the text form is the contract between a model and a device. The
parser below never executes anything and never raises: any string becomes either a valid
:class:`Action` or an ``INVALID`` action that carries the reason, so a malformed model output is
penalised by the reward, not turned into a crash.

Canonical form (the AitW "Action Decision" form, one line)::

    Action Decision: "action_type": "DUAL_POINT", "touch_point": "[0.5000, 0.2500]", \
"lift_point": "[0.5000, 0.2500]", "typed_text": ""

Points are ``[y, x]`` normalised to [0, 1] with four decimals, as in AitW. ``typed_text`` is a JSON
string, so quotes, backslashes and newlines survive the round trip.
"""

from __future__ import annotations

import enum
import json
import math
import re
from dataclasses import dataclass

COORD_DECIMALS = 4
#: Two points closer than this (normalised distance) make a tap rather than a swipe, as in AitW.
TAP_DISTANCE = 0.04
MAX_TYPED_TEXT = 512


class ActionType(str, enum.Enum):
    """The seven AitW action types plus ``INVALID`` for text that did not parse."""

    DUAL_POINT = "DUAL_POINT"
    TYPE = "TYPE"
    PRESS_BACK = "PRESS_BACK"
    PRESS_HOME = "PRESS_HOME"
    PRESS_ENTER = "PRESS_ENTER"
    STATUS_TASK_COMPLETE = "STATUS_TASK_COMPLETE"
    STATUS_TASK_IMPOSSIBLE = "STATUS_TASK_IMPOSSIBLE"
    INVALID = "INVALID"


VALID_ACTION_TYPES = tuple(t for t in ActionType if t is not ActionType.INVALID)
_NO_POINT = (-1.0, -1.0)


def _round_point(point: tuple[float, float]) -> tuple[float, float]:
    return (round(float(point[0]), COORD_DECIMALS), round(float(point[1]), COORD_DECIMALS))


@dataclass(frozen=True)
class Action:
    """One device action.

    Build actions with the class methods (``Action.tap(y, x)``, ``Action.type_text("hi")``...):
    they round coordinates to the canonical precision, so ``parse_action(format_action(a)) == a``.

    >>> parse_action(format_action(Action.tap(0.5, 0.25))) == Action.tap(0.5, 0.25)
    True
    """

    action_type: ActionType
    touch_yx: tuple[float, float] = _NO_POINT
    lift_yx: tuple[float, float] = _NO_POINT
    text: str = ""
    #: Why an ``INVALID`` action is invalid; empty otherwise.
    invalid_reason: str = ""

    # -- constructors -------------------------------------------------------------------------
    @classmethod
    def dual_point(cls, touch_yx: tuple[float, float], lift_yx: tuple[float, float]) -> Action:
        for value in (*touch_yx, *lift_yx):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"DUAL_POINT coordinates must lie in [0, 1], got {value!r}")
        return cls(ActionType.DUAL_POINT, _round_point(touch_yx), _round_point(lift_yx))

    @classmethod
    def tap(cls, y: float, x: float) -> Action:
        return cls.dual_point((y, x), (y, x))

    @classmethod
    def swipe(cls, touch_yx: tuple[float, float], lift_yx: tuple[float, float]) -> Action:
        return cls.dual_point(touch_yx, lift_yx)

    @classmethod
    def type_text(cls, text: str) -> Action:
        if not text or len(text) > MAX_TYPED_TEXT:
            raise ValueError(f"TYPE text must have 1 to {MAX_TYPED_TEXT} characters")
        if not _is_unicode_text(text):
            # A lone surrogate cannot be typed, tokenised or written as UTF-8 (Parquet, logs).
            raise ValueError("TYPE text must be valid Unicode (it contains a lone surrogate)")
        return cls(ActionType.TYPE, text=text)

    @classmethod
    def press_back(cls) -> Action:
        return cls(ActionType.PRESS_BACK)

    @classmethod
    def press_home(cls) -> Action:
        return cls(ActionType.PRESS_HOME)

    @classmethod
    def press_enter(cls) -> Action:
        return cls(ActionType.PRESS_ENTER)

    @classmethod
    def complete(cls) -> Action:
        return cls(ActionType.STATUS_TASK_COMPLETE)

    @classmethod
    def impossible(cls) -> Action:
        return cls(ActionType.STATUS_TASK_IMPOSSIBLE)

    @classmethod
    def invalid(cls, reason: str) -> Action:
        return cls(ActionType.INVALID, invalid_reason=reason)

    # -- properties ---------------------------------------------------------------------------
    @property
    def is_valid(self) -> bool:
        return self.action_type is not ActionType.INVALID

    @property
    def is_tap(self) -> bool:
        """A DUAL_POINT whose two points are within :data:`TAP_DISTANCE` of each other."""
        if self.action_type is not ActionType.DUAL_POINT:
            return False
        return math.dist(self.touch_yx, self.lift_yx) <= TAP_DISTANCE

    @property
    def is_status(self) -> bool:
        return self.action_type in (
            ActionType.STATUS_TASK_COMPLETE,
            ActionType.STATUS_TASK_IMPOSSIBLE,
        )


def _is_unicode_text(text: str) -> bool:
    """False when ``text`` holds lone surrogates, which have no UTF-8 encoding."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _json_literal(value: str, *, ensure_ascii: bool) -> str:
    """``value`` as a JSON string literal that never contains the decision marker.

    The parser takes the *last* ``Action Decision:`` in the output, so a typed text (or invalid
    reason) containing the marker would hijack the parse. Writing the marker's colon as the JSON
    escape ``\\u003a`` leaves the decoded value unchanged and hides the marker from that search.
    """
    literal = json.dumps(value, ensure_ascii=ensure_ascii)
    return literal.replace(_DECISION_MARKER, _DECISION_MARKER[:-1] + "\\u003a")


def _format_point(point: tuple[float, float]) -> str:
    return f"[{point[0]:.{COORD_DECIMALS}f}, {point[1]:.{COORD_DECIMALS}f}]"


def format_action(action: Action) -> str:
    """The canonical one-line text of ``action`` (what an LLM policy is trained to emit)."""
    if not action.is_valid:
        # An invalid action has no canonical form of its own; write it so that it parses back to
        # an invalid action with the same reason.
        return f"Action Decision: INVALID {_json_literal(action.invalid_reason, ensure_ascii=True)}"
    touch, lift = action.touch_yx, action.lift_yx
    if action.action_type is not ActionType.DUAL_POINT:
        touch = lift = _NO_POINT
    text = action.text if action.action_type is ActionType.TYPE else ""
    return (
        f'Action Decision: "action_type": "{action.action_type.value}", '
        f'"touch_point": "{_format_point(touch)}", '
        f'"lift_point": "{_format_point(lift)}", '
        f'"typed_text": {_json_literal(text, ensure_ascii=False)}'
    )


_DECISION_MARKER = "Action Decision:"
_TYPE_RE = re.compile(r'"action_type"\s*:\s*"([A-Za-z_]+)"')
# No ``\s*`` around the groups: they overlap ``[^\],]*`` and made matching cubic in the length
# of a run of spaces (4000 spaces took ~30 s); the coordinates are stripped when parsed instead.
_POINT_RE_TEMPLATE = r'"{name}"\s*:\s*"\[([^\],]*),([^\]]*)\]"'
_TOUCH_RE = re.compile(_POINT_RE_TEMPLATE.format(name="touch_point"))
_LIFT_RE = re.compile(_POINT_RE_TEMPLATE.format(name="lift_point"))
# A JSON string literal: quote, then any escaped char or non-quote non-backslash, then quote.
_TEXT_RE = re.compile(r'"typed_text"\s*:\s*("(?:[^"\\]|\\.)*")', re.DOTALL)
_INVALID_RE = re.compile(r'^\s*INVALID\s+("(?:[^"\\]|\\.)*")\s*$', re.DOTALL)


def _parse_coordinate(raw: str, field: str) -> float | str:
    """A float in [0, 1], or an error message naming the field."""
    try:
        value = float(raw.strip())
    except ValueError:
        return f"{field} coordinate {raw.strip()!r} is not a number"
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        return f"{field} coordinate {raw.strip()!r} is outside [0, 1]"
    return value


def _parse_point(pattern: re.Pattern[str], body: str, field: str) -> tuple[float, float] | str:
    match = pattern.search(body)
    if match is None:
        return f'missing or malformed {field} (expected "[y, x]")'
    y = _parse_coordinate(match.group(1), field)
    if isinstance(y, str):
        return y
    x = _parse_coordinate(match.group(2), field)
    if isinstance(x, str):
        return x
    return (y, x)


def _parse_json_string(literal: str) -> str | None:
    """The decoded string, or None if unreadable or if it decodes to lone surrogates (JSON allows
    ``"\\ud800"``), which no device can type and no UTF-8 sink can store."""
    try:
        value = json.loads(literal)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, str) or not _is_unicode_text(value):
        return None
    return value


def parse_action(text: object) -> Action:
    """Parse model output into an :class:`Action`; never raises, never evaluates anything.

    The text may carry anything before ``Action Decision:`` (an "Action Plan", reasoning); only
    the last decision counts. Malformed input gives ``Action.invalid(reason)``.
    """
    if not isinstance(text, str):
        return Action.invalid(f"expected a string, got {type(text).__name__}")
    marker = text.rfind(_DECISION_MARKER)
    if marker < 0:
        return Action.invalid("no 'Action Decision:' in the output")
    body = text[marker + len(_DECISION_MARKER) :]

    invalid_match = _INVALID_RE.match(body)
    if invalid_match is not None:
        reason = _parse_json_string(invalid_match.group(1))
        # An empty reason would break the promise that every INVALID action says why.
        return Action.invalid(reason or "unreadable or empty INVALID reason")

    type_match = _TYPE_RE.search(body)
    if type_match is None:
        return Action.invalid('missing "action_type"')
    type_name = type_match.group(1).upper()
    if type_name not in ActionType.__members__ or type_name == ActionType.INVALID.value:
        return Action.invalid(f"unknown action_type {type_match.group(1)!r}")
    action_type = ActionType(type_name)

    if action_type is ActionType.DUAL_POINT:
        touch = _parse_point(_TOUCH_RE, body, "touch_point")
        if isinstance(touch, str):
            return Action.invalid(touch)
        lift = _parse_point(_LIFT_RE, body, "lift_point")
        if isinstance(lift, str):
            return Action.invalid(lift)
        return Action.dual_point(touch, lift)

    if action_type is ActionType.TYPE:
        text_match = _TEXT_RE.search(body)
        if text_match is None:
            return Action.invalid('TYPE without a quoted "typed_text"')
        typed = _parse_json_string(text_match.group(1))
        if typed is None:
            return Action.invalid("typed_text is not a valid JSON string")
        if not typed:
            return Action.invalid("TYPE with empty typed_text")
        if len(typed) > MAX_TYPED_TEXT:
            return Action.invalid(f"typed_text longer than {MAX_TYPED_TEXT} characters")
        return Action.type_text(typed)

    return Action(action_type)
