"""A uniformly random agent over the AitW action space: the floor every policy must beat."""

from __future__ import annotations

import numpy as np

from distrl.core.action import Action, ActionType
from distrl.core.observation import Observation

_WORDS = ("hello", "ok", "search", "test", "7:30", "amazon.com", "yes", "phone")


class RandomAgent:
    """Picks an action type uniformly among the seven AitW types, then its arguments uniformly
    (DUAL_POINT: half taps, half swipes, at uniform points; TYPE: a word from a small list)."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def random_action(self) -> Action:
        kind = list(ActionType)[int(self.rng.integers(7))]
        if kind is ActionType.DUAL_POINT:
            touch = (float(self.rng.random()), float(self.rng.random()))
            if self.rng.random() < 0.5:
                return Action.tap(*touch)
            return Action.swipe(touch, (float(self.rng.random()), float(self.rng.random())))
        if kind is ActionType.TYPE:
            return Action.type_text(str(self.rng.choice(_WORDS)))
        return Action(kind)

    def act(self, observation: Observation) -> Action:
        return self.random_action()
