"""``runtime=serial``: worker, replay and learner in one process, for debugging and small runs.

Each round the worker collects episodes with its (possibly stale) copy of the weights, the
trajectories are appended to the run's Parquet store before they count, the learner ingests them
and runs a few updates, and the worker picks up the new weights. The test split is evaluated
(greedy and sampled) at fixed wall-clock points; metrics go to TensorBoard; checkpoints are
written atomically, so a killed run resumes from its last one (``resume``).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter

from distrl.algos.bc import behaviour_clone
from distrl.algos.rewards import shaped_rewards
from distrl.config.schema import RunConfig
from distrl.core.task import Task
from distrl.core.trajectory import Trajectory
from distrl.envs.backends import load_tasks
from distrl.errors import InputError
from distrl.policies.base import Policy
from distrl.runtime.components import (
    build_learner,
    build_policy,
    build_replay,
    capture_config,
    reads_screenshots,
)
from distrl.runtime.evaluation import EvaluationDevices, TaskSampler, training_devices
from distrl.runtime.learner import Learner
from distrl.runtime.play import play
from distrl.runtime.replay_service import ReplayService
from distrl.runtime.run_dir import create_run_dir
from distrl.runtime.run_log import (
    RunClock,
    TrainResult,
    load_checkpoint,
    record_eval,
    restoring_from,
    save_checkpoint,
    write_outputs,
)
from distrl.runtime.worker import Worker
from distrl.store import TrajectoryStore

#: Where a run that collects its own warm-start demonstrations stores them.
DEMOS_FOLDER = "demos"


def demonstration_config(cfg: RunConfig) -> RunConfig:
    """The play config that collects ``cfg``'s warm-start demonstrations (noisy oracle).

    Demonstrations are an offline dataset, not part of the online run: they are played at
    simulator speed, without the emulator latency and fault model of ``cfg``'s devices."""
    demo_cfg = cfg.model_copy(deep=True)
    demo_cfg.env.phonesim.latency.enabled = False
    demo_cfg.play.policy = "noisy"
    demo_cfg.play.noise = cfg.train.demo_noise
    demo_cfg.play.episodes = cfg.train.warm_start_episodes
    return demo_cfg


def load_demonstrations(folder: Path) -> list[Trajectory]:
    """The trajectories of a ``distrl collect-demos`` (or ``play``) run folder."""
    store_dir = folder / "trajectories"
    if not store_dir.is_dir():
        raise InputError(f"train.demos={folder}: no trajectories/ folder (not a demos run folder)")
    demonstrations = TrajectoryStore(store_dir).load()
    if not any(t.success for t in demonstrations):
        raise InputError(f"train.demos={folder}: no successful demonstration to clone")
    return demonstrations


def warm_start(
    policy: Policy,
    cfg: RunConfig,
    tasks: list[Task],
    run_dir: Path,
    demonstrations: list[Trajectory] | None = None,
) -> list[Trajectory]:
    """Clone noisy-oracle demonstrations into ``policy`` (DigiRL/DistRL start from a weak agent);
    returns them (the replay keeps them when ``train.demo_fraction`` > 0).

    Uses ``demonstrations`` when given, else collects them now and stores them under
    ``run_dir/demos`` like any play run; cloning uses them in memory."""
    if demonstrations is None:
        demo_cfg = capture_config(demonstration_config(cfg), policy)
        demo_cfg.run_root, demo_cfg.run_name = str(run_dir), DEMOS_FOLDER
        demonstrations = []
        play(demo_cfg, tasks, on_episode=demonstrations.append, command="demos")
    behaviour_clone(
        policy,
        demonstrations,
        steps=cfg.train.bc_steps,
        batch_size=cfg.train.bc_batch_size,
        lr=cfg.train.bc_lr,
        seed=cfg.seed,
    )
    return demonstrations


