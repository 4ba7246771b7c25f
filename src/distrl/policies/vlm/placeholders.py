"""Names in the VLM's prompt replaced by numbered placeholders (``policy.vlm.name_placeholders``).

Why: the test tasks name apps, people and shops that no train task does, and a tiny model sees a
held-out name as a word whose embedding no demonstration ever trained. Measured on the
``vlm-quick`` preset, a run's final policy scored 0.48 greedy on train tasks and 0.09 on test
(docs/results.md, "A separate critic, a critic warm-up and a cloning anchor"): what RL learns is
the train tasks' names. Semantic parsers meet the same gap and close it by delexicalising: every
name of the instruction becomes a placeholder, in the instruction and wherever the screen shows
it, so "Call Olivia Baker" beside a contact row "Olivia Baker" reads "Call Name1" beside
"Name1" on every task, train or test, and what is learnt (tap the row that reads like the
instruction's Name1) carries over to names never seen.

The names are the instruction's runs of name-like words (capitalised where no sentence starts:
:func:`~distrl.policies.features.instruction_names`), numbered in order of first appearance, at
most :data:`MAX_PLACEHOLDERS`. :meth:`Placeholders.hide` replaces each whole-word occurrence
(longest name first, case as written) in the instruction and in every element's text;
:meth:`Placeholders.show` puts the names back into a typed text before it reaches the device, and
hides them again in a stored action before it is scored, so the model's texts, their log-probs
and the device's actions agree. Taps are points and need neither. A text that already contains
a placeholder word such as ``Name1`` would not survive the round trip; no suite writes one.

Dictated texts (``policy.vlm.text_placeholders``) go the same way, as Text1, Text2, ...: the
test tasks dictate notes and messages no train task does, and the tiny model picks a TYPE
candidate by its words, so a held-out text is one it has never typed (0 of 13 test
``create_note`` episodes greedy against 14 of 16 on train, docs/results.md, "Where a run's gain
goes"). With the texts hidden, `Jot down "Text1"` asks to type the same Text1 as every train
note does. A dictated text is a quoted span, or what follows a colon when it holds no quote and
none of the instruction's names ("Create a new contact: Olivia Baker, 555-0100" lists fields to
fill, not one text): :func:`dictated_texts`.

Web addresses (``policy.vlm.site_placeholders``) go the same way, as Site1, ...: the test
tasks open websites no train task does, and a held-out address is a word the tiny model has
never typed. A preset run's final policy opened Chrome on 16 of 28 greedy test
``open_website`` episodes and then typed no held-out address right (0 solved; three other
final policies solved 43 of 45 train episodes; docs/results.md). With the address hidden,
"Take me to Site1" asks to type the same Site1 as every train task, and the word itself says
that a website is meant. An address is what :func:`~distrl.policies.candidates.web_addresses`
finds; one seen only inside a dictated text is part of that text.

>>> names = Placeholders.of("Call Olivia Baker, then text Kai")
>>> names.names
('Olivia Baker', 'Kai')
>>> names.hide("Olivia Baker's number; Kaiser Kai")
"Name1's number; Kaiser Name2"
>>> names.show("Name2: see you")
'Kai: see you'
>>> Placeholders.of('Tell Kai "call Jo" or Kai: see you', texts=True).hide("Kai: call Jo")
'Name1: Text1'
>>> Placeholders.of("Take Kai to maps.com", sites=True).hide("https://maps.com/ for Kai")
'https://Site1/ for Name1'
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from functools import lru_cache

from distrl.core.action import Action, ActionType
from distrl.core.observation import Observation
from distrl.policies.candidates import colon_tails, quoted_spans, web_addresses
from distrl.policies.features import instruction_names

__all__ = ["MAX_PLACEHOLDERS", "Placeholders", "dictated_texts", "placeholder_words"]

#: Names numbered past this stay as they are (an instruction names two or three things).
MAX_PLACEHOLDERS = 9


def placeholder_words(texts: bool = False, sites: bool = False) -> list[str]:
    """Every placeholder word (what a tiny model's tokenizer should keep whole): Name1, ...,
    with ``texts`` Text1, ... and with ``sites`` Site1, ... too."""
    kinds = ("Name", *(("Text",) if texts else ()), *(("Site",) if sites else ()))
    return [f"{kind}{number}" for kind in kinds for number in range(1, MAX_PLACEHOLDERS + 1)]


def dictated_texts(instruction: str, names: tuple[str, ...]) -> list[str]:
    """The texts ``instruction`` dictates (quoted spans, colon tails), but for a colon tail
    that holds one of its ``names`` (a list of fields to fill, not one text to type)."""
    named = _whole_words(names)
    tails = [
        tail.strip()
        for tail in colon_tails(instruction)
        if not quoted_spans(tail) and (named is None or not named.search(tail))
    ]
    return list(dict.fromkeys(text for text in (*quoted_spans(instruction), *tails) if text))


@lru_cache(maxsize=1024)
def _whole_words(texts: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pattern matching any of ``texts`` as whole words, longest first (None: no texts).
    Cached: every act and score hides the names in every element of every observation."""
    if not texts:
        return None
    ordered = sorted(texts, key=len, reverse=True)
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(t) for t in ordered) + r")(?!\w)")


