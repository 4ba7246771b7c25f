"""Core data types shared by every backend, policy and algorithm."""

from distrl.core.action import Action, ActionType, format_action, parse_action
from distrl.core.observation import Observation, UIElement
from distrl.core.task import Task
from distrl.core.trajectory import Step, Trajectory

__all__ = [
    "Action",
    "ActionType",
    "Observation",
    "Step",
    "Task",
    "Trajectory",
    "UIElement",
    "format_action",
    "parse_action",
]
