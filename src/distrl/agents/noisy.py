"""The noisy oracle: the expert with a given probability of a random action instead.

Weak demonstrations for warm starts (DigiRL and DistRL start from a weak pretrained agent); the
random actions never declare the episode finished, so noise costs steps rather than ending
episodes outright.
"""

from __future__ import annotations

import numpy as np

from distrl.agents.base import ExpertSource
from distrl.agents.random_agent import RandomAgent
from distrl.core.action import Action
from distrl.core.observation import Observation


class NoisyOracleAgent:
    def __init__(self, device: ExpertSource, noise: float, rng: np.random.Generator):
        if not 0.0 <= noise <= 1.0:
            raise ValueError(f"noise must lie in [0, 1], got {noise}")
        self.device = device
        self.noise = noise
        self.rng = rng
        self._random = RandomAgent(rng)

    def act(self, observation: Observation) -> Action:
        if self.rng.random() < self.noise:
            action = self._random.random_action()
            while action.is_status:
                action = self._random.random_action()
            return action
        return self.device.expert_action()
