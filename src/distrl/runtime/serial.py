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
from distrl.config.schema import RunConfig
from distrl.core.task import Task
from distrl.core.trajectory import Trajectory
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.policies.base import Policy
from distrl.policies.small import SmallPolicy, SmallPolicyConfig
from distrl.runtime.learner import Learner
from distrl.runtime.play import play
from distrl.runtime.run_dir import create_run_dir, write_summary
from distrl.runtime.worker import Worker
from distrl.store import TrajectoryStore

CHECKPOINT = "checkpoints/latest.pt"


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


def _devices(cfg: RunConfig, count: int, offset: int) -> list[PhoneSimEnv]:
    return [
        PhoneSimEnv(
            cfg.env.phonesim,
            seed=cfg.seed * 10_007 + offset + i,
            device_id=f"phonesim-{offset + i}",
        )
        for i in range(count)
    ]


def _task_cycle(tasks: list[Task], seed: int) -> Callable[[], Task]:
    rng = np.random.default_rng(seed)

    def next_task() -> Task:
        return tasks[int(rng.integers(len(tasks)))]

    return next_task


def evaluate(
    policy: Policy, cfg: RunConfig, tasks: list[Task], episodes: int, greedy: bool
) -> float:
    """Success rate of ``policy`` on ``episodes`` episodes drawn from ``tasks``."""
    worker = Worker(
        _devices(cfg, min(cfg.train.devices, episodes), offset=50_000),
        copy.deepcopy(policy),
        _task_cycle(tasks, cfg.seed + 17),
        worker_id="eval",
        seed=cfg.seed + 17,
        greedy=greedy,
    )
    trajectories = worker.collect(episodes)[:episodes]
    return float(np.mean([t.success for t in trajectories]))


def warm_start(policy: Policy, cfg: RunConfig, tasks: list[Task], run_dir: Path) -> list[float]:
    """Clone noisy-oracle demonstrations into ``policy`` (DigiRL/DistRL start from a weak agent).

    The demonstrations are stored under ``run_dir/demos`` like any play run; cloning uses them
    in memory, screenshots included."""
    demo_cfg = cfg.model_copy(deep=True)
    demo_cfg.play.policy = "noisy"
    demo_cfg.play.noise = cfg.train.demo_noise
    demo_cfg.play.episodes = cfg.train.warm_start_episodes
    demo_cfg.run_root, demo_cfg.run_name = str(run_dir), "demos"
    demonstrations: list[Trajectory] = []
    play(demo_cfg, tasks, on_episode=demonstrations.append)
    return behaviour_clone(
        policy,
        demonstrations,
        steps=cfg.train.bc_steps,
        batch_size=cfg.train.bc_batch_size,
        lr=cfg.train.bc_lr,
        seed=cfg.seed,
    )


def _save_checkpoint(run_dir: Path, learner: Learner, result: TrainResult, elapsed: float) -> None:
    path = run_dir / CHECKPOINT
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    torch.save(
        {
            "learner": learner.state_dict(),
            "elapsed": elapsed,
            "curve": result.curve,
            "episodes": result.episodes,
        },
        temporary,
    )
    os.replace(temporary, path)


def train(
    cfg: RunConfig,
    resume: Path | None = None,
    on_progress: Callable[[float, dict[str, float]], None] | None = None,
) -> TrainResult:
    """Train for ``cfg.train.minutes`` of wall-clock time (or ``max_updates``)."""
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
    if resume is None and cfg.train.warm_start_episodes > 0:
        warm_start(policy, cfg, train_tasks, run_dir)
    store = TrajectoryStore(run_dir / "trajectories", save_screens=False)
    result = TrainResult(run_dir)
    elapsed_before = 0.0
    if resume is not None:
        state = torch.load(run_dir / CHECKPOINT, weights_only=True)
        learner.load_state_dict(state["learner"])
        result.curve, result.episodes = state["curve"], state["episodes"]
        elapsed_before = state["elapsed"]
        learner.ingest(store.load()[-cfg.train.replay_capacity :])
    worker = Worker(
        _devices(cfg, cfg.train.devices, offset=0),
        copy.deepcopy(policy),
        _task_cycle(train_tasks, cfg.seed),
        seed=cfg.seed,
    )
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
        greedy = evaluate(learner.policy, cfg, test_tasks, cfg.train.eval_episodes, True)
        sampled = evaluate(learner.policy, cfg, test_tasks, cfg.train.eval_episodes, False)
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
            break
        trajectories = worker.collect(cfg.train.episodes_per_round)
        store.append(trajectories)  # stored before they count as collected
        result.episodes += len(trajectories)
        learner.ingest(trajectories)
        writer.add_scalar(
            "collect/success", np.mean([t.success for t in trajectories]), learner.counters.updates
        )
        metrics: dict[str, float] = {}
        if len(learner.replay) >= cfg.train.min_replay:
            for _ in range(cfg.train.updates_per_round):
                metrics = learner.update()
                for key, value in metrics.items():
                    writer.add_scalar(f"learner/{key}", value, learner.counters.updates)
            worker.set_weights(*learner.weights())
        if on_progress is not None:
            on_progress(elapsed / budget, metrics)
        if elapsed >= next_checkpoint:
            _save_checkpoint(run_dir, learner, result, elapsed)
            next_checkpoint = elapsed + cfg.train.checkpoint_every_minutes * 60
    result.updates = learner.counters.updates
    _save_checkpoint(run_dir, learner, result, time.monotonic() - started)
    writer.close()
    summary = result.summary()
    write_summary(run_dir, summary)
    (run_dir / "curve.json").write_text(json.dumps(result.curve, indent=2) + "\n")
    return result