def _cut(text: str, values: tuple[str, ...]) -> str:
    """``text`` with every whole-word occurrence of ``values`` cut out (what is left outside
    them)."""
    pattern = _whole_words(values)
    return text if pattern is None else pattern.sub(" ", text)


@dataclass(frozen=True)
class Placeholders:
    """The instruction's names, dictated texts and web addresses, and the placeholder each is
    shown as (``names[i]`` is ``Name{i+1}``, ``texts[i]`` is ``Text{i+1}``, ``sites[i]`` is
    ``Site{i+1}``)."""

    names: tuple[str, ...]
    texts: tuple[str, ...] = ()
    sites: tuple[str, ...] = ()

    @classmethod
    def of(cls, instruction: str, texts: bool = False, sites: bool = False) -> Placeholders:
        """The placeholders of ``instruction``: its names, with ``texts`` the texts it dictates
        (:func:`dictated_texts`) and with ``sites`` the web addresses it names. A name or an
        address only seen inside a dictated text (a name only inside an address) is part of
        that text (address), not one of its own."""
        names = instruction_names(instruction)
        dictated = tuple(dictated_texts(instruction, names)[:MAX_PLACEHOLDERS]) if texts else ()
        outside = _cut(instruction, dictated)
        addresses = tuple(dict.fromkeys(web_addresses(outside)))[:MAX_PLACEHOLDERS] if sites else ()
        outside = _cut(outside, addresses)
        if outside != instruction:
            names = tuple(n for n in names if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", outside))
        return cls(names[:MAX_PLACEHOLDERS], dictated, addresses)

    @property
    def _by_value(self) -> dict[str, str]:
        """Each name, address and text -> its placeholder (a text wins over a name or an
        address written the same, an address over a name)."""
        shown = {name: f"Name{i}" for i, name in enumerate(self.names, 1)}
        shown.update({site: f"Site{i}" for i, site in enumerate(self.sites, 1)})
        shown.update({text: f"Text{i}" for i, text in enumerate(self.texts, 1)})
        return shown

    def hide(self, text: str) -> str:
        """``text`` with every whole-word occurrence of a name, an address or a dictated text
        replaced by its placeholder (the longest first, so a text holding a name stays one
        text)."""
        by_value = self._by_value
        pattern = _whole_words(tuple(by_value))
        if pattern is None:
            return text
        return pattern.sub(lambda match: by_value[match.group()], text)

    def show(self, text: str) -> str:
        """``text`` with every placeholder replaced by the name, address or text it stands
        for."""
        by_placeholder = {shown: value for value, shown in self._by_value.items()}
        pattern = _whole_words(tuple(by_placeholder))
        if pattern is None:
            return text
        return pattern.sub(lambda match: by_placeholder[match.group()], text)

    def observation(self, observation: Observation) -> Observation:
        """``observation`` as the model sees it: names, addresses and texts hidden in the
        instruction, in every element's text and in the previous actions' typed texts
        (geometry, state and screenshot unchanged)."""
        if not self.names and not self.texts and not self.sites:
            return observation
        elements = tuple(
            dataclasses.replace(element, text=self.hide(element.text))
            for element in observation.elements
        )
        return dataclasses.replace(
            observation,
            instruction=self.hide(observation.instruction),
            elements=elements,
            previous_actions=tuple(map(self.hidden_action, observation.previous_actions)),
        )

    def _retyped(self, action: Action, text: str) -> Action:
        if action.action_type is not ActionType.TYPE or text == action.text:
            return action
        try:
            return Action.type_text(text)
        except ValueError as error:  # the names made it too long to type
            return Action.invalid(f"TYPE text with its names put back: {error}")

    def hidden_action(self, action: Action) -> Action:
        """A device action as the model writes it (a typed text's names hidden)."""
        return self._retyped(action, self.hide(action.text))

    def shown_action(self, action: Action) -> Action:
        """A model's action as the device takes it (a typed text's placeholders replaced)."""
        return self._retyped(action, self.show(action.text))
