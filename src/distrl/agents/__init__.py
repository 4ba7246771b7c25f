"""Agents that act on devices: scripted (oracle, noisy oracle, random) and, later, learned."""

from distrl.agents.base import Agent
from distrl.agents.noisy import NoisyOracleAgent
from distrl.agents.oracle import OracleAgent
from distrl.agents.random_agent import RandomAgent

__all__ = ["Agent", "NoisyOracleAgent", "OracleAgent", "RandomAgent"]
