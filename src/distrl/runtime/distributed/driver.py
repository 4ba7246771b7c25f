"""``runtime=ray``: the training loop with its parts placed as Ray actors.

The loop (:mod:`distrl.runtime.training`, the same as the serial runtime's) runs in this driver
process and owns the run folder: TensorBoard, the evaluation curve, checkpoints. It does not
touch data on its way: workers send trajectories to the replay actor, the learner actor pulls
batches from it and publishes weights to the board, workers pick them up.

* **async**: workers collect until told to stop; each round of the loop waits for the learner's
  next short chunk of updates (so the loop can evaluate, checkpoint and notice dead workers in
  between) while the chunk after it is already queued.
* **sync** (DigiRL-style baseline): each round, every worker collects its share of
  ``episodes_per_round`` with the same weights, all wait at the barrier, the learner runs
  ``updates_per_round`` updates, the new weights are broadcast.

A worker actor that dies (``ray.kill``, a crashed process) is restarted by Ray (``max_restarts``),
re-syncs to the newest weights in its constructor, and the driver resumes its work; episodes it
had in flight are lost (never stored, never counted). The replay's windows are rebuilt from the
Parquet store on ``--resume``, so a run killed with SIGKILL continues from its last checkpoint
and counts every trajectory it stored.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import ray
import torch
from ray.exceptions import RayActorError, RayTaskError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from distrl.config.schema import RunConfig
from distrl.policies.base import Policy, reads_screenshots
from distrl.runtime.async_worker import CollectStats
from distrl.runtime.curriculum import Outcome
from distrl.runtime.distributed.actors import LearnerActor, ReplayActor, WeightsBoard, WorkerActor
from distrl.runtime.distributed.learner_group import check_group_resources, start_learner_group
from distrl.runtime.distributed.session import check_config, device_shares, ray_session
from distrl.runtime.drops import DropLog
from distrl.runtime.inference.service import gpu_shares, service_name, start_services
from distrl.runtime.run_log import TrainResult, restoring_from
from distrl.runtime.training import RunSetup, train_with

#: Longest stretch of learner updates between two looks of the driver (real seconds).
CHUNK_SECONDS = 2.0


class Placement:
    """The run's actors, created with explicit resources."""

    def __init__(
        self,
        cfg: RunConfig,
        run_dir: Path,
        policy: Policy,
        learner_state: dict[str, Any] | None,
        session: int,
    ):
        self.cfg = cfg
        policy_state = policy.state_dict()
        thin = cfg.inference.mode == "service"
        cluster_gpus = ray.cluster_resources().get("GPU", 0)
        gpus, service_gpus = 1 if cluster_gpus >= 1 else 0, 0.0
        if thin:  # the service replicas want a GPU too (docs/design.md §2.1)
            gpus, service_gpus = gpu_shares(
                cluster_gpus, cfg.train.learner_processes, cfg.inference.replicas
            )
        self.learner_options = {"num_cpus": 1 if gpus == 0 else 0, "num_gpus": gpus}
        # Before any actor exists: a group the cluster cannot place is refused, not left pending.
        check_group_resources(cfg.train.learner_processes, self.learner_options)
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        # The board and the replay live with the driver: the store is this machine's disk.
        run_id = uuid.uuid4().hex[:8]
        board_name, replay_name = f"distrl-board-{run_id}", f"distrl-replay-{run_id}"
        self.board = (
            ray.remote(WeightsBoard)
            .options(name=board_name, num_cpus=0, scheduling_strategy=here)
            .remote()
        )
        keep_screens = reads_screenshots(policy)
        self.replay = (
            ray.remote(ReplayActor)
            .options(name=replay_name, num_cpus=0, scheduling_strategy=here)
            .remote(cfg, str(run_dir / "trajectories"), keep_screens)
        )
        self.learner = (
            ray.remote(LearnerActor)
            .options(**self.learner_options)
            .remote(cfg, self.replay, self.board, policy_state, learner_state)
        )
        #: Ranks 1..N-1 of a data-parallel learner (``train.learner_processes``).
        self.learner_shards: list[Any] = []
        self.workers: list[Any] = []
        self.services: list[Any] = []
        if cfg.train.learner_processes > 1:
            try:
                self.learner_shards = start_learner_group(
                    cfg, self.learner, self.learner_options, policy_state, learner_state
                )
            except BaseException:
                self.shutdown()  # the caller never gets a Placement to shut down
                raise
        if thin:  # inference service replicas: they act for the workers
            try:
                learner_cpus = self.learner_options["num_cpus"] * cfg.train.learner_processes
                self.services = start_services(
                    cfg, run_id, board_name, cfg.ray.workers, service_gpus, learner_cpus
                )
            except BaseException:
                self.shutdown()
                raise
        self.shares = device_shares(cfg.train.devices, cfg.ray.workers)
        first = 0
        for index, devices in enumerate(self.shares):
            worker = (
                ray.remote(WorkerActor)
                .options(
                    name=f"distrl-worker-{index}",
                    num_cpus=0,
                    resources={cfg.ray.device_resource: devices},
                    max_restarts=-1,
                    max_task_retries=0,
                )
                .remote(
                    cfg,
                    index,
                    first,
                    devices,
                    replay_name,
                    board_name,
                    session,
                    service_name(run_id, index % cfg.inference.replicas) if thin else None,
                )
            )
            self.workers.append(worker)
            first += devices

    def get(self, ref: Any) -> Any:
        return ray.get(ref, timeout=self.cfg.ray.call_timeout_seconds)

    def worker_nodes(self) -> list[str]:
        """The Ray node each worker runs on."""
        return [self.get(w.node_id.remote()) for w in self.workers]

    def shutdown(self) -> None:
        """End every actor of the run (workers would otherwise be restarted and hold devices)."""
        parts = [*self.workers, *self.services, *self.learner_shards, self.learner, self.replay]
        for actor in [*parts, self.board]:
            ray.kill(actor, no_restart=True)


