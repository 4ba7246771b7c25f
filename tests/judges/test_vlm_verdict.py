"""Verdict parsing: the formats VLMs really answer in, the last verdict winning, and no crashes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from distrl.judges.verdict import Verdict, parse_verdict

S, F, U = Verdict.SUCCESS, Verdict.FAILURE, Verdict.UNPARSEABLE


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the requested format, and its decorations
        ("Status: success", S),
        ("Status: failure", F),
        ("status: SUCCESS", S),
        ("**Status:** Failure", F),
        ("**Status: success**", S),
        ("Status: `failure`", F),
        ("The toggle is on.\n\nStatus: success\n", S),
        # other keys and words
        ("Verdict: failed", F),
        ("Final answer: yes", S),
        ("Answer: No", F),
        ("Result = completed", S),
        ("Outcome: not successful", F),
        ("Status: incomplete", F),
        ("Judgement: pass", S),
        # JSON and code blocks
        ('{"success": true}', S),
        ('{"success": false, "reason": "the alarm is off"}', F),
        ('```json\n{"status": "success", "confidence": 0.9}\n```', S),
        ('{"verdict": "failure"}', F),
        ('{"task_completed": true}', S),
        ("success = False", F),
        # bare answers
        ("Yes", S),
        ("yes.", S),
        ("NO!", F),
        ("**Success**", S),
        ("Failure.", F),
        ("No, the wifi switch is still off.", F),
        ("Yes - the message was sent.", S),
        ("I looked at the screen carefully.\n\n**FAILURE**", F),
        ("Not successful.", F),
        # reasoning first, the last verdict wins
        ("At first glance Status: success, but the list is empty.\nStatus: failure", F),
        ('{"success": false}\nOn reflection the search did run.\nStatus: success', S),
        ("Status: failure\nWait, I misread it.\nFinal answer: yes", S),
        # nothing to go on
        ("", U),
        ("   \n\t", U),
        ("I'm sorry, I can't help with evaluating this image.", U),
        ("The screen shows a settings page with several toggles.", U),
        ("Status: success|failure", U),
        ("Status: success / failure", U),
        ("Status: unknown", U),
        ("Status: not failed", U),
        ("Yesterday the agent opened the app.", U),
        ("no", F),
    ],
)
def test_formats(text: str, expected: Verdict) -> None:
    assert parse_verdict(text) is expected


@pytest.mark.parametrize("value", [None, 3, b"Status: success", ["Status: success"], {"a": 1}])
def test_non_strings_are_unparseable(value: object) -> None:
    assert parse_verdict(value) is U


def test_huge_input_is_fast() -> None:
    """Pathological input (long runs of decoration and keys) stays linear."""
    text = ("Status:" + " " * 5000 + "*" * 5000) * 20 + "\nStatus: failure"
    assert parse_verdict(text) is F


@settings(max_examples=400)
@given(st.text())
def test_random_text_never_raises(text: str) -> None:
    assert isinstance(parse_verdict(text), Verdict)


@settings(max_examples=200)
@given(st.text(), st.sampled_from(["success", "failure"]))
def test_a_final_status_line_wins_over_anything_before(prefix: str, word: str) -> None:
    assert parse_verdict(f"{prefix}\nStatus: {word}") is Verdict(word)


@settings(max_examples=200)
@given(
    st.booleans(),
    st.dictionaries(
        st.text(alphabet="abcdefghij_", min_size=1, max_size=8), st.integers(), max_size=4
    ),
)
def test_json_objects(success: bool, extra: dict[str, int]) -> None:
    body = {**extra, "success": success}
    assert parse_verdict(json.dumps(body, indent=2)) is (S if success else F)
