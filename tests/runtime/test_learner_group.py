"""The data-parallel learner group (train.learner_processes) on a local Ray with gloo: its updates
against the one-process learner's, a live async run, and the serial runtime's refusal. Every
ray.get has a timeout."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import ray
import torch

from distrl.algos.registry import build_algorithm
from distrl.algos.step_window import StepWindow, cut_windows
from distrl.config.schema import RunConfig
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.errors import InputError
from distrl.policies.small import SmallPolicy, SmallPolicyConfig
from distrl.runtime.distributed.driver import train_ray
from distrl.runtime.distributed.learner_group import (
    LearnerGroup,
    LearnerShard,
    join_group,
    leave_group,
    rendezvous_address,
    restore_learner,
)
from distrl.runtime.learner import Learner
from distrl.runtime.replay_service import ReplayBatch
from distrl.runtime.serial import train as train_serial
from distrl.runtime.worker import Worker

CPUS, DEVICES, TIMEOUT = 2, 4, 60


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=CPUS, resources={"distrl_device": DEVICES}, include_dashboard=False)
    yield
    ray.shutdown()


def _config() -> RunConfig:
    cfg = RunConfig()
    # Advantage standardisation is per share of the batch: off, the split is exact.
    cfg.aride.normalize_advantages = False
    cfg.train.lr = 1e-2
    return cfg


def _windows(cfg: RunConfig, policy: SmallPolicy) -> list[StepWindow]:
    """Windows of 12 PhoneSim episodes the policy played (4-step windows: more of them)."""
    tasks = itertools.cycle(load_suite("general", "train")[:6])
    worker = Worker([PhoneSimEnv(seed=i) for i in range(4)], policy, lambda: next(tasks), seed=0)
    shaping = build_algorithm(cfg).shaping
    windows = [w for t in worker.collect(12) for w in cut_windows(t, 4, shaping)]
    assert len(windows) >= 10
    return windows


def _batch(windows: list[StepWindow], seed: int) -> ReplayBatch:
    n = len(windows)
    weights = np.random.default_rng(seed).uniform(0.5, 1.0, n).astype(np.float32)
    return ReplayBatch(windows, np.arange(n), np.zeros(n, np.int64), weights)


@pytest.fixture
def one_thread() -> Iterator[None]:
    """Kernels split over threads sum in another order; the shard runs one thread (Ray's
    OMP_NUM_THREADS for a 1-CPU actor), so the reference does too."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.usefixtures("one_thread")
def test_two_process_group_update_equals_one_process_update() -> None:
    cfg = _config()
    torch.manual_seed(0)
    start = SmallPolicy(SmallPolicyConfig()).state_dict()
    windows = _windows(cfg, SmallPolicy(SmallPolicyConfig()))
    batches = [_batch(windows[: len(windows) // 2 + 3], 1), _batch(windows, 2)]
    # The second update at half the rate (train.lr_schedule): every rank must step at it.
    scales = [1.0, 0.5]

    def updated(learner: Learner | LearnerGroup) -> list[tuple[np.ndarray, dict[str, float]]]:
        results = []
        for scale, batch in zip(scales, batches, strict=True):
            learner.set_lr_scale(scale)
            results.append(learner.update(batch))
        return results

    # One process accumulating the same two shares of each batch: the group's exact reference.
    # (Against one full-batch backward the float rounding differs: a parameter whose true
    # gradient is zero, e.g. a bias under a softmax, gets rounding noise that Adam scales to a
    # step of up to lr in either direction; the priorities are compared to it too.)
    single = restore_learner(cfg, start, None)
    single.accumulation = 2
    single_priorities = [priorities for priorities, _ in updated(single)]
    full_batch = restore_learner(cfg, start, None)
    full_priorities = [priorities for priorities, _ in updated(full_batch)]

    rank0 = restore_learner(cfg, start, None)
    address = rendezvous_address()
    shard = ray.remote(LearnerShard).options(num_cpus=1).remote(cfg, 1, 2, address, start, None)
    try:
        join_group(rank0, address, 0, 2, TIMEOUT)
        ray.get(shard.ready.remote(), timeout=TIMEOUT)
        group = LearnerGroup(rank0, [shard], TIMEOUT)
        results = updated(group)
        shard_weights, shard_version = ray.get(shard.weights.remote(), timeout=TIMEOUT)
    finally:
        leave_group()
        ray.kill(shard, no_restart=True)

    for (priorities, metrics), accumulated, full in zip(
        results, single_priorities, full_priorities, strict=True
    ):
        np.testing.assert_allclose(priorities, accumulated, atol=1e-5)
        np.testing.assert_allclose(priorities, full, atol=1e-5)
        assert np.isfinite(metrics["loss"]) and metrics["grad_norm"] > 0
    grouped, version = rank0.weights()
    expected_weights, expected_version = single.weights()
    assert version == expected_version == shard_version == 2
    moved = any(not torch.equal(grouped[k], start[k]) for k in grouped)
    assert moved  # the updates did something
    for name, tensor in grouped.items():
        assert torch.allclose(tensor, expected_weights[name], atol=1e-5, rtol=0), name
        assert torch.equal(tensor, shard_weights[name]), name  # replicas stay identical


def _cpus_free_again() -> bool:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if ray.available_resources().get("CPU", 0) >= CPUS:
            return True
        time.sleep(0.5)
    return False


def test_async_run_with_two_learner_processes(tmp_path: Path) -> None:
    cfg = RunConfig()
    cfg.run_root = str(tmp_path)
    cfg.train.runtime = "ray"
    cfg.train.mode = "async"
    cfg.train.learner_processes = 2
    cfg.train.devices = DEVICES
    cfg.train.min_replay = 16
    cfg.train.batch_size = 8
    cfg.train.eval_episodes = 4
    cfg.train.final_eval_episodes = 4
    cfg.train.max_updates = 6
    cfg.train.minutes = 3
    cfg.ray.workers = 2
    cfg.ray.flush_seconds = 0.5
    cfg.ray.call_timeout_seconds = TIMEOUT
    result = train_ray(cfg)
    summary = result.summary()
    assert summary["updates"] == 6 and result.updates == 6
    assert summary["learner_processes"] == 2
    assert summary["collected"] == summary["stored"] == result.episodes > 0
    assert _cpus_free_again()  # the learner and its shard were killed


def test_a_group_the_cluster_cannot_place_is_refused(tmp_path: Path) -> None:
    cfg = RunConfig()
    cfg.run_root = str(tmp_path)
    cfg.train.runtime = "ray"
    cfg.train.devices = DEVICES
    cfg.train.learner_processes = CPUS + 1
    with pytest.raises(InputError, match="learner_processes=3 needs 3 CPU"):
        train_ray(cfg)


def test_serial_runtime_refuses_several_learner_processes(tmp_path: Path) -> None:
    cfg = RunConfig()
    cfg.run_root = str(tmp_path)
    cfg.train.learner_processes = 2
    with pytest.raises(InputError, match="needs the ray runtime"):
        train_serial(cfg)