@contextmanager
def raised_as_their_cause() -> Iterator[None]:
    """An exception raised inside an actor's method, raised here as itself: Ray wraps it in a
    :class:`~ray.exceptions.RayTaskError` whose message is the actor's whole traceback, which is
    not what a damaged checkpoint or shard should print."""
    try:
        yield
    except RayTaskError as error:
        cause = getattr(error, "cause", None)
        if isinstance(cause, Exception):
            raise cause from None
        raise


class ActorParts:
    """The run's parts as Ray actors (a :class:`~distrl.runtime.training.Parts`); the two modes
    differ in :meth:`round` only (:class:`AsyncParts`, :class:`SyncParts`)."""

    def __init__(self, setup: RunSetup):
        self.cfg = cfg = setup.cfg
        state = setup.state
        learner_state = state["learner"] if state is not None else None
        self.placement = Placement(cfg, setup.run_dir, setup.policy, learner_state, setup.session)
        try:
            if setup.demonstrations:
                self.get(self.placement.replay.add_demonstrations.remote(setup.demonstrations))
            if state is not None:
                version = int(state["learner"]["version"])
                with restoring_from(setup.run_dir), raised_as_their_cause():
                    self.get(self.placement.replay.restore.remote(state["replay"], version))
            self.nodes = self.placement.worker_nodes()  # devices built before the clock starts
            self.get(self.placement.learner.publish.remote())
        except BaseException:
            self.placement.shutdown()
            raise
        self.collected = CollectStats()
        #: The learning-rate factor the next train call carries (``train.lr_schedule``).
        self.lr_scale = 1.0
        #: Why the workers' dropped episodes were dropped (merged from every period's figures).
        self.drops = DropLog()
        #: Worker restarts, counted by the board from worker lives (read when the run stops).
        self.worker_restarts = 0
        #: Wall-clock seconds of collection, and device-seconds the devices were available.
        self.collect_seconds = 0.0
        self.device_seconds = 0.0

    def get(self, ref: Any) -> Any:
        return self.placement.get(ref)

    # -- Parts ---------------------------------------------------------------------------------
    def updates(self) -> int:
        return self.get(self.placement.learner.total_updates.remote())

    def learner_weights(self) -> tuple[dict[str, torch.Tensor], int, int]:
        return self.get(self.placement.learner.policy_state.remote())

    def stats(self) -> dict[str, float]:
        return self.get(self.placement.replay.stats.remote())

    def state_dict(self) -> dict[str, Any]:
        self.get(self.placement.replay.flush.remote())
        return {
            "learner": self.get(self.placement.learner.state_dict.remote()),
            "replay": self.get(self.placement.replay.state_dict.remote()),
            # Workers run on through a checkpoint: their random state is not captured; a resumed
            # run's workers seed from its session instead (see ``session_index``).
            "workers": {},
        }

    def stop(self) -> None:
        self._stop_collecting()
        self.worker_restarts = self.get(self.placement.board.restarts.remote())
        self.get(self.placement.replay.flush.remote())

    def drop_log(self) -> DropLog:
        return self.drops

    def task_outcomes(self) -> list[Outcome]:
        return self.get(self.placement.replay.task_outcomes.remote())

    def set_lr_scale(self, scale: float) -> None:
        # Sent with the learner's next train call (async: the one after the call queued now).
        self.lr_scale = scale

    def set_task_weights(self, weights: dict[str, float]) -> None:
        # Published on the board beside the policy weights; workers pick them up between
        # episodes when they poll it.
        self.get(self.placement.board.publish_task_weights.remote(weights))

    def figures(self) -> dict[str, Any]:
        """The collection figures: utilisation, drops, restarts."""
        stats = self.collected
        device_seconds = max(self.device_seconds, 1e-9)
        counted = self.stats()
        return {
            "runtime": "ray",
            "mode": self.cfg.train.mode,
            "duplicate_sends_ignored": int(counted["duplicates"]),
            "dropped_partial": stats.dropped,
            "restarts": self.worker_restarts,
            "collection": {
                "trajectories": stats.episodes,
                "steps": stats.steps,
                "seconds": round(self.collect_seconds, 2),
                "device_utilisation": round(stats.busy_seconds / device_seconds, 4),
                "idle_device_seconds": round(device_seconds - stats.busy_seconds, 2),
                "dropped_partial_episodes": stats.dropped,
                "device_crashes": stats.crashes,
                "device_hangs": stats.hangs,
                "devices_replaced": stats.replaced,
                "worker_restarts": self.worker_restarts,
            },
            **self.get(self.placement.learner.weights_figures.remote()),
            "worker_nodes": self.nodes,
        }

    def close(self) -> None:
        self.placement.shutdown()

    # -- the modes' pieces ---------------------------------------------------------------------
    def _updates_left(self, total_updates: int, wanted: int) -> int:
        """``wanted`` updates, or fewer where ``train.max_updates`` ends the run sooner."""
        limit = self.cfg.train.max_updates
        return wanted if limit is None else max(0, min(wanted, limit - total_updates))

    def _add_figures(self, figures: dict[str, Any]) -> None:
        if self.cfg.train.mode == "async":  # each worker's own span (sync: the round's)
            self.device_seconds += figures["devices"] * figures["seconds"]
        self.collected.merge(
            CollectStats(**{k: figures[k] for k in vars(CollectStats()) if k in figures})
        )
        if "drops" in figures:
            self.drops.merge(figures["drops"])

    def start(self) -> None: ...

    def round(self) -> dict[str, Any]:
        raise NotImplementedError

    def _stop_collecting(self) -> None: ...


