"""Copy augmentation for behaviour cloning: swap the words a demonstrated step copies.

Why: many steps of a device-control task copy a word of the instruction into the action, a name
to tap ("Open Clock" -> the element "Clock") or a text to type ("... saying Running late"). A
model that learns from scratch on a few hundred demonstrations memorises which words the train
tasks copy, because the same few names and texts recur, and on a test task that names a person
the train split never mentions it writes a train name (measured with the tiny VLM: it typed
"Laura Martin" for "Felix Wagner"; docs/results.md, "The tiny VLM"). Replacing each copied
word by a random other word, consistently in the instruction, on the screen's element list, in
the previous actions and in the action itself, keeps the step correct while the word to write
changes from one batch to the next: the only way left to fit the data is to copy.

Generic by construction: a word counts as copied when it is in the instruction and in the action
(a typed text, or the text of the element the tap lands on); there is no task-specific code. The
replacement words are drawn from the demonstrations' own instructions (what the train split
shows), never from elsewhere.

The screenshot is not edited: its pixels still show the original word. That is harmless for a
model that reads names from the prompt's element list (the tiny VLM sees 64x64 pixels) and
misleading for one that reads the screenshot, so the augmentation is off by default
(``train.bc_copy_augmentation``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np

from distrl.core.action import Action, ActionType
from distrl.core.observation import Observation
from distrl.policies.features import resolve_tap

__all__ = ["CopySwap", "copied_words", "word_pool"]

#: A word: letters only, so digits, phone numbers and punctuation are never swapped.
_WORD_RE = re.compile(r"[A-Za-z]+")
#: Shorter words ("a", "to", "on") are grammar, not copied parameters.
_MIN_WORD_LENGTH = 3
#: Longer grammar words, kept too: swapping them ("How is the weather" -> "How is about
#: weather") rewrites an instruction's template, not the parameter it carries.
_FUNCTION_WORDS = frozenset(
    {"the", "and", "for", "with", "from", "you", "your", "can", "this", "that", "are", "was"}
    | {"were", "has", "have", "had", "its", "into", "onto", "about", "all", "any", "not", "but"}
    | {"our", "out", "off", "who", "what", "when", "where", "how", "why", "which"}
)


def _words(text: str) -> set[str]:
    """The words of ``text`` long enough to be a copied parameter, in lower case (an
    instruction may say "clock" where the screen reads "Clock")."""
    words = {word.lower() for word in _WORD_RE.findall(text) if len(word) >= _MIN_WORD_LENGTH}
    return words - _FUNCTION_WORDS


def word_pool(observations: Iterable[Observation]) -> list[str]:
    """The replacement words: every word (lower case, sorted, so the pool is reproducible) of
    the instructions of ``observations``. Instruction words, not screen words: a tokenizer
    trained on the suites' instructions (the tiny VLM's) keeps each of them one token, so
    copying one is one step, where a screen word may be spelled in pieces."""
    pool: set[str] = set()
    for observation in observations:
        pool.update(_words(observation.instruction))
    return sorted(pool)


def copied_words(observation: Observation, action: Action) -> list[str]:
    """The words of the instruction that ``action`` writes (lower case): in its typed text, or in
    the text of the element it taps (the topmost under the point, as the device's hit test picks
    it); sorted, so a seeded swap is reproducible."""
    if action.action_type == ActionType.TYPE:
        written = _words(action.text)
    else:
        index = resolve_tap(observation.elements, *action.touch_yx) if action.is_tap else None
        if index is None:
            return []
        written = _words(observation.elements[index].text)
    return sorted(written & _words(observation.instruction))


def _substitute(text: str, swaps: dict[str, str]) -> str:
    """``text`` with every whole-word occurrence of a key of ``swaps`` (lower case; matched in
    any case) replaced by its value written in the case of that occurrence."""
    if not swaps or not text:
        return text
    pattern = re.compile(
        r"(?<![A-Za-z])(" + "|".join(re.escape(word) for word in swaps) + r")(?![A-Za-z])",
        re.IGNORECASE,
    )
    return pattern.sub(
        lambda match: _same_case(swaps[match.group(1).lower()], match.group(1)), text
    )


def _swap_action(action: Action, swaps: dict[str, str]) -> Action:
    """``action`` with its typed text swapped (a tap keeps its point: the element has not moved)."""
    if action.action_type != ActionType.TYPE:
        return action
    return replace(action, text=_substitute(action.text, swaps))


def _same_case(word: str, like: str) -> str:
    """``word`` capitalised as ``like`` is (all capitals, a capital first, or lower case)."""
    if like.isupper() and len(like) > 1:
        return word.upper()
    return word.capitalize() if like[:1].isupper() else word.lower()


class CopySwap:
    """Swaps the copied words of (observation, action) pairs with probability ``rate`` per
    pair, drawing replacements from ``pool`` (see :func:`word_pool`)."""

    def __init__(self, pool: Sequence[str], rate: float):
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"copy augmentation rate must be in [0, 1], got {rate}")
        self.pool = list(pool)
        self.rate = rate

    def __call__(
        self, observation: Observation, action: Action, rng: np.random.Generator
    ) -> tuple[Observation, Action]:
        """The pair with its copied words swapped (each for a pool word the observation does
        not already show, so no element's name becomes ambiguous), or the pair unchanged."""
        if self.rate == 0.0 or not self.pool or rng.random() >= self.rate:
            return observation, action
        copied = copied_words(observation, action)
        if not copied:
            return observation, action
        shown = set(_words(observation.instruction)).union(
            *(_words(element.text) for element in observation.elements)
        )
        swaps: dict[str, str] = {}
        for word in copied:
            for _ in range(8):  # a pool word the screen does not show; give up on a tiny pool
                candidate = self.pool[int(rng.integers(len(self.pool)))]
                if candidate not in shown:
                    swaps[word] = candidate
                    shown.add(candidate)
                    break
        if not swaps:
            return observation, action
        swapped = replace(
            observation,
            instruction=_substitute(observation.instruction, swaps),
            elements=tuple(
                replace(element, text=_substitute(element.text, swaps))
                for element in observation.elements
            ),
            previous_actions=tuple(_swap_action(a, swaps) for a in observation.previous_actions),
        )
        return swapped, _swap_action(action, swaps)
