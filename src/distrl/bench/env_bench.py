"""``distrl bench env``: raw PhoneSim speed on one core, latency model off.

Measures full environment steps: the action applied, success judged, the screen laid out and
rendered to a screenshot and the element list built, exactly what an agent receives each step.
Actions are the scripted expert's mixed with random non-terminal ones, so the figure covers the
screens agents really visit (apps, web pages, keyboard, dialogs), not one static screen.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from distrl.agents.random_agent import RandomAgent
from distrl.config.schema import PhoneSimConfig
from distrl.core.action import Action
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite


@dataclass
class EnvBenchResult:
    steps: int
    seconds: float
    resets: int
    reset_seconds: float
    expert_seconds: float
    width: int
    height: int

    def summary(self) -> dict[str, float | int]:
        return {
            "steps_per_s": round(self.steps / self.seconds, 1),
            "ms_per_step": round(1000 * self.seconds / self.steps, 3),
            "resets_per_s": round(self.resets / self.reset_seconds, 1) if self.resets else 0.0,
            "steps": self.steps,
            "resets": self.resets,
            "width": self.width,
            "height": self.height,
            "excluded_expert_ms_per_step": round(1000 * self.expert_seconds / self.steps, 3),
        }


def bench_env(
    steps: int = 3000, suite: str = "both", seed: int = 0, config: PhoneSimConfig | None = None
) -> EnvBenchResult:
    """Time ``steps`` env steps (rendering included). Choosing actions is timed separately and
    excluded: that is the agent's cost, not the device's."""
    config = (config or PhoneSimConfig()).model_copy(deep=True)
    config.latency.enabled = False
    suites = ("general", "webshop") if suite == "both" else (suite,)
    tasks = [t for s in suites for t in load_suite(s, "train")]
    rng = np.random.default_rng(seed)
    env = PhoneSimEnv(config, seed=seed)
    random_agent = RandomAgent(rng)
    step_seconds = reset_seconds = expert_seconds = 0.0
    done_steps = resets = 0
    done = True
    while done_steps < steps:
        if done:
            task = tasks[int(rng.integers(len(tasks)))]
            started = time.perf_counter()
            env.reset(task)
            reset_seconds += time.perf_counter() - started
            resets += 1
        started = time.perf_counter()
        action: Action = env.expert_action()
        if rng.random() < 0.3:
            action = random_agent.random_action()
            while action.is_status:
                action = random_agent.random_action()
        expert_seconds += time.perf_counter() - started
        started = time.perf_counter()
        _, _, done, _ = env.step(action)
        step_seconds += time.perf_counter() - started
        done_steps += 1
    return EnvBenchResult(
        done_steps, step_seconds, resets, reset_seconds, expert_seconds, config.width, config.height
    )
