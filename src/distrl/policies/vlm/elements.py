"""The screen's element list in the VLM's prompt, and taps that name an element by its index.

Why: a small VLM cannot read a phone screen from a few dozen image tokens, but accessibility-tree
agents show that the same model acts well when the prompt lists the UI elements as text (index,
kind, text) and it may answer "tap element 3" instead of writing coordinates. With
``policy.vlm.element_list`` on, the prompt carries the list beside the screenshot and the action
text gains one form::

    Action Decision: "action_type": "TAP_ELEMENT", "element": 3

which means a tap at the centre of element 3 (the point the small policy and the PhoneSim oracle
tap too). The device, the replay and the store still see an ordinary ``DUAL_POINT`` tap.

One text per action, as the policy's log-probs need (docs/design.md §5): a tap whose point is
exactly the centre of a listed element is written as a reference to the first such element;
every other action keeps its AitW text. A generated reference to another element with the same
centre parses to the same tap, and ``act`` then rescores the canonical text, as it does for any
non-canonical string.

The parser is strict and evaluates nothing: the reference must be the whole decision, the index
a decimal number of at most four digits naming a listed element; anything else that claims to be
a ``TAP_ELEMENT`` is an ``INVALID`` action with its reason.
"""

from __future__ import annotations

import re

from distrl.core.action import Action
from distrl.core.observation import Observation, UIElement
from distrl.policies.features import tap_point

__all__ = ["ElementReferences"]

_DECISION_MARKER = "Action Decision:"
_TAP_ELEMENT = "TAP_ELEMENT"
_REFERENCE_RE = re.compile(r'"action_type": "TAP_ELEMENT", "element": (\d{1,4})')


def _element_line(index: int, element: UIElement) -> str:
    """``3 toggle: 7:45 AM (on)``: index, kind, text with its whitespace collapsed (a newline
    in a label cannot break the list apart) and the checked state when the element has one.
    The text follows a space unquoted, so a word is the same token as in an instruction."""
    state = "" if element.checked is None else (" (on)" if element.checked else " (off)")
    return f"{index} {element.kind}: {' '.join(element.text.split())}{state}"


class ElementReferences:
    """The first ``limit`` elements of an observation: listed in the prompt, referable by index."""

    def __init__(self, limit: int):
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        self.limit = limit

    def listed(self, observation: Observation) -> tuple[UIElement, ...]:
        return observation.elements[: self.limit]

    def prompt_lines(self, observation: Observation) -> list[str]:
        """The prompt's element section: a heading and one line per listed element."""
        listed = self.listed(observation)
        if not listed:
            return ["Elements: none"]
        return ["Elements:", *(_element_line(i, e) for i, e in enumerate(listed))]

    @staticmethod
    def reference_text(index: int) -> str:
        return f'{_DECISION_MARKER} "action_type": "{_TAP_ELEMENT}", "element": {index}'

    def sample_texts(self) -> list[str]:
        """Every reference text the list can produce (for a tokenizer trained on action texts)."""
        return [self.reference_text(i) for i in range(self.limit)]

    def canonical_text(self, action: Action, observation: Observation) -> str | None:
        """The reference text of ``action`` on ``observation``, or ``None`` when it is no tap on
        the exact centre of a listed element (it then keeps its AitW text)."""
        if not action.is_tap:
            return None
        for index, element in enumerate(self.listed(observation)):
            if Action.tap(*tap_point(element)).touch_yx == action.touch_yx:
                return self.reference_text(index)
        return None

    def parse(self, text: str, observation: Observation) -> Action | None:
        """The tap that ``text`` names, an ``INVALID`` action for a malformed reference, or
        ``None`` when ``text`` is no element reference (the AitW parser reads it)."""
        marker = text.rfind(_DECISION_MARKER)
        if marker < 0:
            return None
        body = text[marker + len(_DECISION_MARKER) :].strip()
        if _TAP_ELEMENT not in body:
            return None
        match = _REFERENCE_RE.fullmatch(body)
        if match is None:
            return Action.invalid(f'malformed {_TAP_ELEMENT} (want "element": INDEX)')
        index = int(match.group(1))
        listed = self.listed(observation)
        if index >= len(listed):
            return Action.invalid(f"element {index} is not listed ({len(listed)} elements)")
        return Action.tap(*tap_point(listed[index]))
