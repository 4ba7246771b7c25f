"""Tests for the action space and its canonical text form (``distrl.core.action``).

The parser is the boundary between free model output and a device, so it gets property tests:
every constructor-built action survives a format/parse round trip, and no string, however broken,
makes ``parse_action`` raise or return an action that is neither valid nor explained.
"""

from __future__ import annotations

import math
import os
import time

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from distrl.core.action import (
    MAX_TYPED_TEXT,
    TAP_DISTANCE,
    VALID_ACTION_TYPES,
    Action,
    ActionType,
    format_action,
    parse_action,
)

# The issue requires the suite's longest property test to try at least 10k generated strings; this
# is that test's budget. Lower it locally for a quick run (DISTRL_HYPOTHESIS_EXAMPLES=500) or
# raise it for a soak run. At 10k the whole file takes a few seconds on 2 cores.
NEVER_RAISES_EXAMPLES = int(os.environ.get("DISTRL_HYPOTHESIS_EXAMPLES", "10000"))

MARKER = "Action Decision:"

# -- strategies ------------------------------------------------------------------------------------

coordinates = st.floats(min_value=0.0, max_value=1.0, allow_nan=False, allow_infinity=False)
points = st.tuples(coordinates, coordinates)

# Characters that break naive quoting or would be dangerous if anything ever reached a shell, plus
# emoji (astral plane, multi-code-point sequences); mixed with arbitrary (non-surrogate) Unicode.
_NASTY = ['"', "'", "\\", "\n", "\r", "\t", ";", "&", "|", "$", "(", ")", "`", "[", "]", ","]
_NASTY += ["\u0000", "😀", "👍🏽", "👨‍👩‍👧", "é", "ß", "中"]
# Any code point that has a UTF-8 encoding: lone surrogates are not text a device can type, and
# ``Action.type_text`` rejects them.
_unicode_chars = st.characters(codec="utf-8")
# Pieces, not an alphabet: some emoji are several code points (skin tone, ZWJ family).
_typed_pieces = st.lists(st.one_of(_unicode_chars, st.sampled_from(_NASTY)), max_size=100)
typed_texts = st.one_of(
    _typed_pieces.map("".join).filter(bool).map(lambda t: t[:100]),
    # A typed text that itself contains the decision marker once hijacked the parse (regression).
    _typed_pieces.map("".join).map(lambda t: (t + MARKER + t)[:100]),
)

valid_actions = st.one_of(
    st.builds(Action.tap, coordinates, coordinates),
    st.builds(Action.swipe, points, points),
    st.builds(Action.dual_point, points, points),
    st.builds(Action.type_text, typed_texts),
    st.sampled_from(
        [
            Action.press_back(),
            Action.press_home(),
            Action.press_enter(),
            Action.complete(),
            Action.impossible(),
        ]
    ),
)
any_actions = st.one_of(valid_actions, st.builds(Action.invalid, st.text(min_size=1, max_size=50)))

# Insertions biased towards the characters the grammar cares about, so mutations often produce
# near-miss strings (a dropped quote, a doubled comma) rather than only obvious garbage.
_syntax_text = st.text(alphabet='"[],:.\\-+ 0123456789eEnaifINVALID_', max_size=4)
_insertions = st.one_of(_syntax_text, st.text(max_size=4), st.sampled_from([MARKER, "nan", "1e9"]))


@st.composite
def mutated_canonical(draw: st.DrawFn) -> str:
    """A canonical action string with a few random insertions and deletions."""
    text = format_action(draw(any_actions))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        position = draw(st.integers(min_value=0, max_value=len(text)))
        if draw(st.booleans()):
            text = text[:position] + draw(_insertions) + text[position:]
        else:
            end = draw(st.integers(min_value=position, max_value=min(len(text), position + 8)))
            text = text[:position] + text[end:]
    return text


model_outputs = st.one_of(
    st.text(),
    st.text().map(lambda t: MARKER + t),
    st.text().map(lambda t: f"{MARKER} {t}"),
    st.tuples(st.text(max_size=20), mutated_canonical()).map("\n".join),
    mutated_canonical(),
)


def assert_well_formed(action: Action) -> None:
    """What every parse result must satisfy: a valid action that its constructors could have
    built, or an INVALID action that says why."""
    assert isinstance(action, Action)
    if not action.is_valid:
        assert isinstance(action.invalid_reason, str)
        assert action.invalid_reason, "an INVALID action must carry a reason"
        return
    assert action.action_type in VALID_ACTION_TYPES
    assert action.invalid_reason == ""
    if action.action_type is ActionType.DUAL_POINT:
        for value in (*action.touch_yx, *action.lift_yx):
            assert math.isfinite(value)
            assert 0.0 <= value <= 1.0
    if action.action_type is ActionType.TYPE:
        assert 1 <= len(action.text) <= MAX_TYPED_TEXT
        action.text.encode("utf-8")  # no lone surrogates