def resumed_demonstrations(cfg: RunConfig, run_dir: Path) -> list[Trajectory]:
    """The demonstrations a resumed run warm-started from, for its replay's demonstration share:
    ``train.demos``, else those it collected into ``run_dir/demos`` (none: an empty list)."""
    if cfg.train.demo_fraction == 0:
        return []
    if cfg.train.demos:
        return load_demonstrations(Path(cfg.train.demos))
    store_dir = run_dir / DEMOS_FOLDER / "trajectories"
    return TrajectoryStore(store_dir).load() if store_dir.is_dir() else []


def log_collection(
    writer: SummaryWriter,
    step: int,
    replay: ReplayService,
    trajectories: list[Trajectory],
    seconds: float,
) -> None:
    """TensorBoard scalars of collected trajectories, stepped by the learner's update count."""
    shaping = replay.algorithm.shaping
    returns = [sum(shaped_rewards(t, shaping)) for t in trajectories]
    env_steps = sum(len(t) for t in trajectories)
    writer.add_scalar("collect/success", np.mean([t.success for t in trajectories]), step)
    writer.add_scalar("collect/return", np.mean(returns), step)
    writer.add_scalar("collect/episode_steps", env_steps / len(trajectories), step)
    writer.add_scalar("collect/env_steps_per_s", env_steps / max(seconds, 1e-9), step)
    writer.add_scalar("replay/windows", len(replay), step)
    writer.add_scalar("replay/stale_dropped", replay.counters.stale_dropped, step)


def _save_checkpoint(
    run_dir: Path,
    learner: Learner,
    replay: ReplayService,
    worker: Worker,
    tasks: TaskSampler,
    result: TrainResult,
    elapsed: float,
) -> None:
    """Everything a resumed run needs (learner, replay counters, every RNG)."""
    state = {
        "learner": learner.state_dict(),
        "replay": replay.state_dict(),
        "elapsed": elapsed,
        "curve": result.curve,
        "episodes": result.episodes,
        "worker_generator": worker.generator.get_state(),
        "task_sampler": tasks.rng.bit_generator.state,
        "torch_rng": torch.get_rng_state(),
    }
    save_checkpoint(run_dir, state, learner.policy)


def update_from_replay(
    learner: Learner, replay: ReplayService, batch_size: int
) -> dict[str, float]:
    """One learner update on a batch from ``replay``, priorities written back."""
    batch = replay.sample(batch_size, learner.version)
    if batch is None or not batch.windows:
        return {"skipped_stale_batch": 1.0}
    priorities, metrics = learner.update(batch)
    replay.update_priorities(batch.slots, batch.generations, priorities)
    return metrics


def train(
    cfg: RunConfig,
    resume: Path | None = None,
    demonstrations: list[Trajectory] | None = None,
    on_progress: Callable[[float, dict[str, float]], None] | None = None,
) -> TrainResult:
    """Train for ``cfg.train.minutes`` of wall-clock time (or ``max_updates``).

    The warm start clones ``demonstrations`` if given, else those of ``cfg.train.demos``, else
    freshly collected ones (``cfg.train.warm_start_episodes``; 0 means no warm start)."""
    if cfg.train.learner_processes > 1:
        raise InputError(
            f"train.learner_processes={cfg.train.learner_processes} > 1 needs the ray runtime "
            "(train.runtime=ray); the serial runtime trains in one process"
        )
    if demonstrations is None and cfg.train.demos and resume is None:
        demonstrations = load_demonstrations(Path(cfg.train.demos))  # bad input fails first
    torch.manual_seed(cfg.seed)
    run_dir = resume if resume is not None else create_run_dir(cfg, "train")
    train_tasks = load_tasks(cfg, "train")
    test_tasks = load_tasks(cfg, "test")
    policy = build_policy(cfg)
    learner = build_learner(cfg, policy)
    replay = build_replay(cfg, reads_screenshots(policy), run_dir / "trajectories")
    if resume is None and (demonstrations or cfg.train.warm_start_episodes > 0):
        demonstrations = warm_start(policy, cfg, train_tasks, run_dir, demonstrations)
    elif resume is not None:
        demonstrations = resumed_demonstrations(cfg, run_dir)
    if cfg.train.demo_fraction > 0 and demonstrations:
        replay.add_demonstrations(demonstrations)
    result = TrainResult(run_dir, extra=learner.weights_figures())
    elapsed_before = 0.0
    task_sampler = TaskSampler(train_tasks, cfg.seed)
    worker = Worker(
        training_devices(capture_config(cfg, policy), cfg.train.devices),
        copy.deepcopy(policy),
        task_sampler,
        seed=cfg.seed,
    )
    result.drops = worker.stats.drops
    if resume is not None:
        state = load_checkpoint(run_dir)
        with restoring_from(run_dir):
            learner.load_state_dict(state["learner"])
            assert replay.store is not None
            replay.restore(state["replay"], replay.store.load(), learner.version)
            result.curve, result.episodes = state["curve"], state["episodes"]
            elapsed_before = state["elapsed"]
            worker.generator.set_state(state["worker_generator"])
            task_sampler.rng.bit_generator.state = state["task_sampler"]
            torch.set_rng_state(state["torch_rng"])
    worker.set_weights(*learner.weights())
    eval_devices = EvaluationDevices(capture_config(cfg, policy))
    try:
        _train_loop(
            cfg,
            run_dir,
            learner,
            replay,
            worker,
            task_sampler,
            test_tasks,
            result,
            elapsed_before,
            on_progress,
            eval_devices,
        )
    finally:
        worker.close()
        eval_devices.close()
    return result


