"""``runtime=serial``: the training loop with its parts in one process, for debugging and small
runs.

Each round the worker collects episodes with its (possibly stale) copy of the weights, the
trajectories are appended to the run's Parquet store before they count, the learner ingests them
and runs a few updates, and the worker picks up the new weights. Everything else (warm start,
evaluation, logging, checkpoints, resume) is :mod:`distrl.runtime.training`'s, shared with the
Ray runtime. A checkpoint also holds the worker's random state (its action sampling and task
stream), so a resumed serial run continues the same streams.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import torch

from distrl.config.schema import RunConfig
from distrl.core.seeds import Stream, derive_rng, derive_seed
from distrl.core.trajectory import Trajectory
from distrl.envs.devices import Purpose, make_device
from distrl.errors import InputError
from distrl.policies.base import reads_screenshots
from distrl.runtime.collection_stats import RecentCollection, replay_stats, take_in
from distrl.runtime.components import build_learner, build_replay
from distrl.runtime.curriculum import Outcome
from distrl.runtime.drops import DropLog
from distrl.runtime.learner import run_updates, update_from_replay
from distrl.runtime.run_log import TrainResult, restoring_from
from distrl.runtime.task_sampler import TaskSampler
from distrl.runtime.training import Progress, RunSetup, train_with
from distrl.runtime.worker import Worker

__all__ = ["LocalParts", "train", "update_from_replay"]


class LocalParts:
    """One lockstep worker, the replay and the learner, in this process."""

    def __init__(self, setup: RunSetup):
        self.cfg = cfg = setup.cfg
        self.learner = build_learner(cfg, setup.policy)
        screenshots = reads_screenshots(setup.policy)
        self.replay = build_replay(cfg, screenshots, setup.run_dir / "trajectories")
        if setup.demonstrations:
            self.replay.add_demonstrations(setup.demonstrations)
        self.recent = RecentCollection()
        session = setup.session
        self.task_sampler = TaskSampler.for_training(
            cfg, derive_rng(cfg.seed, Stream.WORKER_TASKS, 0, session)
        )
        devices = [
            make_device(cfg, Purpose.TRAIN, i, screenshots=screenshots)
            for i in range(cfg.train.devices)
        ]
        self.worker = Worker(
            devices,
            copy.deepcopy(setup.policy),
            self.task_sampler,
            seed=derive_seed(cfg.seed, Stream.WORKER_ACTIONS, 0, session),
        )
        if setup.state is not None:
            with restoring_from(setup.run_dir):
                self._restore(setup.state)
        self.worker.set_weights(*self.learner.weights())

    def _restore(self, state: dict[str, Any]) -> None:
        self.learner.load_state_dict(state["learner"])
        assert self.replay.store is not None
        self.replay.restore(state["replay"], self.replay.store.load(), self.learner.version)
        workers = state["workers"]
        self.worker.generator.set_state(workers["generator"])
        self.task_sampler.rng.bit_generator.state = workers["task_sampler"]

    # -- Parts ---------------------------------------------------------------------------------
    def start(self) -> None:
        pass

    def round(self) -> dict[str, Any]:
        cfg = self.cfg.train
        take_in(self.replay, self.recent, self.worker.collect(cfg.episodes_per_round))
        self.replay.flush()  # stored before they count as collected
        budget = cfg.updates_per_round
        if cfg.max_updates is not None:
            budget = min(budget, cfg.max_updates - self.learner.updates)
        if len(self.replay) < cfg.min_replay or budget <= 0:
            return {"metrics": {}}
        trained = run_updates(
            lambda: update_from_replay(self.learner, self.replay, cfg.batch_size), budget
        )
        self.worker.set_weights(*self.learner.weights())
        return trained

    def stop(self) -> None:
        self.replay.flush()

    def updates(self) -> int:
        return self.learner.updates

    def learner_weights(self) -> tuple[dict[str, torch.Tensor], int, int]:
        return (*self.learner.deployed_weights(), self.learner.updates)

    def stats(self) -> dict[str, float]:
        return replay_stats(self.replay, self.recent)

    def state_dict(self) -> dict[str, Any]:
        self.replay.flush()
        return {
            "learner": self.learner.state_dict(),
            "replay": self.replay.state_dict(),
            "workers": {
                "generator": self.worker.generator.get_state(),
                "task_sampler": self.task_sampler.rng.bit_generator.state,
            },
        }

    def figures(self) -> dict[str, Any]:
        return {
            "runtime": "serial",
            "dropped_partial": self.worker.stats.dropped,
            **self.learner.weights_figures(),
        }

    def drop_log(self) -> DropLog:
        return self.worker.stats.drops

    def task_outcomes(self) -> list[Outcome]:
        return self.recent.take_outcomes()

    def set_lr_scale(self, scale: float) -> None:
        self.learner.set_lr_scale(scale)

    def set_task_weights(self, weights: dict[str, float]) -> None:
        self.task_sampler.set_family_weights(weights)

    def close(self) -> None:
        self.worker.close()


def train(
    cfg: RunConfig,
    resume: Path | None = None,
    demonstrations: list[Trajectory] | None = None,
    on_progress: Progress | None = None,
) -> TrainResult:
    """Train for ``cfg.train.minutes`` of wall-clock time (or ``max_updates``) in this process.

    The warm start clones ``demonstrations`` if given, else those of ``cfg.train.demos``, else
    freshly collected ones (``cfg.train.warm_start_episodes``; 0 means no warm start)."""
    if cfg.train.learner_processes > 1:
        raise InputError(
            f"train.learner_processes={cfg.train.learner_processes} > 1 needs the ray runtime "
            "(train.runtime=ray); the serial runtime trains in one process"
        )
    if cfg.inference.mode == "service":
        raise InputError(
            "inference.mode=service needs the ray runtime (train.runtime=ray); the serial "
            "runtime acts with its one policy copy in this process (inference.mode=local)"
        )
    return train_with(LocalParts, cfg, resume, demonstrations, on_progress)
