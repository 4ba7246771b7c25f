"""``runtime=ray``: place the replay, learner and workers as Ray actors and drive a run.

The driver (this process) owns the run folder: TensorBoard, the evaluation curve, checkpoints.
It does not touch data on its way: workers send trajectories to the replay actor, the learner
actor pulls batches from it and publishes weights to the board, workers pick them up.

* **async**: workers collect until told to stop; the driver asks the learner for short chunks of
  updates (so it can evaluate, checkpoint and notice dead workers in between).
* **sync** (DigiRL-style baseline): each round, every worker collects its share of
  ``episodes_per_round`` with the same weights, all wait at the barrier, the learner runs
  ``updates_per_round`` updates, the new weights are broadcast.

A worker actor that dies (``ray.kill``, a crashed process) is restarted by Ray (``max_restarts``),
re-syncs to the newest weights in its constructor, and the driver resumes its work; episodes it
had in flight are lost (never stored, never counted). Checkpoints hold the learner, the replay's
counters and RNG and the curve; the replay's windows are rebuilt from the Parquet store on
``--resume``, so a run killed with SIGKILL continues from its last checkpoint.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ray
import torch
from ray.exceptions import RayActorError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
from torch.utils.tensorboard import SummaryWriter

from distrl.config.schema import RunConfig
from distrl.core.trajectory import Trajectory
from distrl.envs.backends import load_tasks
from distrl.runtime.async_worker import CollectStats
from distrl.runtime.components import build_policy, capture_config, reads_screenshots
from distrl.runtime.distributed.actors import LearnerActor, ReplayActor, WeightsBoard, WorkerActor
from distrl.runtime.distributed.learner_group import check_group_resources, start_learner_group
from distrl.runtime.distributed.session import device_shares, ray_session
from distrl.runtime.evaluation import EvaluationDevices
from distrl.runtime.run_dir import create_run_dir
from distrl.runtime.run_log import (
    RunClock,
    TrainResult,
    load_checkpoint,
    record_eval,
    save_checkpoint,
    write_outputs,
)
from distrl.runtime.serial import load_demonstrations, resumed_demonstrations, warm_start
from distrl.store import TrajectoryStore

#: Longest stretch of learner updates between two looks of the driver (real seconds).
CHUNK_SECONDS = 2.0


class Placement:
    """The run's actors, created with explicit resources."""

    def __init__(
        self,
        cfg: RunConfig,
        run_dir: Path,
        policy_state: dict[str, torch.Tensor],
        learner_state: dict[str, Any] | None,
    ):
        self.cfg = cfg
        gpus = 1 if ray.cluster_resources().get("GPU", 0) >= 1 else 0
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
        keep_screens = reads_screenshots(build_policy(cfg))
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
        if cfg.train.learner_processes > 1:
            try:
                self.learner_shards = start_learner_group(
                    cfg, self.learner, self.learner_options, policy_state, learner_state
                )
            except BaseException:
                self.shutdown()  # the caller never gets a Placement to shut down
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
                .remote(cfg, index, first, devices, replay_name, board_name, cfg.seed)
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
        for actor in [*self.workers, *self.learner_shards, self.learner, self.replay, self.board]:
            ray.kill(actor, no_restart=True)


def train_ray(
    cfg: RunConfig,
    resume: Path | None = None,
    demonstrations: list[Trajectory] | None = None,
    on_progress: Callable[[float, dict[str, float]], None] | None = None,
    evaluate: bool = True,
    start_weights: dict[str, torch.Tensor] | None = None,
) -> TrainResult:
    """Train with the replay, learner and workers as Ray actors (``cfg.train.mode``);
    ``evaluate=False`` skips the test-split curve (``distrl bench collect`` times collection);
    ``start_weights`` is a policy already warm-started (a benchmark clones once and starts every
    method from it) in place of cloning ``demonstrations`` here."""
    if demonstrations is None and cfg.train.demos and resume is None:
        demonstrations = load_demonstrations(Path(cfg.train.demos))
    torch.manual_seed(cfg.seed)
    with ray_session(cfg):
        run_dir = resume if resume is not None else create_run_dir(cfg, "train")
        test_tasks = load_tasks(cfg, "test")
        policy = build_policy(cfg)
        state = load_checkpoint(run_dir) if resume is not None else None
        if state is None and start_weights is not None:
            policy.load_state_dict(start_weights)
        elif state is None and (demonstrations or cfg.train.warm_start_episodes > 0):
            train_tasks = load_tasks(cfg, "train")
            demonstrations = warm_start(policy, cfg, train_tasks, run_dir, demonstrations)
        elif state is not None:
            demonstrations = resumed_demonstrations(cfg, run_dir)
        learner_state = state["learner"] if state is not None else None
        placement = Placement(cfg, run_dir, policy.state_dict(), learner_state)
        result = TrainResult(run_dir)
        elapsed_before = 0.0
        if cfg.train.demo_fraction > 0 and demonstrations:
            placement.get(placement.replay.add_demonstrations.remote(demonstrations))
        if state is not None:
            version = int(state["learner"]["version"])
            result.episodes = placement.get(
                placement.replay.restore.remote(state["replay"], version)
            )
            result.curve = state["curve"]
            elapsed_before = state["elapsed"]
        try:
            placement.worker_nodes()  # constructed (devices built) before the clock starts
            placement.get(placement.learner.publish.remote())
            runner = _AsyncRun if cfg.train.mode == "async" else _SyncRun
            run = runner(cfg, placement, result, elapsed_before, test_tasks, on_progress)
            run.evaluating = evaluate
            return run.run()
        finally:
            placement.shutdown()


