"""Task templates: how a family of PhoneSim tasks is phrased, set up, judged and solved.

A template turns parameters (a setting name, a product, a time...) into an instruction, prepares
the phone so the task is not already done, judges success from the phone's state (never from
pixels), and scripts the expert's next action. Instructions for the test split draw on parameter
values and phrasings that the train split never uses, so test success measures generalisation.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from distrl.core.action import Action
from distrl.envs.phonesim.expert import Expert
from distrl.envs.phonesim.phone import PhoneSim

Params = dict[str, Any]

#: Share of each value pool (and of each template's phrasings) held out for the test split.
TEST_SHARE = 0.3


def in_test_split(value: object, salt: str) -> bool:
    """Whether ``value`` is held out for the test split (a stable hash, not a draw)."""
    digest = hashlib.blake2b(f"{salt}\x1f{value}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64 < TEST_SHARE


def split_values(values: Sequence[Any], split: str, salt: str) -> list[Any]:
    """The values of ``values`` that belong to ``split``; each split is non-empty."""
    test = [v for v in values if in_test_split(v, salt)]
    train = [v for v in values if not in_test_split(v, salt)]
    if not test:  # tiny pools: keep at least one value on each side
        test, train = train[-1:], train[:-1]
    if not train:
        train, test = test[:1], test[1:]
    return test if split == "test" else train


def split_phrasings(phrasings: Sequence[str], split: str) -> list[str]:
    """Phrasings are split by position: the last ~30% (at least one) are test-only."""
    cut = max(1, round(len(phrasings) * (1 - TEST_SHARE)))
    cut = min(cut, len(phrasings) - 1)
    return list(phrasings[cut:] if split == "test" else phrasings[:cut])


class TaskTemplate(ABC):
    """One family of tasks. Subclasses are small; see ``general.py`` and ``webshop.py``."""

    #: Unique name, stored in the task spec (``{"template": name, "params": {...}}``).
    name: str = ""
    suite: str = ""
    #: Phrasings with ``{placeholders}`` filled from the parameters.
    phrasings: tuple[str, ...] = ()

    @abstractmethod
    def sample_params(self, rng: np.random.Generator, split: str) -> Params:
        """Draw parameters for ``split`` (test draws use held-out values where the template has
        a value pool). Must be JSON-serialisable."""

    def instruction(self, params: Params, rng: np.random.Generator, split: str) -> str:
        phrasings = split_phrasings(self.phrasings, split)
        return phrasings[int(rng.integers(len(phrasings)))].format(**params)

    def setup(self, phone: PhoneSim, params: Params, rng: np.random.Generator) -> None:  # noqa: B027
        """Prepare the phone so that the task is not already solved (default: nothing)."""

    @abstractmethod
    def is_success(self, phone: PhoneSim, params: Params) -> bool:
        """Judge success from the phone's state."""

    @abstractmethod
    def expert_action(self, expert: Expert, params: Params) -> Action:
        """The scripted expert's next action from the phone's current state."""
