"""Shared fixtures of the runtime tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
import ray

from distrl.algos.registry import build_algorithm
from distrl.config.schema import RunConfig
from distrl.core.trajectory import Trajectory
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.policies.small import SmallPolicy, SmallPolicyConfig
from distrl.runtime.replay_service import ReplayService
from distrl.runtime.worker import Worker


@pytest.fixture(scope="module")
def episodes() -> list[Trajectory]:
    """12 finished general-suite train episodes of an untrained small policy on 3 devices."""
    tasks = load_suite("general", "train")
    rng = np.random.default_rng(0)
    worker = Worker(
        [PhoneSimEnv(seed=i) for i in range(3)],
        SmallPolicy(SmallPolicyConfig()),
        lambda: tasks[int(rng.integers(len(tasks)))],
        seed=0,
    )
    return worker.collect(12)[:12]


@pytest.fixture
def episode_replay(episodes: list[Trajectory]) -> ReplayService:
    """A fresh replay of :func:`episodes` in 4-step windows that never withdraws one as stale."""
    replay = ReplayService(
        build_algorithm(RunConfig()), window=4, capacity=500, max_staleness=10**9,
        keep_screenshots=False,
    )  # fmt: skip
    replay.ingest(episodes)
    return replay


#: The train settings of a run small enough for a test: 2 devices, rounds of 2 episodes and 2
#: updates, no warm start, 2-episode evaluations.
TINY_RUN = {
    "devices": 2,
    "episodes_per_round": 2,
    "updates_per_round": 2,
    "min_replay": 4,
    "batch_size": 4,
    "eval_episodes": 2,
    "final_eval_episodes": 2,
    "warm_start_episodes": 0,
    "minutes": 10,
}


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A local Ray with 2 CPUs and the 2 devices a tiny run asks for."""
    ray.init(num_cpus=2, resources={"distrl_device": TINY_RUN["devices"]}, include_dashboard=False)
    yield
    ray.shutdown()


@pytest.fixture
def tiny_run() -> Callable[[Path, str, int], RunConfig]:
    """Builds a tiny run's config: under a run root, on the serial runtime or Ray's sync one
    (one worker), stopping after a number of updates."""

    def build(run_root: Path, runtime: str, max_updates: int) -> RunConfig:
        cfg = RunConfig()
        cfg.run_root = str(run_root)
        for key, value in TINY_RUN.items():
            setattr(cfg.train, key, value)
        cfg.train.max_updates = max_updates
        if runtime == "ray":
            cfg.train.runtime, cfg.train.mode = "ray", "sync"
            cfg.ray.workers, cfg.ray.call_timeout_seconds = 1, 120
        return cfg

    return build