# -- properties ------------------------------------------------------------------------------------


@given(valid_actions)
@settings(max_examples=500)
def test_round_trip_of_constructor_built_actions(action: Action) -> None:
    text = format_action(action)
    assert "\n" not in text, "the canonical form is one line"
    assert text.count(MARKER) == 1, "typed text must not add a second decision marker"
    assert parse_action(text) == action


@given(st.builds(Action.invalid, st.text(min_size=1, max_size=100)))
@settings(max_examples=200)
def test_round_trip_of_invalid_actions(action: Action) -> None:
    assert parse_action(format_action(action)) == action


@given(model_outputs)
@settings(max_examples=NEVER_RAISES_EXAMPLES)
def test_parse_never_raises_and_always_explains(text: str) -> None:
    action = parse_action(text)
    event("valid" if action.is_valid else "invalid")
    assert_well_formed(action)


@given(st.one_of(mutated_canonical(), valid_actions.map(format_action)))
@settings(max_examples=1000)
def test_format_of_a_valid_parse_is_a_fixed_point(text: str) -> None:
    action = parse_action(text)
    if not action.is_valid:
        return
    canonical = format_action(action)
    assert parse_action(canonical) == action
    assert format_action(parse_action(canonical)) == canonical


# -- examples --------------------------------------------------------------------------------------


def test_canonical_form_matches_the_aitw_decision_line() -> None:
    assert format_action(Action.tap(0.5, 0.25)) == (
        'Action Decision: "action_type": "DUAL_POINT", "touch_point": "[0.5000, 0.2500]", '
        '"lift_point": "[0.5000, 0.2500]", "typed_text": ""'
    )
    assert format_action(Action.press_home()) == (
        'Action Decision: "action_type": "PRESS_HOME", "touch_point": "[-1.0000, -1.0000]", '
        '"lift_point": "[-1.0000, -1.0000]", "typed_text": ""'
    )


def test_reasoning_before_the_decision_is_ignored() -> None:
    output = (
        "Action Plan: [DUAL_POINT, TYPE] the search bar is at the top; tap it first.\n"
        + format_action(Action.tap(0.1, 0.5))
    )
    assert parse_action(output) == Action.tap(0.1, 0.5)


def test_last_decision_wins() -> None:
    output = (
        format_action(Action.press_back())
        + "\nOn second thought:\n"
        + format_action(Action.type_text("hello"))
    )
    assert parse_action(output) == Action.type_text("hello")


def test_whitespace_and_case_are_tolerated() -> None:
    output = (
        'Action Decision:   "action_type" : "dual_point", "touch_point" : "[ 0.5 , 0.25 ]",'
        ' "lift_point":"[0.5,0.25]"'
    )
    assert parse_action(output) == Action.tap(0.5, 0.25)


@pytest.mark.parametrize(
    ("output", "reason_part"),
    [
        ("tap the button", "no 'Action Decision:'"),
        ('Action Decision: "action_type": "SCROLL"', "unknown action_type 'SCROLL'"),
        ('Action Decision: "action_type": "INVALID"', "unknown action_type 'INVALID'"),
        ('Action Decision: "touch_point": "[0.5, 0.5]"', 'missing "action_type"'),
        ('Action Decision: "action_type": "DUAL_POINT"', "missing or malformed touch_point"),
        (
            'Action Decision: "action_type": "DUAL_POINT", "touch_point": "[0.5, 0.5]"',
            "missing or malformed lift_point",
        ),
        ('Action Decision: "action_type": "TYPE"', 'TYPE without a quoted "typed_text"'),
        ('Action Decision: "action_type": "TYPE", "typed_text": ""', "empty typed_text"),
        ('Action Decision: "action_type": "TYPE", "typed_text": "\\x"', "not a valid JSON string"),
    ],
)
def test_malformed_outputs_are_invalid_with_a_reason(output: str, reason_part: str) -> None:
    action = parse_action(output)
    assert not action.is_valid
    assert reason_part in action.invalid_reason


