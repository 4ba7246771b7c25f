"""The interface of agents that choose one action per observation (scripted or learned)."""

from __future__ import annotations

from typing import Protocol

from distrl.core.action import Action
from distrl.core.observation import Observation


class Agent(Protocol):
    """Anything that picks the next action from an observation."""

    def act(self, observation: Observation) -> Action: ...


class ExpertSource(Protocol):
    """A device that can tell the scripted expert's next action (PhoneSim can)."""

    def expert_action(self) -> Action: ...
