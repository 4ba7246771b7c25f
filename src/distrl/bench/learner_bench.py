"""``distrl bench learner``: how fast the learner side of the pipeline is, per policy.

Figures, each measured on real data (episodes the policy itself played on PhoneSim):

- replay insert rate: windows cut from stored trajectories and added to the prioritized buffer
  per second (what one replay can absorb from all workers together);
- sample + priority write-back rate: batches drawn, importance-weighted and given new priorities
  per second (the replay's cost per learner update);
- update step time: one A-RIDE gradient step on a batch (forward, backward, clip, Adam);
- weight publish latency: from the learner's ``ray.put`` of its weights to a Ray actor in another
  process having loaded them (what a worker waits for a new version), and the bytes published;
- cloning step time: one behaviour-cloning step of the warm start (``train.bc_batch_size`` steps
  of noisy-oracle demonstrations, with the run's rewordings), and what ``train.bc_steps`` of them
  take: most of a VLM run's warm start, which comes out of its online minutes.

Together they say which part bounds the learner: with the small policy the replay is far faster
than the update, so more workers buy throughput until the update rate is the limit.
"""

from __future__ import annotations

import copy
import resource
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import ray
import torch

from distrl.algos.bc import behaviour_clone
from distrl.config.schema import RunConfig
from distrl.core.seeds import Stream, derive_rng, derive_seed
from distrl.core.trajectory import Trajectory
from distrl.envs.devices import Purpose, make_device
from distrl.envs.task_sets import load_tasks
from distrl.policies.base import Policy, reads_screenshots
from distrl.runtime.components import build_learner, build_policy, build_replay
from distrl.runtime.distributed.session import ray_session
from distrl.runtime.replay_service import ReplayService
from distrl.runtime.task_sampler import TaskSampler
from distrl.runtime.warm_start import cloning_augments, collect_demonstrations
from distrl.runtime.worker import Worker


@dataclass
class LearnerBench:
    """The figures of one ``bench learner`` run (``summary()`` is the JSON)."""

    policy: str
    parameters: int
    trainable_parameters: int
    episodes: int
    windows_per_episode: float
    insert_windows_per_s: float = 0.0
    sample_batches_per_s: float = 0.0
    update_ms: list[float] = field(default_factory=list)
    publish_ms: list[float] = field(default_factory=list)
    publish_bytes: int = 0
    #: Milliseconds per cloning step (None: no demonstration succeeded, nothing to clone).
    cloning_ms: float | None = None
    cloning_steps: int = 0
    peak_rss_mib: float = 0.0

    def summary(self) -> dict[str, Any]:
        def median(values: list[float]) -> float | None:
            return round(statistics.median(values), 3) if values else None

        return {
            "policy": self.policy,
            "parameters": self.parameters,
            "trainable_parameters": self.trainable_parameters,
            "episodes": self.episodes,
            "windows_per_episode": round(self.windows_per_episode, 2),
            "replay_insert_windows_per_s": round(self.insert_windows_per_s, 1),
            "replay_sample_update_batches_per_s": round(self.sample_batches_per_s, 1),
            "update_ms_median": median(self.update_ms),
            "update_ms_p90": round(float(np.percentile(self.update_ms, 90)), 3)
            if self.update_ms
            else None,
            "updates_per_s": round(1000.0 / statistics.median(self.update_ms), 2)
            if self.update_ms
            else None,
            "publish_ms_median": median(self.publish_ms),
            "publish_bytes": self.publish_bytes,
            "cloning_ms_per_step": None if self.cloning_ms is None else round(self.cloning_ms, 1),
            "cloning_s_for_bc_steps": None
            if self.cloning_ms is None
            else round(self.cloning_ms * self.cloning_steps / 1000, 1),
            "peak_rss_mib": round(self.peak_rss_mib, 1),
        }


def _play(cfg: RunConfig, policy: Policy, episodes: int) -> list[Trajectory]:
    """Episodes ``policy`` plays on the configured backend (PhoneSim by default)."""
    devices = [make_device(cfg, Purpose.TRAIN, i) for i in range(4)]
    worker = Worker(
        devices,
        copy.deepcopy(policy),
        TaskSampler(load_tasks(cfg, "train"), derive_rng(cfg.seed, Stream.WORKER_TASKS, 0, 0, 0)),
        seed=derive_seed(cfg.seed, Stream.WORKER_ACTIONS, 0, 0, 0),
    )
    try:
        return worker.collect(episodes)[:episodes]
    finally:
        worker.close()


def _time_inserts(
    cfg: RunConfig, keep: bool, trajectories: list[Trajectory], seconds: float
) -> tuple[ReplayService, float, float]:
    """(the filled replay, windows per episode, windows inserted per second)."""
    replay = build_replay(cfg, keep, store_dir=None)
    windows, started = replay.ingest(trajectories), time.perf_counter()
    per_episode = windows / max(len(trajectories), 1)
    while time.perf_counter() - started < seconds:
        windows += replay.ingest(trajectories)
    return replay, per_episode, windows / (time.perf_counter() - started)


