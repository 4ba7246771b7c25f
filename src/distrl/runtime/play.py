"""``distrl play``: run a scripted agent (oracle, noisy oracle, random) on any backend's tasks.

Used to check the simulator and the task suites, to measure the floor and ceiling of success,
and to collect demonstrations. Completed trajectories are appended to the run folder's Parquet
store before they are counted.
"""

from __future__ import annotations

import time
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
from distrl.runtime.drops import DropLog
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
    #: Episodes lost to a device crash, a hang or an unreachable judge: dropped whole, never
    #: stored half-done, counted by cause.
    drops: DropLog = field(default_factory=DropLog)
    steps: list[int] = field(default_factory=list)
    per_template: dict[str, list[bool]] = field(default_factory=dict)

    @property
    def dropped(self) -> int:
        return self.drops.count

    @property
    def success_rate(self) -> float:
        return self.successes / self.episodes if self.episodes else 0.0

    def summary(self) -> dict[str, object]:
        return {
            "success_rate": round(self.success_rate, 4),
            "episodes": self.episodes,
            **self.drops.summary(),
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
    screenshots: bool | None = None,
) -> PlayResult:
    """Play ``cfg.play.episodes`` episodes, cycling through ``tasks`` (default: the config's
    selection) in a seeded order, storing every finished trajectory before counting it.

    An episode whose device crashes or hangs is dropped (``dropped_episodes``) and does not count
    towards ``episodes``; the success rate is over completed episodes. ``command`` names the run
    folder; ``"demos"`` plays on a demonstration device (no latency or fault model).
    ``screenshots`` says whether anyone reads the episodes' pixels (default: only when
    ``play.save_screenshots`` stores them)."""
    tasks = tasks if tasks is not None else select_tasks(cfg)
    rng = derive_rng(cfg.seed, Stream.PLAY)
    order = rng.permutation(len(tasks))
    run_dir = create_run_dir(cfg, command)
    purpose = Purpose.DEMONSTRATE if command == DEMOS_COMMAND else Purpose.PLAY
    if screenshots is None:  # the scripted agents read none: render them only to store them
        screenshots = cfg.play.save_screenshots
    env = make_device(cfg, purpose, 0, screenshots=screenshots)
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
    store = TrajectoryStore(run_dir / "trajectories", save_screenshots=cfg.play.save_screenshots)
    result = PlayResult(run_dir, 0, 0)

    def count(trajectory: Trajectory) -> None:
        _count_episode(result, trajectory, on_episode)

    with _BatchedAppends(store, on_stored=count) as appends:
        for episode in range(cfg.play.episodes):
            task = tasks[int(order[episode % len(tasks)])]
            try:
                trajectory = run_episode(env, agent, task, device_id=_device_id(env))
            except DeviceFault as fault:
                # The next reset restarts the device; the partial episode is dropped and counted.
                result.drops.record(fault)
                continue
            appends.add(trajectory)
    return result


class _BatchedAppends:
    """Episodes go to the store in batches (every ``max_episodes`` or ``max_seconds``, and on
    the way out, an error included), and count (``on_stored``) once stored: the open shard is
    rewritten whole on each append, so one append per episode would write a 256-episode shard
    256 times over."""

    def __init__(
        self,
        store: TrajectoryStore,
        on_stored: Callable[[Trajectory], None],
        max_episodes: int = 16,
        max_seconds: float = 10.0,
    ):
        self.store, self.on_stored = store, on_stored
        self.max_episodes, self.max_seconds = max_episodes, max_seconds
        self.pending: list[Trajectory] = []
        self.since = time.monotonic()

    def add(self, trajectory: Trajectory) -> None:
        if not self.pending:
            self.since = time.monotonic()
        self.pending.append(trajectory)
        due = time.monotonic() - self.since >= self.max_seconds
        if due or len(self.pending) >= self.max_episodes:
            self.flush()

    def flush(self) -> None:
        pending, self.pending = self.pending, []
        self.store.append(pending)
        for trajectory in pending:
            self.on_stored(trajectory)

    def __enter__(self) -> _BatchedAppends:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.flush()


def _count_episode(
    result: PlayResult,
    trajectory: Trajectory,
    on_episode: Callable[[Trajectory], None] | None,
) -> None:
    """Add a played episode to ``result`` and hand it to ``on_episode``."""
    result.episodes += 1
    result.successes += int(trajectory.success)
    result.steps.append(len(trajectory))
    result.per_template.setdefault(task_family(trajectory.task), []).append(trajectory.success)
    if on_episode is not None:
        on_episode(trajectory)


def _device_id(env: DeviceEnv) -> str:
    return str(getattr(env, "device_id", "device-0"))
