"""The Ray actors of the distributed runtime: thin shells around the serial runtime's classes.

Data flows one way, as in the serial runtime:

* :class:`WorkerActor` runs an :class:`~distrl.runtime.async_worker.AsyncWorker` (K devices,
  concurrently) and sends finished trajectories to the replay, at most one send in flight (a send
  waits for the previous one to be acknowledged: that bounds what is queued between them);
* :class:`ReplayActor` wraps :class:`~distrl.runtime.replay_service.ReplayService`: it stores
  trajectories in the run's Parquet store before they count, then serves batches;
* :class:`LearnerActor` wraps :class:`~distrl.runtime.learner.Learner`: it pulls batches, updates,
  writes priorities back and publishes weights; with ``train.learner_processes > 1`` it leads a
  data-parallel group of :class:`~distrl.runtime.distributed.learner_group.LearnerShard` actors;
* :class:`WeightsBoard` holds the newest published weights (an object-store reference, so weights
  travel once per version and node), the curriculum's task-family weights and the stop flag;
  workers poll it between episodes.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import ray
import torch

from distrl.config.schema import RunConfig
from distrl.core.seeds import Stream, derive_rng, derive_seed
from distrl.core.trajectory import Trajectory
from distrl.envs.devices import Purpose, make_device
from distrl.envs.protocol import DeviceEnv
from distrl.policies.base import reads_screenshots
from distrl.runtime.acting import ActionSource
from distrl.runtime.async_worker import AsyncWorker, CollectStats
from distrl.runtime.collection_stats import RecentCollection, replay_stats, take_in
from distrl.runtime.components import build_policy, build_replay
from distrl.runtime.curriculum import Outcome
from distrl.runtime.distributed.learner_group import (
    LearnerGroup,
    join_group,
    rendezvous_address,
    restore_learner,
)
from distrl.runtime.inference.service import InferenceClient
from distrl.runtime.learner import Learner, run_updates
from distrl.runtime.replay_service import ReplayBatch
from distrl.runtime.task_sampler import TaskSampler

#: How often a busy worker looks at the board for the stop flag (real seconds).
STOP_POLL_SECONDS = 0.5
#: How often a held-off worker asks the replay whether it takes data again.
BACKPRESSURE_POLL_SECONDS = 0.2


class WeightsBoard:
    """The newest weights (version and object reference) and whether workers should stop."""

    def __init__(self) -> None:
        self.version = -1
        self.refs: list[ray.ObjectRef] = []
        self.stopped = False
        #: Worker lives started, per worker index: a restart shows up as a second life, however
        #: many of the driver's calls the dead actor failed (counting failed calls overcounts).
        self.lives: dict[int, int] = {}
        #: The curriculum's newest task-family weights and how many times they were published.
        self.task_weights: dict[str, float] | None = None
        self.task_weights_version = 0

    def register_life(self, worker_index: int) -> int:
        """Count a new life of worker ``worker_index``; returns its number (0: the first)."""
        self.lives[worker_index] = self.lives.get(worker_index, 0) + 1
        return self.lives[worker_index] - 1

    def restarts(self) -> int:
        """Worker restarts so far: lives beyond each worker's first."""
        return sum(lives - 1 for lives in self.lives.values())

    def publish(self, version: int, refs: list[ray.ObjectRef]) -> None:
        # ``refs`` is a list so Ray hands over the reference itself, not the weights.
        if version > self.version:
            self.version, self.refs = version, refs

    def poll(self, known_version: int) -> tuple[bool, int, list[ray.ObjectRef] | None]:
        """(stop?, newest version, its reference if newer than ``known_version``)."""
        newer = self.refs if self.version > known_version else None
        return self.stopped, self.version, newer

    def stop(self) -> None:
        self.stopped = True

    def publish_task_weights(self, weights: dict[str, float]) -> None:
        """The curriculum's new draw probabilities per task family (docs/design.md §7.13)."""
        self.task_weights = dict(weights)
        self.task_weights_version += 1

    def poll_task_weights(self, known_version: int) -> tuple[int, dict[str, float] | None]:
        """(newest task-weights version, the weights if newer than ``known_version``)."""
        newer = self.task_weights if self.task_weights_version > known_version else None
        return self.task_weights_version, newer