def _time_samples(replay: ReplayService, batch_size: int, seconds: float) -> float:
    rng = np.random.default_rng(0)
    batches, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        batch = replay.sample(batch_size, learner_version=0)
        if batch is None:
            break
        replay.update_priorities(
            batch.slots, batch.generations, rng.random(len(batch.windows)) + 0.01
        )
        batches += 1
    return batches / (time.perf_counter() - started)


@ray.remote(num_cpus=0)
class _WeightsReader:
    """Stands where a worker stands: in another process, with its own policy built from the
    config (as a worker builds it: a VLM's frozen base is never shipped), loading published
    weights."""

    def __init__(self, cfg: RunConfig):
        self.policy = build_policy(cfg)

    def load(self, refs: list[ray.ObjectRef]) -> int:
        state = ray.get(refs[0])
        self.policy.load_state_dict(state, strict=False)
        return len(state)


def _time_publishes(cfg: RunConfig, weights: dict[str, torch.Tensor], times: int) -> list[float]:
    reader = _WeightsReader.remote(cfg)
    ray.get(reader.load.remote([ray.put(weights)]), timeout=300)  # warm: actor and first load
    latencies = []
    for _ in range(times):
        started = time.perf_counter()
        ray.get(reader.load.remote([ray.put(weights)]), timeout=300)
        latencies.append((time.perf_counter() - started) * 1000)
    ray.kill(reader)
    return latencies


def _demonstrations(cfg: RunConfig, policy: Policy, episodes: int) -> list[Trajectory]:
    """``episodes`` noisy-oracle demonstrations, played as a run's warm start plays them (stored
    in a folder deleted afterwards)."""
    played = cfg.model_copy(deep=True)
    played.train.warm_start_episodes = episodes  # a config without a warm start has 0
    with tempfile.TemporaryDirectory() as root:
        return collect_demonstrations(
            played, load_tasks(cfg, "train"), Path(root), reads_screenshots(policy)
        )


def _time_cloning(
    cfg: RunConfig, policy: Policy, demonstrations: list[Trajectory], steps: int
) -> float | None:
    """Milliseconds per cloning step of a copy of ``policy`` with the warm start's batch size,
    rate, rewordings and torch threads (None when no demonstration succeeded)."""
    if not any(t.success for t in demonstrations):
        return None
    clone = copy.deepcopy(policy)
    settings: dict[str, Any] = {
        "batch_size": cfg.train.bc_batch_size,
        "lr": cfg.train.bc_lr,
        "seed": cfg.seed,
        "augment": cloning_augments(cfg, demonstrations),
    }
    threads = torch.get_num_threads()
    if cfg.train.torch_threads is not None:  # as a training run clones
        torch.set_num_threads(cfg.train.torch_threads)
    try:
        behaviour_clone(clone, demonstrations, steps=2, **settings)  # Adam's state, the caches
        started = time.perf_counter()
        behaviour_clone(clone, demonstrations, steps=steps, **settings)
        return (time.perf_counter() - started) * 1000 / steps
    finally:
        torch.set_num_threads(threads)


def bench_learner(
    cfg: RunConfig, episodes: int = 32, seconds: float = 5.0, updates: int = 20
) -> LearnerBench:
    """Measure the learner side with ``cfg``'s policy and algorithm (see the module doc)."""
    policy = build_policy(cfg)
    keep = reads_screenshots(policy)
    trajectories = _play(cfg, policy, episodes)
    parameters = list(policy.parameters()) if hasattr(policy, "parameters") else []
    bench = LearnerBench(
        policy=type(policy).__name__,
        parameters=sum(p.numel() for p in parameters),
        trainable_parameters=sum(p.numel() for p in parameters if p.requires_grad),
        episodes=len(trajectories),
        windows_per_episode=0.0,
    )
    replay, bench.windows_per_episode, bench.insert_windows_per_s = _time_inserts(
        cfg, keep, trajectories, seconds
    )
    batch_size = min(cfg.train.batch_size, len(replay))
    replay.min_replay = min(replay.min_replay, batch_size)
    bench.sample_batches_per_s = _time_samples(replay, batch_size, seconds)
    learner = build_learner(cfg, policy)
    for index in range(updates + 2):
        # Drawn as of the data's own version: the bench's data never refreshes, so at the
        # learner's version it would fall past train.max_staleness after a few updates and
        # leave nothing to draw (vlm-quick's bound is 8 versions).
        batch = replay.sample(batch_size, 0)
        assert batch is not None  # min_replay <= batch_size <= len(replay), none stale
        started = time.perf_counter()
        learner.update(batch)
        if index >= 2:  # the first steps allocate Adam's state and warm the allocator
            bench.update_ms.append((time.perf_counter() - started) * 1000)
    weights, _ = learner.weights()
    bench.publish_bytes = sum(t.numel() * t.element_size() for t in weights.values())
    with ray_session(cfg):  # local Ray on loopback, as a training run starts it
        bench.publish_ms = _time_publishes(cfg, weights, times=10)
    bench.cloning_steps = cfg.train.bc_steps
    bench.cloning_ms = _time_cloning(cfg, policy, _demonstrations(cfg, policy, episodes), updates)
    bench.peak_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return bench