class AsyncParts(ActorParts):
    """The learner always has the next ``train`` call queued: while the loop evaluates, logs
    or checkpoints, the learner keeps training (an idle learner beside busy devices is the
    waste asynchrony exists to remove). One call in flight at a time, each sized from the count
    the previous one returned, so ``max_updates`` is never overshot."""

    def start(self) -> None:
        self.started = time.monotonic()
        self.running = {w.run_async.remote(): i for i, w in enumerate(self.placement.workers)}
        self.in_flight: Any = self._queue_training(self.updates())

    def _queue_training(self, total_updates: int) -> Any:
        """The next ``train`` call, or None when ``max_updates`` is reached."""
        chunk = self._updates_left(total_updates, 1_000_000)
        if chunk <= 0:
            return None
        return self.placement.learner.train.remote(chunk, CHUNK_SECONDS, self.lr_scale)

    def round(self) -> dict[str, Any]:
        if self.in_flight is None:  # max_updates reached; the loop stops on it
            return {"metrics": {}}
        trained = self.get(self.in_flight)
        self.in_flight = self._queue_training(int(trained["total_updates"]))
        if trained["updates"] == 0:  # the replay is still filling: wait on the workers a bit
            ray.wait(list(self.running), timeout=0.2)
        self._revive_dead_workers()
        return trained

    def _revive_dead_workers(self) -> None:
        ended, _ = ray.wait(list(self.running), num_returns=len(self.running), timeout=0)
        for ref in ended:
            index = self.running.pop(ref)
            # A dead actor's call fails; Ray restarts it (the board counts lives): give it its
            # work back.
            with contextlib.suppress(RayActorError):
                self._add_figures(ray.get(ref, timeout=self.cfg.ray.call_timeout_seconds))
            self.running[self.placement.workers[index].run_async.remote()] = index

    def _stop_collecting(self) -> None:
        if self.in_flight is not None:  # the queued call's updates count (the budget is spent)
            self.get(self.in_flight)
            self.in_flight = None
        self.get(self.placement.board.stop.remote())
        for ref in list(self.running):
            # A worker that died as the run ended never sent its partial episodes.
            with contextlib.suppress(RayActorError):
                self._add_figures(self.get(ref))
        self.collect_seconds = time.monotonic() - self.started


