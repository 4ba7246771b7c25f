"""The inference service on a real local Ray: weights swap in as soon as published, a thin
worker's steps carry the version that acted, a killed service is restarted and the run completes
with every counted trajectory stored once; and, without Ray, a worker whose service stays down
drops the waiting episodes with their cause (docs/design.md §2.1). Every ray.get has a timeout."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import ray
import torch

from distrl.config.schema import RunConfig
from distrl.core.faults import InferenceUnavailable
from distrl.core.observation import Observation
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.errors import InputError
from distrl.policies.base import PolicyOutput
from distrl.runtime.async_worker import AsyncWorker
from distrl.runtime.components import build_policy
from distrl.runtime.distributed.actors import WeightsBoard
from distrl.runtime.distributed.driver import train_ray
from distrl.runtime.inference.service import InferenceClient, InferenceService
from distrl.runtime.serial import train
from distrl.runtime.task_sampler import TaskSampler
from distrl.store import TrajectoryStore

DEVICES = 4
TIMEOUT = 120


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, resources={"distrl_device": DEVICES}, include_dashboard=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def observations() -> list[Observation]:
    env = PhoneSimEnv(seed=2)
    return [env.reset(task) for task in load_suite("general", "train")[:3]]


def _service_cfg(tmp_path: Path, **train: object) -> RunConfig:
    """A ray run of 4 devices on 2 workers that act through the service."""
    return RunConfig.model_validate(
        {
            "run_root": str(tmp_path),
            "train": {"runtime": "ray", "devices": DEVICES, **train},
            "ray": {"workers": 2, "flush_seconds": 0.5, "call_timeout_seconds": TIMEOUT},
            "inference": {"mode": "service", "max_wait_ms": 2.0},
        }
    )


def test_published_weights_act_in_the_next_batch(
    local_ray: None, tmp_path: Path, observations: list[Observation]
) -> None:
    cfg = _service_cfg(tmp_path)
    board = ray.remote(WeightsBoard).options(name="test-board", num_cpus=0).remote()
    service = (
        ray.remote(InferenceService)
        .options(num_cpus=0, max_concurrency=4)
        .remote(cfg, "test-board")
    )
    try:
        client = InferenceClient(service, timeout=TIMEOUT, retry_seconds=0)
        assert client.uses_screenshots is False  # the small policy reads the element list
        before = client.act(observations, generator=torch.Generator().manual_seed(3))
        assert before.version == 0
        # The learner publishes v1 (weights it trained); the very next act runs with them.
        trained = build_policy(cfg)
        with torch.no_grad():
            for parameter in trained.parameters():
                parameter.add_(0.05 * torch.randn_like(parameter))
        trained.version = 1
        ray.get(board.publish.remote(1, [ray.put(trained.state_dict())]), timeout=TIMEOUT)
        after = client.act(observations, generator=torch.Generator().manual_seed(3))
        assert after.version == client.version == 1
        # Exactly what the published policy does with the seeds the client drew.
        seeds = torch.randint(0, 2**62, (3,), generator=torch.Generator().manual_seed(3))
        local = trained.act(observations, seeds=[int(s) for s in seeds])
        assert after.actions == local.actions
        assert torch.allclose(after.logprobs, local.logprobs, atol=1e-5)
        greedy = client.act(observations, greedy=True)
        assert greedy.actions == trained.act(observations, greedy=True).actions
        stats = ray.get(service.stats.remote(), timeout=TIMEOUT)
        assert stats["batches"] == 3 and stats["rows"] == 9 and stats["version"] == 1
    finally:
        ray.kill(service, no_restart=True)
        ray.kill(board, no_restart=True)


def test_a_client_retries_across_a_restart_and_gives_up_on_a_dead_service(
    local_ray: None, tmp_path: Path, observations: list[Observation]
) -> None:
    cfg = _service_cfg(tmp_path)
    service = (
        ray.remote(InferenceService)
        .options(num_cpus=0, max_restarts=-1, max_task_retries=0, max_concurrency=4)
        .remote(cfg, None)
    )
    client = InferenceClient(service, timeout=TIMEOUT, retry_seconds=60)
    generator = torch.Generator().manual_seed(0)
    first = client.act(observations, generator=generator)
    ray.kill(service, no_restart=False)
    again = client.act(observations, generator=generator)  # answered by the restarted actor
    assert len(again.actions) == len(first.actions) == 3 and again.version == 0
    ray.kill(service, no_restart=True)
    client.retry_seconds = 0.5
    with pytest.raises(InferenceUnavailable, match="did not answer"):
        client.act(observations, generator=generator)


class _DownService:
    """An action source whose service never answers (the client gave up retrying)."""

    version = 0

    def act(self, observations: Sequence[Observation], **choice: object) -> PolicyOutput:
        raise InferenceUnavailable("the inference service did not answer after 3 attempt(s)")


def test_a_worker_drops_the_episodes_that_waited_on_a_dead_service() -> None:
    worker = AsyncWorker(
        lambda i, n: PhoneSimEnv(seed=i, device_id=f"d{i}"),
        3,
        _DownService(),
        TaskSampler(load_suite("general", "train"), 0),
    )
    finished: list[object] = []
    calls = {"n": 0}

    def stop_after_a_few_loops() -> bool:
        calls["n"] += 1
        return calls["n"] > 20

    worker.run(finished.append, should_stop=stop_after_a_few_loops, poll_seconds=0.01)
    worker.close()
    assert finished == []  # no step was recorded without an action from the service
    drops = worker.take_drops()
    assert drops.count == worker.stats.dropped >= 3
    assert set(drops.causes) == {"InferenceUnavailable"}
    assert "did not answer" in drops.examples["InferenceUnavailable"]
    assert worker.stats.steps == 0


def test_the_serial_runtime_refuses_the_service(tmp_path: Path) -> None:
    cfg = _service_cfg(tmp_path)
    cfg.train.runtime = "serial"
    with pytest.raises(InputError, match=r"inference.mode=service needs the ray runtime"):
        train(cfg)


def test_async_run_with_the_service_survives_a_killed_service(
    local_ray: None, tmp_path: Path
) -> None:
    # minutes is a bound only: the run ends at its 6th update.
    budget = {"max_updates": 6, "minutes": 5, "min_replay": 16, "batch_size": 8}
    cfg = _service_cfg(tmp_path, mode="async", eval_episodes=4, final_eval_episodes=4, **budget)
    latency = cfg.env.phonesim.latency
    latency.enabled, latency.time_scale = True, 0.002
    killed: list[float] = []

    def kill_the_service_once(fraction: float, metrics: dict[str, float]) -> None:
        if not killed:  # the first look of the loop: the run's data mostly comes after it
            names = [n for n in ray.util.list_named_actors() if n.startswith("distrl-inference")]
            ray.kill(ray.get_actor(names[0]), no_restart=False)
            killed.append(time.time())

    result = train_ray(cfg, on_progress=kill_the_service_once)
    summary = result.summary()
    assert killed and result.updates == 6
    assert summary["collected"] == summary["stored"] == result.episodes
    assert summary["duplicated"] == 0 and summary["restarts"] == 0  # no worker died
    stored = TrajectoryStore(result.run_dir / "trajectories").load()
    assert len(stored) == result.episodes and len({t.trajectory_id for t in stored}) == len(stored)
    for trajectory in stored:
        dones = [s.done for s in trajectory.steps]
        assert dones[-1] and not any(dones[:-1])
    # Every step records the version that acted (its staleness is learner version - it):
    # versions the learner really published, newer ones as the run went on.
    versions = [s.policy_version for t in stored for s in t.steps]
    assert min(versions) >= 0 and max(versions) <= result.updates
    assert len(set(versions)) > 1
    # The restarted service served the rest of the run: episodes finished after the kill.
    assert any(t.finished_at > killed[0] for t in stored)
