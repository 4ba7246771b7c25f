"""The inference service: one model copy that acts for many thin workers (docs/design.md §2.1).

With ``inference.mode=service`` a ray run places ``inference.replicas`` :class:`InferenceService`
actors (a GPU each when the cluster has GPUs to spare, else one CPU). Workers build no model:
their :class:`InferenceClient` sends each act request to one replica, whose
:class:`~distrl.runtime.inference.batcher.DynamicBatcher` runs the requests of all its workers as
one policy batch.

Weights: before each batch the service asks the :class:`WeightsBoard` for anything newer than
what it holds (one cheap call; the weights themselves travel only when they changed), so a batch
acts with the newest published version and every answer carries the version that acted. The data
still flows learner -> board -> acting, as with local copies. A restarted service (Ray restarts
it, ``max_restarts=-1``) builds its policy and takes the newest weights before it answers.

Faults: a call in flight when the service died fails; the client retries it (nothing was done:
no action reached a device) until ``inference.retry_seconds`` ran out, then raises
:class:`~distrl.core.faults.InferenceUnavailable` and the worker drops the episodes that waited.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import ray
import torch
from ray.exceptions import GetTimeoutError, RayActorError

from distrl.config.schema import RunConfig
from distrl.core.faults import InferenceUnavailable
from distrl.core.observation import Observation
from distrl.errors import InputError
from distrl.policies.base import Policy, PolicyOutput, reads_screenshots
from distrl.runtime.components import build_policy
from distrl.runtime.inference.batcher import DynamicBatcher

__all__ = [
    "InferenceClient",
    "InferenceService",
    "gpu_shares",
    "service_name",
    "start_services",
]

#: Pause between retries of an act call to a service that is restarting (seconds).
RETRY_PAUSE_SECONDS = 0.2
#: Act calls a replica runs at once (threads of the actor) beyond one per worker it serves.
SPARE_CONCURRENCY = 4


def service_name(run_id: str, replica: int) -> str:
    """The Ray name of a run's replica: workers look it up by name, so a restarted worker finds
    it again."""
    return f"distrl-inference-{run_id}-{replica}"


def gpu_shares(cluster_gpus: float, learner_processes: int, replicas: int) -> tuple[float, float]:
    """GPUs each learner process and each service replica reserves: a whole one each when the
    cluster has enough, an equal share each when it has fewer (one GPU: the learner and the
    service share it), none on a CPU-only cluster.

    >>> gpu_shares(0, 1, 2), gpu_shares(4, 1, 2), gpu_shares(1, 1, 1)
    ((0, 0), (1, 1), (0.5, 0.5))
    """
    if cluster_gpus < 1:
        return 0, 0
    wanted = learner_processes + replicas
    if cluster_gpus >= wanted:
        return 1, 1
    share = cluster_gpus / wanted
    return share, share


class InferenceService:
    """A policy copy behind a dynamic batcher; ``board_name`` names the run's weights board (None:
    weights arrive only through :meth:`set_weights`, as in the benchmark)."""

    def __init__(self, cfg: RunConfig, board_name: str | None, timeout: float | None = None):
        self.timeout = timeout if timeout is not None else cfg.ray.call_timeout_seconds
        self.policy: Policy = build_policy(cfg)
        if ray.is_initialized() and ray.get_gpu_ids() and torch.cuda.is_available():
            self.policy.to("cuda")
        self.board = ray.get_actor(board_name) if board_name else None
        self.take_newest_weights()  # a restarted service answers with the newest version
        section = cfg.inference
        self.batcher = DynamicBatcher(
            self._run_batch, max_batch_size=section.max_batch_size, max_wait_ms=section.max_wait_ms
        )

    def act(
        self, observations: Sequence[Observation], greedy: bool, seeds: Sequence[int] | None
    ) -> PolicyOutput:
        """Actions for one worker's observations (batched with other workers' requests)."""
        return self.batcher.act(observations, greedy=greedy, seeds=seeds, timeout=self.timeout)

    def uses_screenshots(self) -> bool:
        """Whether the policy reads pixels (workers without a model ask, to skip screenshots)."""
        return reads_screenshots(self.policy)

    def set_weights(self, state: dict[str, torch.Tensor], version: int) -> int:
        """Swap in ``state`` directly (a run without a board); returns the version now held."""
        self._load(state, version)
        return int(self.policy.version)

    def stats(self) -> dict[str, float]:
        """Batches run, observations acted for and the version held."""
        batches = self.batcher.batches
        return {
            "batches": batches,
            "rows": self.batcher.rows,
            "mean_batch_size": self.batcher.rows / batches if batches else 0.0,
            "version": int(self.policy.version),
        }

    def take_newest_weights(self) -> None:
        """Load the board's newest weights if they are newer than those held."""
        if self.board is None:
            return
        _, version, refs = ray.get(
            self.board.poll.remote(int(self.policy.version)), timeout=self.timeout
        )
        if refs:
            self._load(ray.get(refs[0], timeout=self.timeout), version)

    def _load(self, state: dict[str, torch.Tensor], version: int) -> None:
        # Called on the batching thread (or before it exists), so never during a batch.
        self.policy.load_state_dict(state)
        self.policy.version = version

    def _run_batch(
        self, observations: Sequence[Observation], greedy: bool, seeds: Sequence[int] | None
    ) -> PolicyOutput:
        self.take_newest_weights()
        return self.policy.act(observations, greedy=greedy, seeds=seeds)