class _Run:
    """The loop both modes share: evaluate, stop, checkpoint, log; ``step`` differs."""

    def __init__(
        self,
        cfg: RunConfig,
        placement: Placement,
        result: TrainResult,
        elapsed_before: float,
        test_tasks: list,
        on_progress: Callable[[float, dict[str, float]], None] | None,
    ):
        self.cfg, self.placement, self.result = cfg, placement, result
        self.test_tasks = test_tasks
        self.on_progress = on_progress
        last_eval = result.curve[-1]["minutes"] if result.curve else None
        self.clock = RunClock(cfg, elapsed_before, last_eval)
        self.writer = SummaryWriter(str(result.run_dir / "tensorboard"))
        self.updates = placement.get(placement.learner.total_updates.remote())
        self.collected = CollectStats()
        #: Worker restarts, counted by the board from worker lives (read when the run stops).
        self.worker_restarts = 0
        #: Wall-clock seconds of collection, and device-seconds the devices were available.
        self.collect_seconds = 0.0
        self.device_seconds = 0.0
        self.evaluating = True
        self.policy = build_policy(cfg)
        self.eval_devices = EvaluationDevices(capture_config(cfg, self.policy))
        self._sync_policy()

    # -- pieces --------------------------------------------------------------------------------
    def _sync_policy(self) -> None:
        state, version, updates = self.placement.get(self.placement.learner.policy_state.remote())
        self.policy.load_state_dict(state)
        self.policy.version = version
        # An async learner trains on while the driver works: the curve names what it evaluates.
        self.updates = updates

    def _evaluate(self) -> None:
        if not self.evaluating:
            return
        self._sync_policy()
        record_eval(
            self.cfg,
            self.policy,
            self.test_tasks,
            self.clock.elapsed,
            self.updates,
            self.result,
            self.writer,
            self.eval_devices,
        )

    def _log(self, trained: dict[str, Any]) -> None:
        for key, value in trained.get("metrics", {}).items():
            self.writer.add_scalar(f"learner/{key}", value, self.updates)
        stats = self.placement.get(self.placement.replay.stats.remote())
        for key in ("recent_success", "recent_return", "recent_episode_steps"):
            if key in stats:
                name = key.removeprefix("recent_")
                self.writer.add_scalar(f"collect/{name}", stats[key], self.updates)
        self.writer.add_scalar("replay/windows", stats["windows"], self.updates)
        self.writer.add_scalar("replay/stale_dropped", stats["stale_dropped"], self.updates)
        self.writer.add_scalar("collect/trajectories", stats["trajectories"], self.updates)
        self.result.episodes = int(stats["trajectories"])

    def _checkpoint(self) -> None:
        self.placement.get(self.placement.replay.flush.remote())
        learner_state = self.placement.get(self.placement.learner.state_dict.remote())
        self.policy.load_state_dict(learner_state["policy"])
        state = {
            "learner": learner_state,
            "replay": self.placement.get(self.placement.replay.state_dict.remote()),
            "elapsed": self.clock.elapsed,
            "curve": self.result.curve,
            "episodes": self.result.episodes,
        }
        save_checkpoint(self.result.run_dir, state, self.policy)

    def _done_by_updates(self) -> bool:
        limit = self.cfg.train.max_updates
        return limit is not None and self.updates >= limit

    # -- the loop ------------------------------------------------------------------------------
    def run(self) -> TrainResult:
        try:
            return self._run()
        finally:
            self.eval_devices.close()

    def _run(self) -> TrainResult:
        self.start()
        trained: dict[str, Any] = {}
        while True:
            if self.clock.eval_due():
                self._evaluate()
            if self.clock.out_of_time() or self._done_by_updates():
                break
            trained = self.step()
            self.updates = int(trained["total_updates"])
            self._log(trained)
            if self.on_progress is not None:
                self.on_progress(self.clock.fraction, trained.get("metrics", {}))
            if self.clock.checkpoint_due():
                self._checkpoint()
        self.stop()
        self.worker_restarts = self.placement.get(self.placement.board.restarts.remote())
        self.placement.get(self.placement.replay.flush.remote())
        self._log({})
        if not self.result.curve or self.result.curve[-1]["updates"] != self.updates:
            self._evaluate()  # the curve ends with the policy the run ends with
        self._checkpoint()
        self.result.updates = self.updates
        self.result.extra = {
            "runtime": "ray",
            "mode": self.cfg.train.mode,
            **self.figures(),
            **self.placement.get(self.placement.learner.weights_figures.remote()),
            "worker_nodes": self.placement.worker_nodes(),
        }
        self.writer.close()
        write_outputs(self.result.run_dir, self.result)
        return self.result

    def figures(self) -> dict[str, Any]:
        """The exactly-once accounting (what the replay counted against what is on disk) and
        the collection figures: utilisation, drops, restarts."""
        stats = self.collected
        device_seconds = max(self.device_seconds, 1e-9)
        store = TrajectoryStore(self.result.run_dir / "trajectories")
        ids = store.trajectory_ids()
        counted = self.placement.get(self.placement.replay.stats.remote())
        return {
            "collected": int(counted["trajectories"]),
            "stored": store.count(),
            "duplicated": len(ids) - len(set(ids)),
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
        }

    def _add_figures(self, figures: dict[str, float]) -> None:
        if self.cfg.train.mode == "async":  # each worker's own span (sync: the round's, below)
            self.device_seconds += figures["devices"] * figures["seconds"]
        self.collected.merge(
            CollectStats(**{k: figures[k] for k in vars(CollectStats()) if k in figures})
        )

    def start(self) -> None: ...

    def step(self) -> dict[str, Any]:
        raise NotImplementedError

    def stop(self) -> None: ...


