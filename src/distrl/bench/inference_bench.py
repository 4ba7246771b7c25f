"""``distrl bench inference``: the inference service against per-worker inference
(docs/design.md §2.1, §9).

Both sides act for the same ``N`` devices, split over workers of ``devices_per_worker`` devices
(real Ray actors, real forward passes):

- **per-worker** (``inference.mode=local``, today's default): each worker holds its own policy
  copy and acts for all its devices in one batch;
- **service** (``inference.mode=service``): the workers hold no model and send their devices'
  observations to one :class:`~distrl.runtime.inference.service.InferenceService` (a GPU when
  the machine has one), which batches the requests of all workers.

Devices answer at once (each device's observation is a real PhoneSim screen, fixed), so every
device always waits for an action and the figures are the acting ceiling: actions per second
over all devices, and the p50/p95 latency of one worker's act call. ``speedup`` is service over
per-worker actions per second at the largest device count.
"""

from __future__ import annotations

import os
import time
from typing import Any

import ray
import torch

from distrl.config.schema import RunConfig
from distrl.core.observation import Observation
from distrl.envs.devices import Purpose, make_device
from distrl.envs.task_sets import load_tasks
from distrl.policies.base import reads_screenshots
from distrl.runtime.components import build_policy
from distrl.runtime.distributed.session import ray_session
from distrl.runtime.inference.service import InferenceClient, InferenceService, gpu_shares

__all__ = ["BenchWorker", "bench_config", "bench_inference", "bench_policy", "screens"]

#: Distinct screens the devices show (device ``d`` shows screen ``d`` modulo this).
SCREENS = 8
#: Longest wait on one bench call (real seconds).
CALL_TIMEOUT = 600.0


def bench_config(cfg: RunConfig, policy: str) -> RunConfig:
    """``cfg`` with the benchmarked policy: ``small`` or the tiny VLM (random weights, built in
    process, so the bench runs offline)."""
    cfg = cfg.model_copy(deep=True)
    if policy == "vlm":  # the base first: the policy section is validated on each assignment
        cfg.policy.vlm.tiny, cfg.policy.vlm.path = True, None
        cfg.policy.kind = "vlm"
    else:
        cfg.policy.kind = policy
    return cfg


def screens(cfg: RunConfig, with_screenshots: bool) -> list[Observation]:
    """The first observation of ``SCREENS`` train tasks on the configured backend."""
    tasks = load_tasks(cfg, "train")
    observations = []
    for index in range(SCREENS):
        device = make_device(cfg, Purpose.TRAIN, index, screenshots=with_screenshots)
        try:
            observations.append(device.reset(tasks[index % len(tasks)]))
        finally:
            device.close()
    return observations


class BenchWorker:
    """A worker's devices (fixed screens) acting in a loop, with a policy copy of its own
    (``service=None``) or through a service replica."""

    def __init__(self, cfg: RunConfig, observations: list[Observation], service: Any, seed: int):
        self.observations = observations
        if service is None:
            self.acting: Any = build_policy(cfg)
        else:
            self.acting = InferenceClient(service, timeout=CALL_TIMEOUT, retry_seconds=0)
        self.generator = torch.Generator().manual_seed(seed)
        self.act_once()  # warm: first forward passes allocate

    def act_once(self) -> int:
        return len(self.acting.act(self.observations, generator=self.generator).actions)

    def run(self, seconds: float) -> tuple[int, list[float], float]:
        """Act for ``seconds``: (actions, each call's latency in ms, elapsed seconds)."""
        actions, latencies, started = 0, [], time.perf_counter()
        while time.perf_counter() - started < seconds:
            call = time.perf_counter()
            actions += self.act_once()
            latencies.append((time.perf_counter() - call) * 1000)
        return actions, latencies, time.perf_counter() - started


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 2)


