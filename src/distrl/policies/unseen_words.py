"""Instruction words no train instruction holds, read as one unknown word
(``policy.vlm.mask_unseen_words``).

Why: the test split words its tasks in ways the train split never does ("Jot down", "Let Name1
know by SMS", "Pull up ..."; design.md §4). A tiny model whose tokenizer was trained on the
train instructions splits such a word into pieces whose embeddings no train step shaped, so a
held-out sentence reads as the train sentence it most resembles plus noise, and the noise moves
the decision. Text classifiers trained on little data meet the same gap and close it with a
closed vocabulary: every word outside it becomes the unknown token, and word dropout in
training (the ``mask`` rewording, :mod:`distrl.algos.phrasing_augmentation`) teaches the model
what an unknown word in a sentence means: a word that says nothing it can read. A test
instruction then reads as a train-like sentence with a few words missing, which is what the
rewording trained on.

Kept as they are: every word of the known texts (the train instructions a tiny tokenizer is
trained on, case as written, since the tokenizer's tokens are), the extra known words (the
placeholders Name1, Text1, ...), every word the screen shows (an instruction word matched to an
element by its pieces still points at that element), a quoted span (a text to type) and a token
with a digit or a sign inside it (a time, a number, "maps.com", "Wi-Fi", "Name1's"), as the
rewording keeps them. The mask touches the instruction only: element texts and typed texts are
what actions refer to. What it costs: an unseen word the task needs typed ("Look up the
definition of candid") can no longer be copied, since the model reads it as the unknown word
and no TYPE candidate holds that (:mod:`distrl.policies.vlm.admissible`).

>>> unseen = UnseenWords(["Take a note: buy milk", "Write down the list"])
>>> unseen.mask("Jot down a note: buy milk")
'<unk> down a note: buy milk'
>>> unseen.mask('Jot down "Gym at 6", ok? Visit maps.com', screen_words={"Visit"})
'<unk> down "Gym at 6", <unk>? Visit maps.com'
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from distrl.core.observation import Observation

__all__ = [
    "EDGE_PUNCTUATION",
    "TOKEN_RE",
    "UNKNOWN_WORD",
    "UnseenWords",
    "letter_words",
    "prose_core",
]

#: The word an unseen word becomes, written as the tiny tokenizer's unknown token (one token
#: there); the ``mask`` rewording writes the same word in training.
UNKNOWN_WORD = "<unk>"

#: A quoted span (one token) or a run of non-space characters: how the instruction is cut into
#: tokens here and by the rewording (:mod:`distrl.algos.phrasing_augmentation`).
TOKEN_RE = re.compile(r'"[^"]*"|\S+')
#: Punctuation that may start or end a token without making it one to keep ("ok?").
EDGE_PUNCTUATION = "?!.,:;()'"
#: A run of letters (any script).
_WORD_RE = re.compile(r"[^\W\d_]+")


def letter_words(text: str) -> list[str]:
    """The runs of letters of ``text``, case as written."""
    return _WORD_RE.findall(text)


def prose_core(token: str) -> str | None:
    """``token`` without its edge punctuation when it is prose (letters and apostrophes:
    "What's"), else None: a quoted span, or a token with a digit or a sign inside ("5:30",
    "maps.com", "Wi-Fi", "Name1", the unknown word itself). Only prose is masked here and
    edited by the rewording."""
    core = token.strip(EDGE_PUNCTUATION)
    if token.startswith('"') or not core or not all(c.isalpha() or c == "'" for c in core):
        return None
    return core


class UnseenWords:
    """Masks the instruction words outside a known vocabulary (see the module docstring)."""

    def __init__(self, known_texts: Iterable[str], extra_words: Iterable[str] = ()):
        self.known = frozenset(w for text in known_texts for w in letter_words(text)) | set(
            extra_words
        )
        if not self.known:
            raise ValueError(
                "masking unseen words needs the texts whose words are known (a tiny model's "
                "tokenizer texts); got none"
            )

    def mask(self, text: str, screen_words: Iterable[str] = ()) -> str:
        """``text`` with every word of a prose token (see :func:`prose_core`) that is neither
        known nor in ``screen_words`` replaced by :data:`UNKNOWN_WORD`."""
        shown = set(screen_words)

        def masked_word(match: re.Match[str]) -> str:
            word = match.group()
            return word if word in self.known or word in shown else UNKNOWN_WORD

        def masked_token(match: re.Match[str]) -> str:
            token = match.group()
            return token if prose_core(token) is None else _WORD_RE.sub(masked_word, token)

        return TOKEN_RE.sub(masked_token, text)

    def observation(self, observation: Observation) -> Observation:
        """``observation`` with its instruction masked, keeping the words its screen shows
        (elements, screenshot and previous actions unchanged)."""
        shown = {w for element in observation.elements for w in letter_words(element.text)}
        instruction = self.mask(observation.instruction, shown)
        if instruction == observation.instruction:
            return observation
        return dataclasses.replace(observation, instruction=instruction)
