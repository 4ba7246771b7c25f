"""``runtime=serial``: worker, replay and learner in one process, for debugging and small runs.

Each round the worker collects episodes with its (possibly stale) copy of the weights, the
trajectories are appended to the run's Parquet store before they count, the learner ingests them
and runs a few updates, and the worker picks up the new weights. The test split is evaluated
(greedy and sampled) at fixed wall-clock points; metrics go to TensorBoard; checkpoints are
written atomically, so a killed run resumes from its last one (``resume``).
"""

from __future__ import annotations

import copy
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter

from distrl.algos.bc import behaviour_clone
from distrl.algos.registry import build_algorithm
from distrl.algos.rewards import shaped_rewards
from distrl.config.schema import RunConfig
from distrl.core.task import Task
from distrl.core.trajectory import Trajectory
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.errors import InputError
from distrl.policies.base import Policy
from distrl.policies.small import SmallPolicy, SmallPolicyConfig
from distrl.runtime.evaluation import TaskSampler, evaluate, phonesim_devices
from distrl.runtime.learner import Learner
from distrl.runtime.play import play
from distrl.runtime.run_dir import create_run_dir, write_summary
from distrl.runtime.worker import Worker
from distrl.store import TrajectoryStore

CHECKPOINT = "checkpoints/latest.pt"
POLICY_CHECKPOINT = "checkpoints/policy.pt"


@dataclass
class TrainResult:
    run_dir: Path
    curve: list[dict[str, float]] = field(default_factory=list)
    updates: int = 0
    episodes: int = 0

    def summary(self) -> dict[str, object]:
        return {
            "initial_success": self.curve[0]["success"] if self.curve else 0.0,
            "final_success": self.curve[-1]["success"] if self.curve else 0.0,
            "minutes": round(self.curve[-1]["minutes"], 2) if self.curve else 0.0,
            "updates": self.updates,
            "episodes": self.episodes,
            "curve": self.curve,
            "run_dir": str(self.run_dir),
        }


def demonstration_config(cfg: RunConfig) -> RunConfig:
    """The play config that collects ``cfg``'s warm-start demonstrations (noisy oracle)."""
    demo_cfg = cfg.model_copy(deep=True)
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
) -> list[float]:
    """Clone noisy-oracle demonstrations into ``policy`` (DigiRL/DistRL start from a weak agent).

    Uses ``demonstrations`` when given, else collects them now and stores them under
    ``run_dir/demos`` like any play run; cloning uses them in memory."""
    if demonstrations is None:
        demo_cfg = demonstration_config(cfg)
        demo_cfg.run_root, demo_cfg.run_name = str(run_dir), "demos"
        demonstrations = []
        play(demo_cfg, tasks, on_episode=demonstrations.append, command="demos")
    return behaviour_clone(
        policy,
        demonstrations,
        steps=cfg.train.bc_steps,
        batch_size=cfg.train.bc_batch_size,
        lr=cfg.train.bc_lr,
        seed=cfg.seed,
    )


def _log_collection(
    writer: SummaryWriter, learner: Learner, trajectories: list[Trajectory], seconds: float
) -> None:
    """TensorBoard scalars of one collection round, stepped by the learner's update count."""
    step = learner.counters.updates
    shaping = learner.algorithm.shaping
    returns = [sum(shaped_rewards(t, shaping)) for t in trajectories]
    env_steps = sum(len(t) for t in trajectories)
    writer.add_scalar("collect/success", np.mean([t.success for t in trajectories]), step)
    writer.add_scalar("collect/return", np.mean(returns), step)
    writer.add_scalar("collect/episode_steps", env_steps / len(trajectories), step)
    writer.add_scalar("collect/env_steps_per_s", env_steps / max(seconds, 1e-9), step)
    writer.add_scalar("replay/windows", len(learner.replay), step)
    writer.add_scalar("replay/stale_dropped", learner.counters.stale_dropped, step)


def _save_checkpoint(
    run_dir: Path,
    learner: Learner,
    worker: Worker,
    tasks: TaskSampler,
    result: TrainResult,
    elapsed: float,
) -> None:
    """Everything a resumed run needs (learner, counters, every RNG), written atomically, plus
    the policy alone (``checkpoints/policy.pt``) for ``distrl eval``."""
    path = run_dir / CHECKPOINT
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    torch.save(
        {
            "learner": learner.state_dict(),
            "elapsed": elapsed,
            "curve": result.curve,
            "episodes": result.episodes,
            "worker_generator": worker.generator.get_state(),
            "task_sampler": tasks.rng.bit_generator.state,
            "torch_rng": torch.get_rng_state(),
        },
        temporary,
    )
    os.replace(temporary, path)
    policy_path = run_dir / POLICY_CHECKPOINT
    learner.policy.save(policy_path.with_suffix(".tmp"))
    os.replace(policy_path.with_suffix(".tmp"), policy_path)