@pytest.mark.parametrize(
    ("touch", "reason_part"),
    [
        ("[1.5, 0.5]", "outside [0, 1]"),
        ("[0.5, -0.1]", "outside [0, 1]"),
        ("[nan, 0.5]", "outside [0, 1]"),
        ("[0.5, NaN]", "outside [0, 1]"),
        ("[inf, 0.5]", "outside [0, 1]"),
        ("[0.5, 1e400]", "outside [0, 1]"),
        ("[half, 0.5]", "is not a number"),
        ("[0.5 0.5]", "missing or malformed touch_point"),
    ],
)
def test_bad_coordinates_are_invalid(touch: str, reason_part: str) -> None:
    output = (
        f'Action Decision: "action_type": "DUAL_POINT", "touch_point": "{touch}", '
        '"lift_point": "[0.5, 0.5]"'
    )
    action = parse_action(output)
    assert not action.is_valid
    assert reason_part in action.invalid_reason


def test_too_long_typed_text_is_invalid() -> None:
    output = f'Action Decision: "action_type": "TYPE", "typed_text": "{"a" * (MAX_TYPED_TEXT + 1)}"'
    action = parse_action(output)
    assert not action.is_valid
    assert "longer than" in action.invalid_reason


@pytest.mark.parametrize("value", [None, b'Action Decision: "action_type": "PRESS_BACK"', 42, []])
def test_non_string_input_is_invalid(value: object) -> None:
    action = parse_action(value)
    assert not action.is_valid
    assert f"got {type(value).__name__}" in action.invalid_reason


@pytest.mark.parametrize(
    "reason", ["model refused", 'quote " and backslash \\', "new\nline", f"has {MARKER} inside"]
)
def test_invalid_action_round_trips(reason: str) -> None:
    action = Action.invalid(reason)
    assert parse_action(format_action(action)) == action


def test_empty_invalid_reason_is_replaced_by_an_explanation() -> None:
    action = parse_action('Action Decision: INVALID ""')
    assert not action.is_valid
    assert action.invalid_reason


def test_typed_text_containing_the_marker_round_trips() -> None:
    action = Action.type_text(f'say {MARKER} "action_type": "PRESS_HOME" now')
    assert parse_action(format_action(action)) == action


def test_lone_surrogates_are_rejected() -> None:
    output = 'Action Decision: "action_type": "TYPE", "typed_text": "\\ud800"'
    assert not parse_action(output).is_valid
    with pytest.raises(ValueError, match="surrogate"):
        Action.type_text("\ud800")


def test_long_adversarial_outputs_parse_quickly() -> None:
    # Each pattern once made a regex backtrack polynomially (28 s for one output); a model can
    # emit thousands of spaces. This is a denial-of-service guard, not a speed target: parsing
    # now takes well under a millisecond, so the 1 s bound leaves a 1000x margin for a loaded CI.
    n = 20_000
    prefixes = [
        f'{MARKER} "action_type": "DUAL_POINT", "touch_point": "[' + " " * n,
        f'{MARKER} "action_type": "DUAL_POINT", "touch_point": "[0.5,' + " " * n,
        f'{MARKER} "action_type": "TYPE", "typed_text": "' + "\\a" * n,
        f'{MARKER} INVALID "' + " " * n,
        f'{MARKER} "action_type"' + " " * n,
        (f'"touch_point": "[{" " * 50}' * 400),
    ]
    for output in prefixes:
        start = time.perf_counter()
        action = parse_action(output)
        assert time.perf_counter() - start < 1.0, output[:60]
        assert_well_formed(action)


def test_constructors_validate_and_round() -> None:
    assert Action.tap(0.123456, 0.9).touch_yx == (0.1235, 0.9)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        Action.tap(1.01, 0.5)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        Action.swipe((0.5, 0.5), (0.5, -0.01))
    with pytest.raises(ValueError, match="characters"):
        Action.type_text("")
    with pytest.raises(ValueError, match="characters"):
        Action.type_text("a" * (MAX_TYPED_TEXT + 1))


def test_is_tap_distinguishes_taps_from_swipes() -> None:
    assert Action.tap(0.5, 0.5).is_tap
    assert Action.swipe((0.5, 0.5), (0.5, 0.5 + TAP_DISTANCE / 2)).is_tap
    assert not Action.swipe((0.8, 0.5), (0.2, 0.5)).is_tap
    assert not Action.swipe((0.5, 0.5), (0.5, 0.5 + 2 * TAP_DISTANCE)).is_tap
    assert not Action.press_back().is_tap
    assert not Action.type_text("x").is_tap


def test_status_and_validity_flags() -> None:
    assert Action.complete().is_status and Action.impossible().is_status
    assert not Action.press_enter().is_status
    assert Action.press_enter().is_valid
    assert not Action.invalid("x").is_valid
