"""``distrl play``: run a scripted agent (oracle, noisy oracle, random) on any backend's tasks.

Used to check the simulator and the task suites, to measure the floor and ceiling of success,
and to collect demonstrations. Completed trajectories are appended to the run folder's Parquet
store before they are counted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from distrl.agents import NoisyOracleAgent, OracleAgent, RandomAgent
from distrl.agents.base import Agent
from distrl.config.schema import RunConfig
from distrl.core.faults import DeviceFault
from distrl.core.seeds import Stream, derive_rng
from distrl.core.task import Task
from distrl.core.trajectory import Trajectory
from distrl.envs.devices import Purpose, make_device
from distrl.envs.protocol import DeviceEnv
from distrl.envs.task_sets import load_tasks, task_family
from distrl.runtime.rollout import run_episode
from distrl.runtime.run_dir import create_run_dir, write_summary
from distrl.store import TrajectoryStore

#: The command of a play run that collects demonstrations: its device is a demonstration device.
DEMOS_COMMAND = "demos"


@dataclass
class PlayResult:
    run_dir: Path
    episodes: int
    successes: int
    #: Episodes lost to a device crash or hang: dropped whole, never stored half-done.
    dropped: int = 0
    steps: list[int] = field(default_factory=list)
    per_template: dict[str, list[bool]] = field(default_factory=dict)

    @property
    def success_rate(self) -> float:
        return self.successes / self.episodes if self.episodes else 0.0

    def summary(self) -> dict[str, object]:
        return {
            "success_rate": round(self.success_rate, 4),
            "episodes": self.episodes,
            "dropped_episodes": self.dropped,
            "mean_steps": round(float(np.mean(self.steps)), 3) if self.steps else 0.0,
            "per_template": {
                name: round(float(np.mean(results)), 4)
                for name, results in sorted(self.per_template.items())
            },
            "run_dir": str(self.run_dir),
        }


def select_tasks(cfg: RunConfig) -> list[Task]:
    """The task list a config asks for: a task file if given, else the backend's split."""
    return load_tasks(cfg, cfg.env.split)


def make_agent(cfg: RunConfig, env: DeviceEnv, rng: np.random.Generator) -> Agent:
    if cfg.play.policy == "oracle":
        return OracleAgent(env)
    if cfg.play.policy == "noisy":
        return NoisyOracleAgent(env, cfg.play.noise, rng)
    return RandomAgent(rng)


def play(
    cfg: RunConfig,
    tasks: list[Task] | None = None,
    on_episode: Callable[[Trajectory], None] | None = None,
    command: str = "play",
) -> PlayResult:
    """Play ``cfg.play.episodes`` episodes, cycling through ``tasks`` (default: the config's
    selection) in a seeded order, storing every finished trajectory before counting it.

    An episode whose device crashes or hangs is dropped (``dropped_episodes``) and does not count
    towards ``episodes``; the success rate is over completed episodes. ``command`` names the run
    folder; ``"demos"`` plays on a demonstration device (no latency or fault model).
    """
    tasks = tasks if tasks is not None else select_tasks(cfg)
    rng = derive_rng(cfg.seed, Stream.PLAY)
    order = rng.permutation(len(tasks))
    run_dir = create_run_dir(cfg, command)
    purpose = Purpose.DEMONSTRATE if command == DEMOS_COMMAND else Purpose.PLAY
    env = make_device(cfg, purpose, 0)
    try:
        agent = make_agent(cfg, env, rng)
        result = _play_episodes(cfg, env, agent, tasks, order, run_dir, on_episode)
    finally:
        env.close()
    write_summary(run_dir, result.summary())
    return result


def _play_episodes(
    cfg: RunConfig,
    env: DeviceEnv,
    agent: Agent,
    tasks: list[Task],
    order: np.ndarray,
    run_dir: Path,
    on_episode: Callable[[Trajectory], None] | None,
) -> PlayResult:
    store = TrajectoryStore(run_dir / "trajectories", save_screens=cfg.play.save_screens)
    result = PlayResult(run_dir, 0, 0)
    for episode in range(cfg.play.episodes):
        task = tasks[int(order[episode % len(tasks)])]
        try:
            trajectory = run_episode(env, agent, task, device_id=_device_id(env))
        except DeviceFault:
            # The next reset restarts the device; the partial episode is dropped and counted.
            result.dropped += 1
            continue
        store.append([trajectory])
        result.episodes += 1
        result.successes += int(trajectory.success)
        result.steps.append(len(trajectory))
        result.per_template.setdefault(task_family(task), []).append(trajectory.success)
        if on_episode is not None:
            on_episode(trajectory)
    return result


def _device_id(env: DeviceEnv) -> str:
    return str(getattr(env, "device_id", "device-0"))
