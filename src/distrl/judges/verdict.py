"""Reading a success verdict out of free-form model text: never raises, never evaluates anything.

A VLM asked to end with ``Status: success`` answers in many shapes anyway: JSON, markdown bold,
a bare "Yes.", a paragraph of reasoning that mentions both outcomes before settling on one, or a
refusal. The rules, in order of trust:

* **Keyed verdicts** anywhere in the text: ``Status: success``, ``**Verdict:** failure``,
  ``{"status": "failure"}``, ``Answer: yes``, ``Final answer: not successful``; keys are
  status, verdict, answer, final answer, result, outcome, decision, judgement/judgment.
* **JSON-style booleans**: ``{"success": true}``, ``"completed": false``, ``success = True``.
* **A bare last line** that is a verdict word on its own (``Yes.``, ``**FAILURE**``), or a
  one-line answer that starts with yes/no (``No, the alarm is still off.``).

Reasoning usually comes first and the decision last, so when several verdicts appear the *last*
one wins. Anything else (refusals, empty text, a template echoed back as
``Status: success|failure``) is :attr:`Verdict.UNPARSEABLE`; the caller decides what that is worth.

>>> parse_verdict("The wifi toggle is on.\\nStatus: success")
<Verdict.SUCCESS: 'success'>
>>> parse_verdict('{"success": false}')
<Verdict.FAILURE: 'failure'>
>>> parse_verdict("I can't help with that.")
<Verdict.UNPARSEABLE: 'unparseable'>
"""

from __future__ import annotations

import enum
import re


class Verdict(str, enum.Enum):
    """What a judge's answer says about the episode."""

    SUCCESS = "success"
    FAILURE = "failure"
    UNPARSEABLE = "unparseable"


_SUCCESS_WORDS = frozenset(
    {
        "success",
        "successful",
        "successfully",
        "succeeded",
        "complete",
        "completed",
        "done",
        "achieved",
        "accomplished",
        "yes",
        "true",
        "pass",
        "passed",
    }
)
_FAILURE_WORDS = frozenset(
    {
        "failure",
        "fail",
        "failed",
        "fails",
        "unsuccessful",
        "incomplete",
        "uncompleted",
        "unfinished",
        "no",
        "false",
    }
)

# Bounded repetitions only, so matching stays linear in the length of the text whatever it holds.
_DECORATION = r"[*_\"'`\s]{0,8}"
_KEYED_RE = re.compile(
    r"\b(?:final[ \t]+answer|final[ \t]+verdict|status|verdict|answer|result|outcome|decision"
    r"|judge?ment)\b"
    rf"{_DECORATION}[:=]{_DECORATION}"
    r"(?P<negation>not[ \t]+)?(?P<word>[a-z]+)\b(?![ \t]*[|/])",
    re.IGNORECASE,
)
_BOOLEAN_RE = re.compile(
    r"[\"']?\b(?:is_)?(?:success|successful|succeeded|completed?|task_complete[d]?|done)\b[\"']?"
    r"[ \t]{0,4}[:=][ \t]{0,4}(?P<value>true|false)\b",
    re.IGNORECASE,
)
_LEADING_YES_NO_RE = re.compile(r"^(?P<word>yes|no)\b[\s,.;:!—–-]", re.IGNORECASE)
_MARKDOWN_AROUND = " \t*_`#>\"'.!:;,()[]{}"


def _word_verdict(word: str, negated: bool = False) -> Verdict | None:
    """The verdict a single word carries, or None when it carries none.

    "not success" is a failure; "not failed" is left alone (ambiguous, rare, and a wrong success
    costs more than a dropped one).
    """
    word = word.lower()
    if word in _SUCCESS_WORDS:
        return Verdict.FAILURE if negated else Verdict.SUCCESS
    if word in _FAILURE_WORDS and not negated:
        return Verdict.FAILURE
    return None


def _bare_line_verdict(line: str) -> Verdict | None:
    """A line that is nothing but a verdict word (after markdown), e.g. ``**Yes.**``."""
    core = line.strip(_MARKDOWN_AROUND)
    parts = core.split()
    if len(parts) == 1:
        return _word_verdict(parts[0])
    if len(parts) == 2 and parts[0].lower() == "not":
        return _word_verdict(parts[1], negated=True)
    return None


def parse_verdict(text: object) -> Verdict:
    """The last verdict stated in ``text`` (see the module docstring); never raises."""
    if not isinstance(text, str) or not text.strip():
        return Verdict.UNPARSEABLE
    found: list[tuple[int, Verdict]] = []
    for match in _KEYED_RE.finditer(text):
        verdict = _word_verdict(match.group("word"), negated=match.group("negation") is not None)
        if verdict is not None:
            found.append((match.start(), verdict))
    for match in _BOOLEAN_RE.finditer(text):
        is_true = match.group("value").lower() == "true"
        found.append((match.start(), Verdict.SUCCESS if is_true else Verdict.FAILURE))

    lines = [(offset, line) for offset, line in _lines_with_offsets(text) if line.strip()]
    if lines:
        offset, last_line = lines[-1]
        verdict = _bare_line_verdict(last_line)
        if verdict is None and len(lines) == 1:
            leading = _LEADING_YES_NO_RE.match(last_line.strip(_MARKDOWN_AROUND) + " ")
            if leading is not None:
                verdict = _word_verdict(leading.group("word"))
        if verdict is not None:
            found.append((offset, verdict))
    if not found:
        return Verdict.UNPARSEABLE
    return max(found, key=lambda item: item[0])[1]


def _lines_with_offsets(text: str) -> list[tuple[int, str]]:
    """Each line of ``text`` with the offset it starts at."""
    result: list[tuple[int, str]] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        result.append((offset, line))
        offset += len(line)
    return result
