"""PhoneSim behind gymnasium's API: ``gymnasium.make("distrl/PhoneSim-v0", suite="general")``.

Actions are a ``Dict`` space mirroring :class:`~distrl.core.action.Action` (type index, two
``[y, x]`` points, typed text); a canonical action string (what an LLM emits) is accepted too and
parsed. Observations hold the screenshot and the instruction; the element list, success and the
task travel in ``info`` because their sizes vary from step to step.
"""

from __future__ import annotations

import string
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from distrl.config.schema import PhoneSimConfig
from distrl.core.action import VALID_ACTION_TYPES, Action, ActionType, parse_action
from distrl.core.observation import Observation
from distrl.core.task import Task
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.envs.task_file import load_task_file
from distrl.errors import InputError

INSTRUCTION_CHARSET = string.printable
MAX_INSTRUCTION = 512
MAX_TEXT = 64


def action_from_dict(action: dict[str, Any]) -> Action:
    """The :class:`Action` a ``Dict``-space sample stands for (invalid if out of range)."""
    index = int(action["action_type"])
    if not 0 <= index < len(VALID_ACTION_TYPES):
        return Action.invalid(f"action_type index {index} out of range")
    kind = VALID_ACTION_TYPES[index]
    if kind is ActionType.DUAL_POINT:
        touch = tuple(float(v) for v in np.clip(action["touch_yx"], 0.0, 1.0))
        lift = tuple(float(v) for v in np.clip(action["lift_yx"], 0.0, 1.0))
        return Action.dual_point(touch, lift)  # type: ignore[arg-type]
    if kind is ActionType.TYPE:
        text = str(action.get("text", ""))
        return Action.type_text(text) if text else Action.invalid("TYPE with empty text")
    return Action(kind)


class PhoneSimGymEnv(gym.Env):
    """One PhoneSim device as a gymnasium environment.

    ``reset(options={"task": Task | task_id})`` picks the task; without it a task of the suite
    is drawn with the env's seeded generator.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 2}

    def __init__(
        self,
        suite: str = "general",
        split: str = "train",
        task_file: str | None = None,
        config: PhoneSimConfig | dict[str, Any] | None = None,
        render_mode: str | None = None,
    ):
        if isinstance(config, dict):
            config = PhoneSimConfig(**config)
        self.config = config if config is not None else PhoneSimConfig()
        self.tasks = load_task_file(task_file) if task_file else load_suite(suite, split)
        if not self.tasks:
            raise InputError(f"no tasks to run (suite {suite!r}, split {split!r})")
        self._by_id = {task.task_id: task for task in self.tasks}
        self.render_mode = render_mode
        self.device = PhoneSimEnv(self.config, seed=0)
        height, width = self.config.height, self.config.width
        self.observation_space = spaces.Dict(
            {
                "screenshot": spaces.Box(0, 255, (height, width, 3), np.uint8),
                "instruction": spaces.Text(MAX_INSTRUCTION, charset=INSTRUCTION_CHARSET),
            }
        )
        self.action_space = spaces.Dict(
            {
                "action_type": spaces.Discrete(len(VALID_ACTION_TYPES)),
                "touch_yx": spaces.Box(0.0, 1.0, (2,), np.float32),
                "lift_yx": spaces.Box(0.0, 1.0, (2,), np.float32),
                "text": spaces.Text(MAX_TEXT, min_length=1),
            }
        )
        self._last: Observation | None = None

    def _gym_obs(self, observation: Observation) -> dict[str, Any]:
        return {"screenshot": observation.screenshot, "instruction": observation.instruction}

    def _info(self, observation: Observation, extra: dict[str, Any]) -> dict[str, Any]:
        assert self.device.task is not None
        return {"elements": observation.elements, "task_id": self.device.task.task_id, **extra}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self.device = PhoneSimEnv(self.config, seed=seed)
        chosen = (options or {}).get("task")
        if isinstance(chosen, Task):
            task = chosen
        elif isinstance(chosen, str):
            if chosen not in self._by_id:
                raise InputError(f"unknown task id {chosen!r}")
            task = self._by_id[chosen]
        else:
            task = self.tasks[int(self.np_random.integers(len(self.tasks)))]
        observation = self.device.reset(task)
        self._last = observation
        return self._gym_obs(observation), self._info(observation, {"success": False})

    def step(self, action: dict[str, Any] | str | Action):
        if isinstance(action, str):
            action = parse_action(action)
        elif isinstance(action, dict):
            action = action_from_dict(action)
        observation, reward, done, info = self.device.step(action)
        self._last = observation
        truncated = bool(info["truncated"])
        terminated = done and not truncated
        return (
            self._gym_obs(observation),
            reward,
            terminated,
            truncated,
            self._info(observation, info),
        )

    def render(self) -> np.ndarray | None:
        if self.render_mode == "rgb_array" and self._last is not None:
            return self._last.screenshot
        return None

    def close(self) -> None:
        self.device.close()