class SyncParts(ActorParts):
    def start(self) -> None:
        #: (collect-until-barrier, train) seconds of each round.
        self.rounds: list[tuple[float, float]] = []

    def round(self) -> dict[str, Any]:
        self.get(self.placement.learner.publish.remote())
        started = time.monotonic()
        total = self.cfg.train.episodes_per_round
        devices = self.cfg.train.devices
        shares = [max(1, round(total * d / devices)) for d in self.placement.shares]
        workers = self.placement.workers
        pending = {
            w.collect.remote(n): (i, n)
            for i, (w, n) in enumerate(zip(workers, shares, strict=True))
        }
        while pending:  # the barrier
            ready, _ = ray.wait(list(pending), timeout=self.cfg.ray.call_timeout_seconds)
            if not ready:
                raise TimeoutError("a sync round waited longer than ray.call_timeout_seconds")
            for ref in ready:
                index, share = pending.pop(ref)
                try:
                    self._add_figures(ray.get(ref))
                except RayActorError:  # restarted by Ray: it redoes its share
                    pending[workers[index].collect.remote(share)] = (index, share)
        self.get(self.placement.replay.flush.remote())
        collected = time.monotonic()
        budget = self._updates_left(self.updates(), self.cfg.train.updates_per_round)
        trained = self.get(self.placement.learner.train.remote(budget, float("inf"), self.lr_scale))
        ended = time.monotonic()
        self.collect_seconds += ended - started
        self.device_seconds += devices * (ended - started)  # idle while training too
        self.rounds.append((collected - started, ended - collected))
        scalars = {
            "sync/collect_seconds": collected - started,
            "sync/train_seconds": ended - collected,
        }
        return {**trained, "scalars": scalars}

    def figures(self) -> dict[str, Any]:
        figures = super().figures()
        if self.rounds:
            collect = sum(c for c, _ in self.rounds) / len(self.rounds)
            train = sum(t for _, t in self.rounds) / len(self.rounds)
            figures["collection"] |= {
                "rounds": len(self.rounds),
                "round_collect_seconds": round(collect, 2),
                "round_train_seconds": round(train, 2),
            }
        return figures


def train_ray(cfg: RunConfig, resume: Path | None = None, **options: Any) -> TrainResult:
    """Train with the replay, learner and workers as Ray actors (``cfg.train.mode``). The
    ``options`` are :func:`~distrl.runtime.training.train_with`'s: ``demonstrations``,
    ``on_progress``, ``evaluate`` (False skips the test-split curve: ``distrl bench collect``
    times collection) and ``start_weights`` (a policy already warm-started: a benchmark clones
    once and starts every method from it)."""
    parts = AsyncParts if cfg.train.mode == "async" else SyncParts
    check_config(cfg)  # before the warm start's minutes, not when Ray starts after them
    return train_with(parts, cfg, resume, session=lambda: ray_session(cfg), **options)