def start_services(
    cfg: RunConfig,
    run_id: str,
    board_name: str | None,
    workers: int,
    gpus: float,
    reserved_cpus: float = 0,
) -> list[Any]:
    """Place ``inference.replicas`` named service actors; Ray restarts a dead one. A cluster
    without the CPUs for them is refused here, not left with actors pending forever."""
    replicas = cfg.inference.replicas
    if not gpus:
        free = ray.cluster_resources().get("CPU", 0.0) - reserved_cpus
        if free < replicas:
            raise InputError(
                f"inference.replicas={replicas} need {replicas} free CPUs (one each without a "
                f"GPU) but the Ray cluster has {free:g} left beside the learner; lower "
                "inference.replicas or raise ray.num_cpus"
            )
    concurrency = -(-workers // replicas) + SPARE_CONCURRENCY
    return [
        ray.remote(InferenceService)
        .options(
            name=service_name(run_id, replica),
            num_cpus=0 if gpus else 1,
            num_gpus=gpus,
            max_restarts=-1,
            max_task_retries=0,
            max_concurrency=concurrency,
        )
        .remote(cfg, board_name)
        for replica in range(replicas)
    ]


class InferenceClient:
    """What a thin worker acts with: :meth:`act` as a policy's, answered by a service replica.

    A sampled request carries one seed per observation drawn from the worker's generator, so
    the worker's actions are reproducible from its own stream however the service batches them.
    ``version`` is the version that acted in the latest answer."""

    def __init__(self, service: Any, *, timeout: float, retry_seconds: float):
        self.service = service
        self.timeout = timeout
        self.retry_seconds = retry_seconds
        self.version = -1
        self.uses_screenshots = bool(self._call(service.uses_screenshots))

    def act(
        self,
        observations: Sequence[Observation],
        *,
        greedy: bool = False,
        generator: torch.Generator | None = None,
    ) -> PolicyOutput:
        """The service's actions for ``observations`` (argmax when ``greedy``)."""
        seeds = None
        if not greedy:
            drawn = torch.randint(0, 2**62, (len(observations),), generator=generator)
            seeds = [int(seed) for seed in drawn]
        output = self._call(self.service.act, list(observations), greedy, seeds)
        self.version = output.version
        return output

    def _call(self, method: Any, *args: Any) -> Any:
        """``method.remote(*args)``, retried while the service is down, for at most
        ``retry_seconds``; the same request each time (its seeds included)."""
        deadline = time.monotonic() + self.retry_seconds
        attempts = 0
        while True:
            attempts += 1
            try:
                return ray.get(method.remote(*args), timeout=self.timeout)
            except (RayActorError, GetTimeoutError) as error:
                if time.monotonic() >= deadline:
                    raise InferenceUnavailable(
                        f"the inference service did not answer after {attempts} attempt(s) in "
                        f"{self.retry_seconds:g} s ({type(error).__name__})"
                    ) from error
                time.sleep(RETRY_PAUSE_SECONDS)