def _measure(workers: list[Any], seconds: float) -> dict[str, float]:
    results = ray.get([w.run.remote(seconds) for w in workers], timeout=CALL_TIMEOUT)
    actions = sum(r[0] for r in results)
    latencies = [ms for r in results for ms in r[1]]
    elapsed = max(r[2] for r in results)
    return {
        "actions_per_s": round(actions / elapsed, 1),
        "act_ms_p50": _percentile(latencies, 0.5),
        "act_ms_p95": _percentile(latencies, 0.95),
        "act_calls": len(latencies),
    }


def _workers(
    cfg: RunConfig,
    observations: list[Observation],
    devices: int,
    per_worker: int,
    service: Any,
) -> list[Any]:
    count = -(-devices // per_worker)
    shares = [min(per_worker, devices - i * per_worker) for i in range(count)]
    remote = ray.remote(BenchWorker).options(num_cpus=0)
    workers = []
    first = 0
    for index, share in enumerate(shares):
        own = [observations[(first + d) % len(observations)] for d in range(share)]
        workers.append(remote.remote(cfg, own, service, seed=index))
        first += share
    ray.get([w.act_once.remote() for w in workers], timeout=CALL_TIMEOUT)  # all built
    return workers


def bench_policy(
    cfg: RunConfig, device_counts: list[int], per_worker: int, seconds: float
) -> dict[str, Any]:
    """Per-worker and service figures at each device count for ``cfg``'s policy."""
    probe = build_policy(cfg)
    observations = screens(cfg, reads_screenshots(probe))
    parameters = sum(p.numel() for p in probe.parameters())
    del probe
    gpus = gpu_shares(ray.cluster_resources().get("GPU", 0), 0, 1)[1]
    service = (
        ray.remote(InferenceService)
        .options(num_cpus=0 if gpus else 1, num_gpus=gpus, max_concurrency=256)
        .remote(cfg, None)
    )
    rows = []
    try:
        for devices in device_counts:
            row: dict[str, Any] = {"devices": devices}
            for mode, acting in (("per_worker", None), ("service", service)):
                workers = _workers(cfg, observations, devices, per_worker, acting)
                before = ray.get(service.stats.remote(), timeout=CALL_TIMEOUT)
                row[mode] = _measure(workers, seconds)
                after = ray.get(service.stats.remote(), timeout=CALL_TIMEOUT)
                if mode == "service":
                    batches = after["batches"] - before["batches"]
                    rows_acted = after["rows"] - before["rows"]
                    row[mode]["mean_batch_size"] = round(rows_acted / max(batches, 1), 1)
                for worker in workers:
                    ray.kill(worker)
            row["speedup"] = round(
                row["service"]["actions_per_s"] / max(row["per_worker"]["actions_per_s"], 1e-9), 2
            )
            rows.append(row)
    finally:
        ray.kill(service)
    return {
        "policy": cfg.policy.kind + (" (tiny)" if cfg.policy.kind == "vlm" else ""),
        "parameters": parameters,
        "service_device": "cuda" if gpus else "cpu",
        "rows": rows,
        "speedup": rows[-1]["speedup"],
    }


def bench_inference(
    cfg: RunConfig,
    device_counts: list[int],
    policies: list[str],
    *,
    devices_per_worker: int = 8,
    seconds: float = 3.0,
) -> dict[str, Any]:
    """The figures of ``distrl bench inference`` for each of ``policies`` (see the module doc)."""
    cfg = cfg.model_copy(deep=True)
    cfg.train.devices = max(device_counts)
    cfg.ray.workers = 1
    started = time.perf_counter()
    with ray_session(cfg):
        figures = {
            policy: bench_policy(
                bench_config(cfg, policy), device_counts, devices_per_worker, seconds
            )
            for policy in policies
        }
    return {
        "devices_per_worker": devices_per_worker,
        "seconds_per_measurement": seconds,
        "gpu": torch.cuda.is_available(),
        "policies": figures,
        "speedup": {policy: f["speedup"] for policy, f in figures.items()},
        "bench_seconds": round(time.perf_counter() - started, 1),
        # Figures from a shared machine are only comparable at similar load.
        "cpu_load_1min": round(os.getloadavg()[0], 2),
    }