class _AsyncRun(_Run):
    """The learner always has the next ``train`` call queued: while the driver evaluates, logs
    or checkpoints, the learner keeps training (an idle learner beside busy devices is the
    waste asynchrony exists to remove). One call in flight at a time, each sized from the count
    the previous one returned, so ``max_updates`` is never overshot."""

    def start(self) -> None:
        self.started = time.monotonic()
        self.running = {w.run_async.remote(): i for i, w in enumerate(self.placement.workers)}
        self.in_flight: Any = self._queue_training(self.updates)

    def _queue_training(self, total_updates: int) -> Any:
        """The next ``train`` call, or None when ``max_updates`` is reached."""
        limit = self.cfg.train.max_updates
        chunk = 1_000_000 if limit is None else limit - total_updates
        return self.placement.learner.train.remote(chunk, CHUNK_SECONDS) if chunk > 0 else None

    def step(self) -> dict[str, Any]:
        if self.in_flight is None:  # max_updates reached; the loop stops on it
            return {"updates": 0, "total_updates": self.updates, "metrics": {}}
        trained = self.placement.get(self.in_flight)
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

    def stop(self) -> None:
        if self.in_flight is not None:  # the queued call's updates count (the budget is spent)
            self.updates = int(self.placement.get(self.in_flight)["total_updates"])
            self.in_flight = None
        self.placement.get(self.placement.board.stop.remote())
        for ref in list(self.running):
            # A worker that died as the run ended never sent its partial episodes.
            with contextlib.suppress(RayActorError):
                self._add_figures(self.placement.get(ref))
        self.collect_seconds = time.monotonic() - self.started


class _SyncRun(_Run):
    def start(self) -> None:
        #: (collect-until-barrier, train) seconds of each round.
        self.rounds: list[tuple[float, float]] = []

    def step(self) -> dict[str, Any]:
        self.placement.get(self.placement.learner.publish.remote())
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
        self.placement.get(self.placement.replay.flush.remote())
        collected = time.monotonic()
        trained = self.placement.get(
            self.placement.learner.train.remote(self.cfg.train.updates_per_round, float("inf"))
        )
        ended = time.monotonic()
        self.collect_seconds += ended - started
        self.device_seconds += devices * (ended - started)  # idle while training too
        self.writer.add_scalar("sync/collect_seconds", collected - started, self.updates)
        self.writer.add_scalar("sync/train_seconds", ended - collected, self.updates)
        self.rounds.append((collected - started, ended - collected))
        return trained

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