def train(
    cfg: RunConfig,
    resume: Path | None = None,
    demonstrations: list[Trajectory] | None = None,
    on_progress: Callable[[float, dict[str, float]], None] | None = None,
) -> TrainResult:
    """Train for ``cfg.train.minutes`` of wall-clock time (or ``max_updates``).

    The warm start clones ``demonstrations`` if given, else those of ``cfg.train.demos``, else
    freshly collected ones (``cfg.train.warm_start_episodes``; 0 means no warm start)."""
    if demonstrations is None and cfg.train.demos and resume is None:
        demonstrations = load_demonstrations(Path(cfg.train.demos))  # bad input fails first
    torch.manual_seed(cfg.seed)
    run_dir = resume if resume is not None else create_run_dir(cfg, "train")
    train_tasks = load_suite(cfg.env.suite, "train")
    test_tasks = load_suite(cfg.env.suite, "test")
    policy = SmallPolicy(SmallPolicyConfig())
    learner = Learner(
        policy,
        build_algorithm(cfg),
        window=cfg.aride.window,
        batch_size=cfg.train.batch_size,
        lr=cfg.train.lr,
        grad_clip=cfg.train.grad_clip,
        replay_capacity=cfg.train.replay_capacity,
        max_staleness=cfg.train.max_staleness,
        seed=cfg.seed,
    )
    if resume is None and (demonstrations or cfg.train.warm_start_episodes > 0):
        warm_start(policy, cfg, train_tasks, run_dir, demonstrations)
    store = TrajectoryStore(run_dir / "trajectories", save_screens=False)
    result = TrainResult(run_dir)
    elapsed_before = 0.0
    task_sampler = TaskSampler(train_tasks, cfg.seed)
    worker = Worker(
        phonesim_devices(cfg, cfg.train.devices, offset=0),
        copy.deepcopy(policy),
        task_sampler,
        seed=cfg.seed,
    )
    if resume is not None:
        state = torch.load(run_dir / CHECKPOINT, weights_only=True)
        # Refill the replay from the store first (the store is the record of what was
        # collected), then restore the learner, so its counters are the checkpoint's, not
        # inflated by the refill.
        learner.ingest(store.load()[-cfg.train.replay_capacity :])
        learner.load_state_dict(state["learner"])
        result.curve, result.episodes = state["curve"], state["episodes"]
        elapsed_before = state["elapsed"]
        worker.generator.set_state(state["worker_generator"])
        task_sampler.rng.bit_generator.state = state["task_sampler"]
        torch.set_rng_state(state["torch_rng"])
    worker.set_weights(*learner.weights())
    writer = SummaryWriter(str(run_dir / "tensorboard"))
    started = time.monotonic() - elapsed_before
    budget = cfg.train.minutes * 60
    next_eval = (
        0.0
        if not result.curve
        else result.curve[-1]["minutes"] * 60 + cfg.train.eval_every_minutes * 60
    )
    next_checkpoint = elapsed_before + cfg.train.checkpoint_every_minutes * 60

    def record_eval(elapsed: float) -> None:
        episodes = cfg.train.eval_episodes
        greedy = evaluate(learner.policy, cfg, test_tasks, episodes, True).success_rate
        sampled = evaluate(learner.policy, cfg, test_tasks, episodes, False).success_rate
        point = {
            "minutes": elapsed / 60,
            "success": greedy,
            "sampled_success": sampled,
            "updates": learner.counters.updates,
        }
        result.curve.append(point)
        writer.add_scalar("eval/success_greedy", greedy, learner.counters.updates)
        writer.add_scalar("eval/success_sampled", sampled, learner.counters.updates)

    while True:
        elapsed = time.monotonic() - started
        if elapsed >= next_eval:
            record_eval(elapsed)
            next_eval = elapsed + cfg.train.eval_every_minutes * 60
        done_by_updates = (
            cfg.train.max_updates is not None and learner.counters.updates >= cfg.train.max_updates
        )
        if elapsed >= budget or done_by_updates:
            if result.curve[-1]["updates"] != learner.counters.updates:
                record_eval(elapsed)  # the curve ends with the policy the run ends with
            break
        collect_started = time.monotonic()
        trajectories = worker.collect(cfg.train.episodes_per_round)
        collect_seconds = time.monotonic() - collect_started
        store.append(trajectories)  # stored before they count as collected
        result.episodes += len(trajectories)
        learner.ingest(trajectories)
        _log_collection(writer, learner, trajectories, collect_seconds)
        metrics: dict[str, float] = {}
        if len(learner.replay) >= cfg.train.min_replay:
            update_started = time.monotonic()
            for _ in range(cfg.train.updates_per_round):
                metrics = learner.update()
                for key, value in metrics.items():
                    writer.add_scalar(f"learner/{key}", value, learner.counters.updates)
            writer.add_scalar(
                "learner/updates_per_s",
                cfg.train.updates_per_round / max(time.monotonic() - update_started, 1e-9),
                learner.counters.updates,
            )
            worker.set_weights(*learner.weights())
        if on_progress is not None:
            on_progress(elapsed / budget, metrics)
        if elapsed >= next_checkpoint:
            _save_checkpoint(run_dir, learner, worker, task_sampler, result, elapsed)
            next_checkpoint = elapsed + cfg.train.checkpoint_every_minutes * 60
    result.updates = learner.counters.updates
    _save_checkpoint(run_dir, learner, worker, task_sampler, result, time.monotonic() - started)
    writer.close()
    summary = result.summary()
    write_summary(run_dir, summary)
    (run_dir / "curve.json").write_text(json.dumps(result.curve, indent=2) + "\n")
    return result