def _train_loop(
    cfg: RunConfig,
    run_dir: Path,
    learner: Learner,
    replay: ReplayService,
    worker: Worker,
    task_sampler: TaskSampler,
    test_tasks: list[Task],
    result: TrainResult,
    elapsed_before: float,
    on_progress: Callable[[float, dict[str, float]], None] | None,
    eval_devices: EvaluationDevices,
) -> None:
    """Collect, store, update, evaluate and checkpoint until the budget is spent."""
    writer = SummaryWriter(str(run_dir / "tensorboard"))
    last_eval = result.curve[-1]["minutes"] if result.curve else None
    clock = RunClock(cfg, elapsed_before, last_eval)

    def record(elapsed: float) -> None:
        record_eval(
            cfg, learner.policy, test_tasks, elapsed, learner.updates, result, writer, eval_devices
        )

    while True:
        elapsed = clock.elapsed
        if clock.eval_due():
            record(elapsed)
        done_by_updates = (
            cfg.train.max_updates is not None and learner.updates >= cfg.train.max_updates
        )
        if clock.out_of_time() or done_by_updates:
            if result.curve[-1]["updates"] != learner.updates:
                record(elapsed)  # the curve ends with the policy the run ends with
            break
        collect_started = time.monotonic()
        trajectories = worker.collect(cfg.train.episodes_per_round)
        collect_seconds = time.monotonic() - collect_started
        replay.add(trajectories)
        replay.flush()  # stored before they count as collected
        result.episodes += len(trajectories)
        log_collection(writer, learner.updates, replay, trajectories, collect_seconds)
        metrics: dict[str, float] = {}
        if len(replay) >= cfg.train.min_replay:
            update_started = time.monotonic()
            for _ in range(cfg.train.updates_per_round):
                metrics = update_from_replay(learner, replay, cfg.train.batch_size)
                for key, value in metrics.items():
                    writer.add_scalar(f"learner/{key}", value, learner.updates)
            writer.add_scalar(
                "learner/updates_per_s",
                cfg.train.updates_per_round / max(time.monotonic() - update_started, 1e-9),
                learner.updates,
            )
            worker.set_weights(*learner.weights())
        if on_progress is not None:
            on_progress(clock.fraction, metrics)
        if clock.checkpoint_due():
            _save_checkpoint(run_dir, learner, replay, worker, task_sampler, result, elapsed)
    result.updates = learner.updates
    _save_checkpoint(run_dir, learner, replay, worker, task_sampler, result, clock.elapsed)
    writer.close()
    write_outputs(run_dir, result)
