"""``env.backend=gym:ENV_ID``: any registered gymnasium environment as distrl devices.

The env's actions are either text (a ``Text`` action space: the canonical action string an LLM
writes, :func:`~distrl.core.action.format_action`) or distrl's ``Dict`` action space
(``action_type``, ``touch_yx``, ``lift_yx``, ``text``, as ``distrl/PhoneSim-v0`` has);
``env.gym.action`` forces one. Observations become :class:`~distrl.core.observation.Observation`:
a ``Dict`` observation's ``screenshot``, ``instruction`` and ``elements`` (a JSON element list, as
PhoneSim's ``elements=True`` option gives), an image ``Box`` as the screenshot alone; the element
list may come in ``info["elements"]`` instead. Success is ``info["success"]`` where the env
reports it, else a terminated episode with a positive reward.

Tasks are seeds: task ``i`` of a split resets the env with its own seed (the test split's seeds
lie apart from the train split's), so a run's train and test episodes differ, and an env that
draws its task from the seed (PhoneSim's does) gives a task set of ``env.gym.tasks`` tasks.
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np

from distrl.config.schema import RunConfig
from distrl.core.action import VALID_ACTION_TYPES, Action, format_action
from distrl.core.observation import NO_SCREENSHOT, Observation, UIElement
from distrl.core.task import Task
from distrl.envs.protocol import STEP_INFO_KEYS, DeviceEnv, episode_end, step_info
from distrl.errors import InputError

#: The test split's seeds start here (the train split's at 0).
TEST_SEED_OFFSET = 1_000_000
#: The keys of distrl's ``Dict`` action space.
DICT_ACTION_KEYS = {"action_type", "touch_yx", "lift_yx", "text"}


def env_id_of(cfg: RunConfig) -> str:
    return cfg.env.backend.partition(":")[2]


def action_to_dict(action: Action) -> dict[str, Any]:
    """``action`` as a sample of distrl's ``Dict`` action space (the inverse of
    :func:`distrl.envs.phonesim.gym_env.action_from_dict`; an INVALID action gets the index past
    the valid types, which that function reads as invalid)."""
    kind = action.action_type
    index = (
        VALID_ACTION_TYPES.index(kind) if kind in VALID_ACTION_TYPES else len(VALID_ACTION_TYPES)
    )
    touch = tuple(min(max(v, 0.0), 1.0) for v in action.touch_yx)
    lift = tuple(min(max(v, 0.0), 1.0) for v in action.lift_yx)
    return {
        "action_type": index,
        "touch_yx": np.asarray(touch, dtype=np.float32),
        "lift_yx": np.asarray(lift, dtype=np.float32),
        "text": action.text or " ",
    }


def elements_from_json(text: str) -> tuple[UIElement, ...]:
    """The element list a JSON observation carries (:func:`elements_to_json`'s inverse)."""
    return tuple(
        UIElement(
            text=str(item["text"]),
            bbox=tuple(float(v) for v in item["bbox"]),  # type: ignore[arg-type]
            clickable=bool(item["clickable"]),
            resource_id=str(item["resource_id"]),
            kind=str(item.get("kind", "text")),
            checked=item.get("checked"),
            focused=bool(item.get("focused", False)),
        )
        for item in json.loads(text or "[]")
    )


class GymDevice:
    """One gymnasium env behind :class:`~distrl.envs.protocol.DeviceEnv`."""

    def __init__(self, env: Any, env_id: str, action_mode: str, screenshots: bool, device_id: str):
        self.env, self.env_id, self.device_id = env, env_id, device_id
        self.screenshots = screenshots
        self.action_mode = _action_mode(env.action_space, action_mode, env_id)
        self.task: Task | None = None
        self.steps = 0
        self.instruction = ""

    def reset(self, task: Task) -> Observation:
        observation, info = self.env.reset(seed=int(task.spec.get("seed", 0)))
        self.task, self.steps = task, 0
        self.instruction = task.instruction
        return self._observation(observation, info)

    def step(self, action: Action) -> tuple[Observation, float, bool, dict[str, Any]]:
        assert self.task is not None, "step() before reset()"
        started = time.monotonic()
        sent: Any = format_action(action) if self.action_mode == "text" else action_to_dict(action)
        observation, reward, terminated, truncated, info = self.env.step(sent)
        self.steps += 1
        success = bool(info.get("success", terminated and float(reward) > 0))
        done, horizon_cut = episode_end(success, action.is_status, self.steps, self.task.horizon)
        done = done or terminated or truncated
        extra = {k: v for k, v in info.items() if k not in STEP_INFO_KEYS and k != "elements"}
        return (
            self._observation(observation, info),
            float(reward),
            done,
            step_info(
                event=str(info.get("event", "step")),
                success=success,
                truncated=bool(truncated or horizon_cut) and not success,
                steps=self.steps,
                action=action,
                device_seconds=time.monotonic() - started,
                invalid_reason=str(info.get("invalid_reason", "")),
                **extra,
            ),
        )

    def _observation(self, observation: Any, info: dict[str, Any]) -> Observation:
        screenshot, elements = NO_SCREENSHOT, info.get("elements", ())
        if isinstance(observation, dict):
            self.instruction = str(observation.get("instruction", self.instruction))
            if self.screenshots and "screenshot" in observation:
                screenshot = np.asarray(observation["screenshot"], dtype=np.uint8)
            if "elements" in observation:
                elements = elements_from_json(str(observation["elements"]))
        elif self.screenshots and isinstance(observation, np.ndarray) and observation.ndim == 3:
            screenshot = observation.astype(np.uint8)
        return Observation(screenshot, self.instruction, tuple(elements))

    def close(self) -> None:
        self.env.close()


def _action_mode(space: Any, wanted: str, env_id: str) -> str:
    from gymnasium import spaces

    is_text = isinstance(space, spaces.Text)
    is_dict = isinstance(space, spaces.Dict) and set(space.spaces) >= DICT_ACTION_KEYS
    if wanted == "auto":
        if is_text or is_dict:
            return "text" if is_text else "dict"
        raise InputError(
            f"env.backend=gym:{env_id}: its action space {space} is neither Text nor distrl's "
            f"Dict ({', '.join(sorted(DICT_ACTION_KEYS))}); wrap the env so it takes one"
        )
    if (wanted == "text" and not is_text) or (wanted == "dict" and not is_dict):
        raise InputError(f"env.gym.action={wanted}: gym:{env_id} has action space {space}")
    return wanted


class GymBackend:
    """Devices are ``gymnasium.make(ENV_ID)`` envs; tasks are seeds (module docstring)."""

    def make_device(
        self, cfg: RunConfig, *, slot: int, seed: int, models_latency: bool, screenshots: bool
    ) -> DeviceEnv:
        import gymnasium  # distrl's own ids were registered when distrl was imported

        env_id = env_id_of(cfg)
        try:
            env = gymnasium.make(env_id)
        except gymnasium.error.Error as error:
            raise InputError(
                f"env.backend=gym:{env_id}: gymnasium cannot make it ({error}); is the package "
                "that registers it imported (an entry point, or module:attribute)?"
            ) from None
        env.action_space.seed(seed)
        return GymDevice(env, env_id, cfg.env.gym.action, screenshots, f"gym-{slot}")

    def tasks(self, cfg: RunConfig, split: str) -> list[Task]:
        env_id, gym = env_id_of(cfg), cfg.env.gym
        first = TEST_SEED_OFFSET if split == "test" else 0
        return [
            Task(
                task_id=f"{env_id}-{split}-{i:04d}",
                instruction="",
                suite=env_id,
                split=split,
                backend="gym",
                spec={"seed": first + i},
                horizon=gym.horizon,
            )
            for i in range(gym.tasks)
        ]

    def label(self, cfg: RunConfig) -> str:
        return cfg.env.backend


GYM = GymBackend()
