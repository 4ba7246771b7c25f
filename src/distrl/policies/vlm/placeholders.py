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

>>> names = Placeholders.of("Call Olivia Baker, then text Kai")
>>> names.names
('Olivia Baker', 'Kai')
>>> names.hide("Olivia Baker's number; Kaiser Kai")
"Name1's number; Kaiser Name2"
>>> names.show("Name2: see you")
'Kai: see you'
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from functools import lru_cache

from distrl.core.action import Action, ActionType
from distrl.core.observation import Observation
from distrl.policies.features import instruction_names

__all__ = ["MAX_PLACEHOLDERS", "Placeholders", "placeholder_words"]

#: Names numbered past this stay as they are (an instruction names two or three things).
MAX_PLACEHOLDERS = 9


def placeholder_words() -> list[str]:
    """Every placeholder word (what a tiny model's tokenizer should keep whole)."""
    return [f"Name{number}" for number in range(1, MAX_PLACEHOLDERS + 1)]


@lru_cache(maxsize=1024)
def _whole_words(texts: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pattern matching any of ``texts`` as whole words, longest first (None: no texts).
    Cached: every act and score hides the names in every element of every observation."""
    if not texts:
        return None
    ordered = sorted(texts, key=len, reverse=True)
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(t) for t in ordered) + r")(?!\w)")


@dataclass(frozen=True)
class Placeholders:
    """The instruction's names and the placeholder each is shown as (``names[i]`` is
    ``Name{i+1}``)."""

    names: tuple[str, ...]

    @classmethod
    def of(cls, instruction: str) -> Placeholders:
        return cls(instruction_names(instruction)[:MAX_PLACEHOLDERS])

    def _placeholder(self, name: str) -> str:
        return f"Name{self.names.index(name) + 1}"

    def hide(self, text: str) -> str:
        """``text`` with every whole-word occurrence of a name replaced by its placeholder."""
        pattern = _whole_words(self.names)
        if pattern is None:
            return text
        return pattern.sub(lambda match: self._placeholder(match.group()), text)

    def show(self, text: str) -> str:
        """``text`` with every placeholder replaced by the name it stands for."""
        pattern = _whole_words(tuple(placeholder_words()[: len(self.names)]))
        if pattern is None:
            return text
        return pattern.sub(lambda match: self.names[int(match.group()[4:]) - 1], text)

    def observation(self, observation: Observation) -> Observation:
        """``observation`` as the model sees it: names hidden in the instruction and in every
        element's text (geometry, state and screenshot unchanged)."""
        if not self.names:
            return observation
        elements = tuple(
            dataclasses.replace(element, text=self.hide(element.text))
            for element in observation.elements
        )
        return dataclasses.replace(
            observation, instruction=self.hide(observation.instruction), elements=elements
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