class ReplayActor:
    """A :class:`ReplayService` that also keeps running collection figures for the driver."""

    def __init__(self, cfg: RunConfig, store_dir: str, keep_screenshots: bool):
        self.service = build_replay(
            cfg, keep_screenshots, store_dir=Path(store_dir), flush_seconds=cfg.ray.flush_seconds
        )
        self.recent = RecentCollection()

    def add(self, trajectories: list[Trajectory]) -> bool:
        """Take trajectories; returns whether the sender may keep sending (backpressure)."""
        return take_in(self.service, self.recent, trajectories)

    def add_demonstrations(self, trajectories: list[Trajectory]) -> int:
        return self.service.add_demonstrations(trajectories)

    def can_accept(self) -> bool:
        return self.service.can_accept()

    def sample(self, batch_size: int, learner_version: int) -> ReplayBatch | None:
        return self.service.sample(batch_size, learner_version)

    def update_priorities(
        self, slots: np.ndarray, generations: np.ndarray, priorities: np.ndarray
    ) -> int:
        return self.service.update_priorities(slots, generations, priorities)

    def flush(self) -> int:
        return self.service.flush()

    def stats(self) -> dict[str, float]:
        """Counters, replay size, and collection figures since the previous call."""
        return replay_stats(self.service, self.recent)

    def task_outcomes(self) -> list[Outcome]:
        """(task family, success) of the trajectories taken since the previous call."""
        return self.recent.take_outcomes()

    def state_dict(self) -> dict[str, object]:
        return self.service.state_dict()

    def restore(self, state: dict[str, object], learner_version: int) -> int:
        """Refill from the run's store after a restart; returns the stored trajectory count."""
        assert self.service.store is not None
        stored = self.service.store.load()
        self.service.restore(state, stored, learner_version)
        return len(stored)


class LearnerActor:
    """Trains on batches pulled from the replay and publishes weights to the board."""

    def __init__(
        self,
        cfg: RunConfig,
        replay: Any,
        board: Any,
        policy_state: dict[str, torch.Tensor] | None,
        learner_state: dict[str, object] | None,
    ):
        self.cfg = cfg
        if cfg.train.learner_processes == 1:  # a group's processes share the cores (ddp)
            torch.set_num_threads(cfg.ray.learner_threads or os.cpu_count() or 1)
        self.replay, self.board = replay, board
        self.learner = restore_learner(cfg, policy_state, learner_state)
        self.timeout = cfg.ray.call_timeout_seconds
        self.published = False
        #: The learning-rate factor the learner trains at (``train.lr_schedule``).
        self.lr_scale = 1.0
        #: What runs an update: the learner itself, or the group it leads (``join_group``).
        self.updater: Learner | LearnerGroup = self.learner

    def rendezvous(self) -> str:
        """Where the learner group meets (this process is its rank 0)."""
        return rendezvous_address()

    def join_group(self, address: str, shards: list[Any]) -> int:
        """Form the learner group as rank 0 with ``shards`` as ranks 1..N; from now on every
        update is data-parallel. Returns the group's size."""
        processes = 1 + len(shards)
        join_group(self.learner, address, 0, processes, self.timeout)
        self.updater = LearnerGroup(self.learner, shards, self.timeout)
        return processes

    def publish(self) -> int:
        """Publish the current weights (with ``freeze_behaviour``: only the first time)."""
        if self.cfg.train.freeze_behaviour and self.published:
            return self.learner.version
        self.published = True
        state, version = self.learner.weights()
        ray.get(self.board.publish.remote(version, [ray.put(state)]), timeout=self.timeout)
        return version

    def train(self, max_updates: int, max_seconds: float, lr_scale: float = 1.0) -> dict[str, Any]:
        """Up to ``max_updates`` updates within ``max_seconds`` at ``lr_scale`` times
        ``train.lr``, publishing after each; stops early while the replay holds too little.
        Returns the count and the mean metrics."""
        if lr_scale != self.lr_scale:
            self.updater.set_lr_scale(lr_scale)
            self.lr_scale = lr_scale
        trained = run_updates(self._update_once, max_updates, max_seconds)
        return {**trained, "total_updates": self.learner.updates}

    def _update_once(self) -> dict[str, float] | None:
        batch = ray.get(
            self.replay.sample.remote(self.cfg.train.batch_size, self.learner.version),
            timeout=self.timeout,
        )
        if batch is None or not batch.windows:
            return None if batch is None else {}  # {}: every window drawn was stale (now gone)
        priorities, metrics = self.updater.update(batch)
        # Not awaited: calls from one caller run in order, so the next sample sees it.
        self.replay.update_priorities.remote(batch.slots, batch.generations, priorities)
        self.publish()
        return metrics

    def total_updates(self) -> int:
        return self.learner.updates

    def policy_state(self) -> tuple[dict[str, torch.Tensor], int, int]:
        """The weights a run evaluates (:meth:`Learner.deployed_weights`), their version and the
        update count they were taken at."""
        return (*self.learner.deployed_weights(), self.learner.updates)

    def weights_figures(self) -> dict[str, int]:
        """Bytes of one weights publication (trainable tensors only) and of the whole policy,
        and how many processes the learner runs."""
        processes = getattr(self.updater, "world_size", 1)
        return {
            **self.learner.weights_figures(),
            "learner_processes": processes,
            "learner_threads": torch.get_num_threads(),
        }

    def state_dict(self) -> dict[str, object]:
        return self.learner.state_dict()


