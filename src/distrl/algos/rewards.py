"""Reward shaping for learning (docs/design.md §7): success, minus what wastes device time.

The device reports success only (1 or 0). The learner adds a small cost per step (shorter
solutions are better: real steps cost seconds), a penalty for an invalid action (malformed model
output) and one for repeating the previous action verbatim (the commonest way a weak agent burns
its horizon). Kept apart from the environment so every backend and baseline shares one definition.
"""

from __future__ import annotations

from dataclasses import dataclass

from distrl.core.trajectory import Trajectory


@dataclass(frozen=True)
class RewardShaping:
    step_cost: float = 0.01
    invalid_penalty: float = 0.1
    repeat_penalty: float = 0.05
    #: Charge the step cost on failed episodes too. Off, only successes pay it: they still prefer
    #: the shorter path, while a task not solved yet no longer makes the shortest failure (ending
    #: the episode at once) the best policy, which stops the exploration that would solve it.
    step_cost_on_failure: bool = True


def shaped_rewards(trajectory: Trajectory, shaping: RewardShaping) -> list[float]:
    """One learning reward per step: the device's reward minus the shaping terms.

    >>> from distrl.core import Action, Observation, Step, Task
    >>> import numpy as np
    >>> obs = Observation(np.zeros((1, 1, 3), np.uint8), "x")
    >>> steps = [Step(obs, Action.press_back(), 0.0, False), Step(obs, Action.press_back(), 1.0,
    ...          True)]
    >>> rewards = shaped_rewards(Trajectory(Task("t", "x", "general", "train"), steps, True),
    ...                          RewardShaping(0.01, 0.1, 0.05))
    >>> [round(r, 6) for r in rewards]
    [-0.01, 0.94]
    """
    rewards = []
    previous = None
    step_cost = shaping.step_cost if trajectory.success or shaping.step_cost_on_failure else 0.0
    for step in trajectory.steps:
        reward = step.reward - step_cost
        if not step.action.is_valid:
            reward -= shaping.invalid_penalty
        if previous is not None and step.action == previous:
            reward -= shaping.repeat_penalty
        rewards.append(reward)
        previous = step.action
    return rewards
