"""PhoneSim as a :class:`~distrl.envs.protocol.DeviceEnv`: one simulated device.

An episode: ``reset(task)`` builds a fresh phone (seeded world, the task's setup, this episode's
dynamics), then each ``step(action)`` applies the action, judges success from the phone's state
and returns the next observation. The episode ends when the task is done (as DigiRL's per-step
autoevaluator ends it), when the agent declares STATUS_TASK_COMPLETE / IMPOSSIBLE, or at the
task's horizon (``info["truncated"]``). Reward is the evaluator's success, 1 or 0; shaping (step
cost, invalid-action penalty) belongs to the algorithm, not the device.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from distrl.config.schema import PhoneSimConfig
from distrl.core.action import Action
from distrl.core.faults import DeviceCrashed, DeviceFault
from distrl.core.observation import NO_SCREENSHOT, Observation
from distrl.core.task import Task
from distrl.envs.phonesim.apps import build_apps
from distrl.envs.phonesim.expert import Expert
from distrl.envs.phonesim.latency import LatencyModel
from distrl.envs.phonesim.phone import PhoneSim
from distrl.envs.phonesim.render import Renderer
from distrl.envs.phonesim.tasks.base import TaskTemplate
from distrl.envs.phonesim.tasks.registry import TEMPLATES
from distrl.envs.phonesim.world import populate_world
from distrl.envs.protocol import StepRules
from distrl.errors import InputError


class TaskError(InputError):
    """A task this backend cannot run (wrong backend, unknown template)."""


class PhoneSimEnv(StepRules):
    """One simulated phone.

    >>> from distrl.envs.phonesim.tasks.suites import load_suite
    >>> env = PhoneSimEnv(seed=0)
    >>> obs = env.reset(load_suite("general", "train")[0])
    >>> obs.screenshot.shape
    (720, 360, 3)
    """

    def __init__(
        self, config: PhoneSimConfig | None = None, seed: int = 0, device_id: str = "phonesim-0"
    ):
        self.config = config if config is not None else PhoneSimConfig()
        self.seed = seed
        self.device_id = device_id
        self.apps = build_apps()
        self.renderer = Renderer(self.config.width, self.config.height)
        self._device_rng = np.random.default_rng([seed, 0xD15])
        self.latency = LatencyModel(self.config.latency, self._device_rng, device_id)
        self.episodes = 0
        self.phone: PhoneSim | None = None
        self.task: Task | None = None
        self.template: TaskTemplate | None = None
        self.steps = 0
        self.done = True
        self.crashed = False
        self.actions: list[Action] = []

    # -- DeviceEnv -------------------------------------------------------------------------------
    def reset(self, task: Task) -> Observation:
        if task.backend != "phonesim":
            raise TaskError(f"task {task.task_id} is for backend {task.backend!r}, not phonesim")
        template = TEMPLATES.get(task.spec.get("template", ""))
        if template is None:
            raise TaskError(
                f"task {task.task_id}: unknown PhoneSim template {task.spec.get('template')!r}"
            )
        self.latency.reset()
        episode_seed = int(np.random.default_rng([self.seed, self.episodes]).integers(2**31))
        self.episodes += 1
        rng = np.random.default_rng(episode_seed)
        phone = PhoneSim(self.apps, self.config.dynamics, rng, episode_seed)
        populate_world(phone.state, rng)
        template.setup(phone, task.spec.get("params", {}), rng)
        phone.invalidate()
        self.phone, self.task, self.template = phone, task, template
        self.steps = 0
        self.done = False
        self.crashed = False
        self.actions = []
        return self.observe()

    def step(self, action: Action) -> tuple[Observation, float, bool, dict[str, Any]]:
        if self.crashed:
            raise DeviceCrashed(f"device {self.device_id} is down; reset it to restart")
        if self.done or self.phone is None:
            raise RuntimeError("step() called on a finished episode; call reset(task) first")
        try:
            seconds = self.latency.step(action)
        except DeviceFault:
            self.crashed = True  # crashed or hung: either way it needs a restart (reset)
            raise
        phone = self.phone
        event = phone.apply(action) if not action.is_status else action.action_type.value
        self.steps += 1
        self.actions.append(action)
        success = self.is_success()
        info = self._finish_step(action, event=event, success=success, device_seconds=seconds)
        return self.observe(), float(success), self.done, info

    def close(self) -> None:
        self.phone = None
        self.done = True

    # -- helpers ---------------------------------------------------------------------------------
    def is_success(self) -> bool:
        assert self.phone is not None and self.template is not None and self.task is not None
        return bool(self.template.is_success(self.phone, self.task.spec.get("params", {})))

    def observe(self) -> Observation:
        assert self.phone is not None and self.task is not None
        # Building the screen and the theme may draw from the phone's RNG (a theme is drawn the
        # first time an app is shown): do both, in this order, with or without a screenshot, so
        # both see the same dynamics, step for step.
        screen = self.phone.screen()
        theme = self.phone.theme()
        rendered = self.config.screenshots
        screenshot = self.renderer.render(screen, theme) if rendered else NO_SCREENSHOT
        return Observation(
            screenshot=screenshot,
            instruction=self.task.instruction,
            elements=self.phone.elements(),
            previous_actions=tuple(self.actions),
        )

    def expert_action(self) -> Action:
        """The scripted expert's next action (privileged: reads the phone's state)."""
        assert self.phone is not None and self.template is not None and self.task is not None
        if self.is_success():
            return Action.complete()
        return self.template.expert_action(Expert(self.phone), self.task.spec.get("params", {}))
