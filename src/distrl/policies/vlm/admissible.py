"""Admissible actions: decoding restricted to the action texts that mean something on this screen.

Why. A model that writes free text can write an action that names nothing on the screen: a
contact it memorised from the demonstrations instead of the one the instruction names, a
misspelt element, a format the parser rejects. With ``policy.vlm.admissible_actions`` (it needs
``policy.vlm.element_list``) the policy only ever writes the canonical text of one of these:

* a tap on each listed element (its reference text, by index or name, as the prompt lists it),
* TYPE of each candidate text of the instruction (the small policy's TYPE choices, from
  :func:`~distrl.policies.candidates.extract_candidates`: quoted spans, names, times, clause
  tails, word n-grams), leaving out any that holds a masked word
  (``policy.vlm.mask_unseen_words``),
* a swipe up and a swipe down (the small policy's default points),
* PRESS_BACK, PRESS_HOME, PRESS_ENTER, STATUS_TASK_COMPLETE and STATUS_TASK_IMPOSSIBLE.

The texts' token ids (end-of-sequence included) form a trie, and at each step the model's
distribution is renormalised over the tokens that continue some admissible text
(:class:`TokenTrie`, :func:`admissible_mask`). Choosing an action is then choosing among a few
dozen texts, scored by the model token by token; what is left to learn is which one, not how
to spell it. Accessibility-tree agents constrain their output to the elements on screen in the
same spirit.

Log-probs are those of the renormalised distribution, in ``act`` and ``score_actions`` alike, so
behaviour and target log-probs agree and the probabilities of a screen's admissible texts sum
to 1. An action outside the set (a demonstration's swipe to an exact point, a text no candidate
holds) is scored over the set plus itself, so cloning still learns from it; the acting policy
can never write it. Admissible texts longer than ``max_new_tokens`` are left out, so a generated
text always ends within the limit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch

from distrl.core.action import Action
from distrl.core.observation import Observation
from distrl.policies.candidates import extract_candidates
from distrl.policies.features import tap_point
from distrl.policies.small import SmallPolicyConfig
from distrl.policies.unseen_words import UNKNOWN_WORD

__all__ = ["MASKED", "TokenTrie", "admissible_actions", "admissible_mask"]

#: The additive logit of an inadmissible token: exp() of it is exactly 0 in float32, and it stays
#: finite, so p * log p is 0 (not NaN) in the entropy.
MASKED = -1e9

_SMALL = SmallPolicyConfig()
#: The two admissible swipes, up and down between the small policy's default points (inside the
#: scroll area of a phone screen even with the keyboard up), and the argument-free actions.
_FIXED = (
    Action.swipe((_SMALL.swipe_from_y, _SMALL.swipe_x), (_SMALL.swipe_to_y, _SMALL.swipe_x)),
    Action.swipe((_SMALL.swipe_to_y, _SMALL.swipe_x), (_SMALL.swipe_from_y, _SMALL.swipe_x)),
    Action.press_back(),
    Action.press_home(),
    Action.press_enter(),
    Action.complete(),
    Action.impossible(),
)


def admissible_actions(observation: Observation, listed: int) -> list[Action]:
    """The actions the policy may take on ``observation``: taps on its first ``listed``
    elements, TYPE of each instruction candidate, two swipes and the argument-free actions."""
    return [
        *(Action.tap(*tap_point(element)) for element in observation.elements[:listed]),
        *(
            Action.type_text(text)
            for text in extract_candidates(observation.instruction)
            if UNKNOWN_WORD not in text  # a masked word (policy.vlm.mask_unseen_words)
        ),
        *_FIXED,
    ]


class TokenTrie:
    """A set of token sequences, asked which tokens may follow a prefix.

    >>> trie = TokenTrie([[5, 6, 0], [5, 7, 0], [8, 0]])
    >>> trie.allowed([]), trie.allowed([5]), trie.allowed([5, 7]), trie.allowed([9])
    ([5, 8], [6, 7], [0], None)
    """

    def __init__(self, sequences: Iterable[Sequence[int]]):
        self.root: dict[int, dict] = {}
        for sequence in sequences:
            self.add(sequence)

    def add(self, sequence: Sequence[int]) -> None:
        node = self.root
        for token in sequence:
            node = node.setdefault(int(token), {})

    def allowed(self, prefix: Sequence[int]) -> list[int] | None:
        """The tokens that continue ``prefix`` (sorted), or ``None`` when no sequence starts
        with it (past an end-of-sequence token, say)."""
        node = self.root
        for token in prefix:
            child = node.get(int(token))
            if child is None:
                return None
            node = child
        return sorted(node)


def admissible_mask(
    trie: TokenTrie, tokens: Sequence[int], vocabulary: int, device: torch.device
) -> torch.Tensor:
    """The additive logit mask ``[len(tokens), vocabulary]`` for scoring ``tokens`` one step at
    a time: 0 where a token continues an admissible text after the tokens before it,
    :data:`MASKED` elsewhere. A step whose prefix has left the trie is not masked (only the
    steps of a text the trie holds are scored, so it does not arise there)."""
    mask = torch.full((len(tokens), vocabulary), MASKED, device=device)
    for step in range(len(tokens)):
        allowed = trie.allowed(tokens[:step])
        if allowed is None:
            mask[step] = 0.0
        else:
            mask[step, allowed] = 0.0
    return mask
