"""Shared fixtures of the runtime tests."""

from __future__ import annotations

import numpy as np
import pytest

from distrl.core.trajectory import Trajectory
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.policies.small import SmallPolicy, SmallPolicyConfig
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
