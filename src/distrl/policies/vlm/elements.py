"""The screen's element list in the VLM's prompt, and taps that name an element.

Why: a small VLM cannot read a phone screen from a few dozen image tokens, but accessibility-tree
agents show that the same model acts well when the prompt lists the UI elements as text (index,
kind, text) and it may answer "tap element 3" instead of writing coordinates. With
``policy.vlm.element_list`` on, the prompt carries the list beside the screenshot and the action
text gains two forms::

    Action Decision: "action_type": "TAP_ELEMENT", "element": 3
    Action Decision: "action_type": "TAP_ELEMENT", "name": Clock

the first a tap at the centre of element 3, the second a tap at the centre of the first listed
element whose text reads "Clock" (the point the small policy and the PhoneSim oracle tap too).
The device, the replay and the store still see an ordinary ``DUAL_POINT`` tap.

Which form is canonical (``policy.vlm.element_reference``): ``index`` writes every element tap
by index; ``name`` writes it by the element's text where that text names it (non-empty, at most
``MAX_NAME_WORDS`` words, and no element listed before it reads the same) and by index
otherwise. A name is the easier form for a model that learns from scratch: the word to write is
usually in the instruction ("Open Clock"), one token in both places, so writing it is copying,
where an index has to be looked up on the element's line. ``title`` writes it by the element's
title (:attr:`~distrl.core.observation.UIElement.title`: its text up to the first " · ", the
row's label without its subtitle) where that names it: a conversation row "Ana Silva · Call me
when you get this" or a store listing "Spotify · Music & Audio - 4.4 stars" is longer than
``MAX_NAME_WORDS`` as a whole and would be tapped by index, while its title is the name the
instruction holds ("Open my chat with Ana Silva"). All forms parse in every mode: a name is
looked up as an element's whole text first, then as a title.

One text per action, as the policy's log-probs need (docs/design.md §5): a tap whose point is
exactly the centre of a listed element is written as a reference to the first such element;
every other action keeps its AitW text. A generated reference to another element with the same
centre parses to the same tap, and ``act`` then rescores the canonical text, as it does for any
non-canonical string.

With ``mark_matches`` (``policy.vlm.element_match_marks``) an element line whose words are at
least half in the instruction ends in ``MATCH_MARK``: "3 icon: Clock [in instruction]". It is the
small policy's word-overlap feature (:mod:`distrl.policies.features`) written as text, for the
same reason: a tiny model learns to match a held-out name it sees as several rare byte-pair
pieces only slowly, while one well-trained token that says "this element is named in the task"
carries over to names no demonstration showed. A large VLM matches names itself and needs none.

The parser is strict and evaluates nothing: the reference must be the whole decision, the index
a decimal number of at most four digits naming a listed element, the name the whole text or the
title of a listed element; anything else that claims to be a ``TAP_ELEMENT`` is an ``INVALID``
action with its reason.
"""

from __future__ import annotations

import re
from typing import Literal

from distrl.core.action import Action
from distrl.core.observation import Observation, UIElement
from distrl.policies.features import overlap_share, tap_point, text_words

__all__ = ["MATCH_MARK", "MAX_NAME_WORDS", "ElementReferences", "ReferenceForm"]

#: Ends the line of an element the instruction names (with ``mark_matches``); the space is
#: part of it, so a tokenizer that keeps fragments whole sees one piece after any text.
MATCH_MARK = " [in instruction]"

_DECISION_MARKER = "Action Decision:"
_TAP_ELEMENT = "TAP_ELEMENT"
#: What follows the decision marker in each form, up to the index or the name; the texts the
#: policy writes and the patterns the parser reads are both made from these.
_INDEX_KEY = f'"action_type": "{_TAP_ELEMENT}", "element": '
#: No space after the colon: the name's first word brings its own, as in the instruction.
_NAME_KEY = f'"action_type": "{_TAP_ELEMENT}", "name":'
_INDEX_PREFIX = f"{_DECISION_MARKER} {_INDEX_KEY}"
_NAME_PREFIX = f"{_DECISION_MARKER} {_NAME_KEY}"
_REFERENCE_RE = re.compile(re.escape(_INDEX_KEY) + r"(\d{1,4})")
_NAME_RE = re.compile(re.escape(_NAME_KEY) + r" (\S.*)", re.DOTALL)
#: A longer text (a message, a paragraph) is tapped by index: its name would be a long reply.
MAX_NAME_WORDS = 6
#: Distinct element lists whose tap texts are kept (about 3 KB each).
TAP_TEXT_CACHE_SIZE = 4_096

#: How an element tap is written: by its index on the list, or by its text (``name``) or its
#: title (``title``) where that names it.
ReferenceForm = Literal["index", "name", "title"]


def _collapsed(text: str) -> str:
    """``text`` with its whitespace collapsed to single spaces (a newline in a label cannot
    break the list or a reference apart)."""
    return " ".join(text.split())


def _element_line(index: int, element: UIElement, named: bool = False) -> str:
    """``3 toggle: 7:45 AM (on)``: index, kind, collapsed text and the checked state when the
    element has one, then ``MATCH_MARK`` when ``named``. The text follows a space unquoted, so a
    word is the same token as in an instruction."""
    state = "" if element.checked is None else (" (on)" if element.checked else " (off)")
    mark = MATCH_MARK if named else ""
    return f"{index} {element.kind}: {_collapsed(element.text)}{state}{mark}"


def named_in(element: UIElement, instruction_words: set[str]) -> bool:
    """Whether at least half of ``element``'s words are words of the instruction (an element
    without words is never named)."""
    return overlap_share(text_words(element.text), instruction_words) >= 0.5


