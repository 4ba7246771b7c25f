"""The oracle: PhoneSim's scripted expert as an agent (privileged: it reads simulator state)."""

from __future__ import annotations

from distrl.agents.base import ExpertSource
from distrl.core.action import Action
from distrl.core.observation import Observation


class OracleAgent:
    """Acts as the task template's expert script says. Bound to one device.

    >>> from distrl.envs.phonesim.env import PhoneSimEnv
    >>> from distrl.envs.phonesim.tasks.suites import load_suite
    >>> env = PhoneSimEnv(seed=0)
    >>> obs = env.reset(load_suite("general", "train")[0])
    >>> OracleAgent(env).act(obs).is_valid
    True
    """

    def __init__(self, device: ExpertSource):
        self.device = device

    def act(self, observation: Observation) -> Action:
        return self.device.expert_action()