class WorkerActor:
    """K devices driven by a local policy copy, or with ``service`` (the name of an inference
    service replica) by no model at all: the service acts for them. Sends finished trajectories
    to the replay."""

    def __init__(
        self,
        cfg: RunConfig,
        worker_index: int,
        first_device: int,
        num_devices: int,
        replay_name: str,
        board_name: str,
        session: int,
        service: str | None = None,
    ):
        # By name, not by handle: a restarted actor looks them up again (handles passed as
        # constructor arguments would have to outlive the actor's restarts).
        self.cfg = cfg
        self.replay, self.board = ray.get_actor(replay_name), ray.get_actor(board_name)
        self.timeout = cfg.ray.call_timeout_seconds
        life = ray.get(self.board.register_life.remote(worker_index), timeout=self.timeout)
        # Each life of a worker (a restart by Ray, a resumed run) draws its own streams.
        branch = (worker_index, session, life)
        #: Whether the weights live in this worker (local copy) or in the service.
        self.thin = service is not None
        if service is not None:
            acting: ActionSource = InferenceClient(
                ray.get_actor(service),
                timeout=self.timeout,
                retry_seconds=cfg.inference.retry_seconds,
            )
            screenshots = acting.uses_screenshots
        else:
            policy = build_policy(cfg)
            acting, screenshots = policy, reads_screenshots(policy)

        def new_device(index: int, incarnation: int) -> DeviceEnv:
            return make_device(
                cfg,
                Purpose.TRAIN,
                first_device + index,
                screenshots=screenshots,
                incarnation=incarnation,
                lineage=(session, life),
            )

        self.task_sampler = TaskSampler.for_training(
            cfg, derive_rng(cfg.seed, Stream.WORKER_TASKS, *branch)
        )
        #: The curriculum's task weights this worker draws with (their board version).
        self.task_weights_version = 0
        self.worker = AsyncWorker(
            new_device,
            num_devices,
            acting,
            self.task_sampler,
            worker_id=f"worker-{worker_index}",
            seed=derive_seed(cfg.seed, Stream.WORKER_ACTIONS, *branch),
            step_timeout_seconds=cfg.ray.step_timeout_seconds,
        )
        self.keep_screenshots = screenshots
        self.version = -1
        self._stop = False
        self._last_poll = 0.0
        self._send_ref: ray.ObjectRef | None = None
        self._accepting = True
        self._outbox: list[Trajectory] = []
        self.refresh_weights()  # a restarted worker re-syncs before it acts

    # -- weights and stop ----------------------------------------------------------------------
    def refresh_weights(self) -> None:
        stopped, version, refs = ray.get(self.board.poll.remote(self.version), timeout=self.timeout)
        self._stop = stopped
        self._last_poll = time.monotonic()
        if refs and self.thin:
            self.version = version  # the service takes them itself
        elif refs:
            self.worker.set_weights(ray.get(refs[0], timeout=self.timeout), version)
            self.version = version
        if self.cfg.curriculum.enabled:
            self._refresh_task_weights()

    def _refresh_task_weights(self) -> None:
        """Draw the next episodes' tasks by the curriculum's newest weights."""
        version, weights = ray.get(
            self.board.poll_task_weights.remote(self.task_weights_version), timeout=self.timeout
        )
        if weights is not None:
            self.task_sampler.set_family_weights(weights)
            self.task_weights_version = version

    def _should_stop(self) -> bool:
        if time.monotonic() - self._last_poll >= STOP_POLL_SECONDS:
            self.refresh_weights()
        return self._stop

    # -- sending -------------------------------------------------------------------------------
    def _lightened(self, trajectory: Trajectory) -> Trajectory:
        """What travels to the replay: no pixels unless the policy reads them (the run's store
        keeps no screens either)."""
        return trajectory if self.keep_screenshots else trajectory.without_screenshots()

    def _on_finished(self, trajectory: Trajectory) -> None:
        self._outbox.append(self._lightened(trajectory))
        self._send(wait=False)
        self.refresh_weights()  # between episodes: pick up newer weights

    def _send(self, wait: bool) -> None:
        """Send the outbox once the previous send is acknowledged (``wait``: block for it)."""
        if self._send_ref is not None:
            ready, _ = ray.wait([self._send_ref], timeout=self.timeout if wait else 0)
            if not ready:
                return
            self._accepting = ray.get(self._send_ref, timeout=self.timeout)
            self._send_ref = None
        if self._outbox:
            batch, self._outbox = self._outbox, []
            self._send_ref = self.replay.add.remote(batch)
        if wait and self._send_ref is not None:
            self._accepting = ray.get(self._send_ref, timeout=self.timeout)
            self._send_ref = None

    def _may_start(self) -> bool:
        if self.cfg.train.max_inserts_per_sample is None:
            return True  # no backpressure: the replay takes everything
        if self._send_ref is not None:
            # Until the replay acknowledges the last send it is unknown whether it takes more;
            # starting episodes on a stale "yes" let a loaded machine overshoot the budget by
            # several episodes per device.
            ray.wait([self._send_ref], timeout=BACKPRESSURE_POLL_SECONDS)
            self._send(wait=False)
            if self._send_ref is not None:
                return False
        if self._accepting:
            return True
        self._send(wait=False)
        if self._send_ref is None and self._outbox == []:
            self._accepting = ray.get(self.replay.can_accept.remote(), timeout=self.timeout)
            if not self._accepting:
                time.sleep(BACKPRESSURE_POLL_SECONDS)
        return self._accepting

    # -- the two modes -------------------------------------------------------------------------
    def run_async(self) -> dict[str, Any]:
        """Collect until the board says stop; returns this life's collection figures."""
        started = time.monotonic()
        before = CollectStats(**vars(self.worker.stats))
        self.worker.run(self._on_finished, may_start=self._may_start, should_stop=self._should_stop)
        self._send(wait=True)
        self._send(wait=True)  # the outbox may have refilled while the first send was in flight
        return self._figures(before, time.monotonic() - started)

    def collect(self, episodes: int) -> dict[str, Any]:
        """Sync mode: take the newest weights, run exactly ``episodes`` episodes, deliver them."""
        started = time.monotonic()
        self.refresh_weights()
        before = CollectStats(**vars(self.worker.stats))
        outbox: list[Trajectory] = []
        self.worker.run(lambda t: outbox.append(self._lightened(t)), max_episodes=episodes)
        ray.get(self.replay.add.remote(outbox), timeout=self.timeout)
        return self._figures(before, time.monotonic() - started)

    def _figures(self, before: CollectStats, seconds: float) -> dict[str, Any]:
        """The period's counts, and under ``drops`` why its dropped episodes were dropped."""
        now = vars(self.worker.stats)
        figures: dict[str, Any] = {key: now[key] - value for key, value in vars(before).items()}
        figures["seconds"] = seconds
        figures["devices"] = len(self.worker.slots)
        figures["drops"] = self.worker.take_drops()
        return figures

    def node_id(self) -> str:
        return ray.get_runtime_context().get_node_id()