def _readings(listed: tuple[UIElement, ...]) -> tuple[list[str], list[str]]:
    """What a ``"name":`` reference may read for each listed element: its whole text and its
    title, whitespace collapsed as in the prompt."""
    return [_collapsed(e.text) for e in listed], [_collapsed(e.title) for e in listed]


def _found_by(name: str, readings: tuple[list[str], list[str]]) -> int | None:
    """The index of the element a ``"name":`` reference names: the first whose whole text reads
    ``name``, else the first whose title does (``None``: no listed element)."""
    for candidates in readings:
        if name in candidates:
            return candidates.index(name)
    return None


class ElementReferences:
    """The first ``limit`` elements of an observation: listed in the prompt, referable by index
    or by name (``form`` says which the canonical text uses)."""

    def __init__(self, limit: int, form: ReferenceForm = "index", mark_matches: bool = False):
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        if form not in ("index", "name", "title"):
            raise ValueError(f"form must be 'index', 'name' or 'title', got {form!r}")
        self.limit = limit
        self.form = form
        self.mark_matches = mark_matches
        #: :meth:`tap_texts` by listed elements (screens repeat; emptied when full).
        self._tap_texts: dict[tuple[UIElement, ...], dict[tuple[float, float], str]] = {}

    def listed(self, observation: Observation) -> tuple[UIElement, ...]:
        return observation.elements[: self.limit]

    def prompt_lines(self, observation: Observation) -> list[str]:
        """The prompt's element section: a heading and one line per listed element."""
        listed = self.listed(observation)
        if not listed:
            return ["Elements: none"]
        words = text_words(observation.instruction) if self.mark_matches else set()
        return [
            "Elements:",
            *(
                _element_line(i, e, self.mark_matches and named_in(e, words))
                for i, e in enumerate(listed)
            ),
        ]

    @staticmethod
    def reference_text(index: int) -> str:
        return f"{_INDEX_PREFIX}{index}"

    @staticmethod
    def name_text(name: str) -> str:
        return f"{_NAME_PREFIX} {_collapsed(name)}"

    @staticmethod
    def fragments() -> list[str]:
        """The fixed parts of both reference forms (what a tokenizer should keep whole)."""
        return [_INDEX_PREFIX, _NAME_PREFIX]

    def tokenizer_fragments(self) -> list[str]:
        """What a tiny model's tokenizer should keep whole for these references: the
        :meth:`fragments`, and ``MATCH_MARK`` when lines carry it."""
        return self.fragments() + ([MATCH_MARK] if self.mark_matches else [])

    def tap_texts(self, observation: Observation) -> dict[tuple[float, float], str]:
        """The canonical text of a tap on each listed element's centre, by its touch point
        (the first element with that centre names it).

        Why a table, cached by the listed elements: the admissible-action set (one tap per
        element) and every scored tap need these texts, and finding one from scratch scans the
        list; screens repeat, so one pass per distinct list serves them all."""
        listed = self.listed(observation)
        texts = self._tap_texts.get(listed)
        if texts is None:
            if len(self._tap_texts) >= TAP_TEXT_CACHE_SIZE:
                self._tap_texts.clear()
            texts = self._build_tap_texts(listed)
            self._tap_texts[listed] = texts
        return texts

    def _build_tap_texts(self, listed: tuple[UIElement, ...]) -> dict[tuple[float, float], str]:
        """:meth:`tap_texts` for ``listed``: a name where it names the element (non-empty, at
        most ``MAX_NAME_WORDS`` words, and :meth:`parse` finds this element by it), else the
        index."""
        texts: dict[tuple[float, float], str] = {}
        readings = _readings(listed)
        full_texts, titles = readings
        for index, element in enumerate(listed):
            point = Action.tap(*tap_point(element)).touch_yx
            if point in texts:
                continue
            name = titles[index] if self.form == "title" else full_texts[index]
            nameable = self.form != "index" and name and len(name.split()) <= MAX_NAME_WORDS
            texts[point] = (
                self.name_text(name)
                if nameable and _found_by(name, readings) == index
                else self.reference_text(index)
            )
        return texts

    def canonical_text(self, action: Action, observation: Observation) -> str | None:
        """The reference text of ``action`` on ``observation``, or ``None`` when it is no tap on
        the exact centre of a listed element (it then keeps its AitW text)."""
        if not action.is_tap:
            return None
        return self.tap_texts(observation).get(action.touch_yx)

    def parse(self, text: str, observation: Observation) -> Action | None:
        """The tap that ``text`` names, an ``INVALID`` action for a malformed reference, or
        ``None`` when ``text`` is no element reference (the AitW parser reads it)."""
        marker = text.rfind(_DECISION_MARKER)
        if marker < 0:
            return None
        body = text[marker + len(_DECISION_MARKER) :].strip()
        if _TAP_ELEMENT not in body:
            return None
        listed = self.listed(observation)
        named = _NAME_RE.fullmatch(body)
        if named is not None:
            name = _collapsed(named.group(1))
            found = _found_by(name, _readings(listed))
            if found is None:
                return Action.invalid(f"no listed element reads {name[:80]!r}")
            return Action.tap(*tap_point(listed[found]))
        match = _REFERENCE_RE.fullmatch(body)
        if match is None:
            return Action.invalid(
                f'malformed {_TAP_ELEMENT} (want "element": INDEX or "name": TEXT)'
            )
        index = int(match.group(1))
        if index >= len(listed):
            return Action.invalid(f"element {index} is not listed ({len(listed)} elements)")
        return Action.tap(*tap_point(listed[index]))
