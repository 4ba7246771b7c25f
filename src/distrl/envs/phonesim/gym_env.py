"""PhoneSim behind gymnasium's API: ``gymnasium.make("distrl/PhoneSim-v0", suite="general")``.

Actions are a ``Dict`` space mirroring :class:`~distrl.core.action.Action` (type index, two
``[y, x]`` points, typed text); a canonical action string (what an LLM emits) is accepted too and
parsed. Observations hold the screenshot and the instruction, and with ``elements=True`` the
element list too, as JSON text (:func:`elements_to_json`; a fixed-size space, so vector envs and
their shared memory carry it); the element list, success and the task are always in ``info``.

Text observations are :class:`SharedText` spaces: gymnasium's ``AsyncVectorEnv`` with shared
memory (its default) reads a ``Text`` observation out of shared memory once, when it is built,
and returns that stale tuple (``'000...0'``) after every reset and step; ``SharedText``'s shared
memory is read when the observation is read, so vector envs return the real instructions.

Every suite and split is registered as its own id too: ``distrl/PhoneSim-general-test-v0``,
``distrl/PhoneSim-webshop-train-v0``...
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterator, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from distrl.config.schema import PhoneSimConfig
from distrl.core.action import VALID_ACTION_TYPES, Action, ActionType, parse_action
from distrl.core.observation import Observation, UIElement
from distrl.core.task import Task
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.envs.task_file import load_task_file
from distrl.errors import InputError

INSTRUCTION_CHARSET = string.printable
MAX_INSTRUCTION = 512
MAX_TEXT = 64
#: Longest element list, as JSON text; elements past it are left out of the observation.
MAX_ELEMENTS_JSON = 16384


class SharedText(spaces.Text):
    """A ``Text`` space whose vector-env shared memory is read when read (module docstring)."""


class SharedTexts(Sequence[str]):
    """The texts of ``n`` envs, decoded from shared memory on access (a live view, as the
    shared-memory arrays of a ``Box`` observation are); a deep copy is a plain tuple."""

    def __init__(self, space: SharedText, memory: Any, n: int):
        self.space, self.memory, self.n = space, memory, n

    def _codes(self) -> np.ndarray:
        return np.frombuffer(self.memory.get_obj(), dtype=np.int32).reshape(
            self.n, self.space.max_length
        )

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self)[index]
        characters, size = self.space.character_list, len(self.space.character_set)
        return "".join(characters[code] for code in self._codes()[index] if code < size)

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(self.n))

    def __eq__(self, other: object) -> bool:
        return tuple(self) == (tuple(other) if isinstance(other, Sequence) else other)

    def __repr__(self) -> str:
        return repr(tuple(self))

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)


def _register_shared_text() -> None:
    """Teach gymnasium's shared-memory reader about :class:`SharedText` (creating and writing
    stay ``Text``'s)."""
    from gymnasium.vector.utils import read_from_shared_memory

    @read_from_shared_memory.register(SharedText)
    def _read(space: SharedText, shared_memory: Any, n: int = 1) -> SharedTexts:
        return SharedTexts(space, shared_memory, n)


_register_shared_text()


def elements_to_json(elements: Sequence[UIElement], limit: int = MAX_ELEMENTS_JSON) -> str:
    """The element list as ASCII JSON of at most ``limit`` characters (the last elements are
    left out when it would be longer); :func:`distrl.envs.gym_backend.elements_from_json` reads
    it back."""
    items = [
        {
            "text": e.text,
            "bbox": list(e.bbox),
            "clickable": e.clickable,
            "resource_id": e.resource_id,
            "kind": e.kind,
            "checked": e.checked,
            "focused": e.focused,
        }
        for e in elements
    ]
    while True:
        text = json.dumps(items, ensure_ascii=True, separators=(",", ":"))
        if len(text) <= limit:
            return text
        items.pop()


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
        elements: bool = False,
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
        observed: dict[str, spaces.Space[Any]] = {
            "screenshot": spaces.Box(0, 255, (height, width, 3), np.uint8),
            "instruction": SharedText(MAX_INSTRUCTION, charset=INSTRUCTION_CHARSET),
        }
        self.elements = elements
        if elements:
            observed["elements"] = SharedText(
                MAX_ELEMENTS_JSON, min_length=2, charset=INSTRUCTION_CHARSET
            )
        self.observation_space = spaces.Dict(observed)
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
        observed = {"screenshot": observation.screenshot, "instruction": observation.instruction}
        if self.elements:
            observed["elements"] = elements_to_json(observation.elements)
        return observed

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
