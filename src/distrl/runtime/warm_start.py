"""The warm start: behaviour cloning of noisy-oracle demonstrations before online RL.

DigiRL and DistRL start RL from a weak agent rather than from scratch; here that agent is cloned
from demonstrations: a ``distrl collect-demos`` run folder given as ``train.demos``, or
``train.warm_start_episodes`` episodes collected by the run itself into ``RUN_DIR/demos``. With
``train.demo_fraction`` > 0 the replay keeps them for a share of every batch, so a resumed run
reloads them (:func:`resumed_demonstrations`).
"""

from __future__ import annotations

import logging
from pathlib import Path

from distrl.algos.bc import StepAugment, behaviour_clone
from distrl.algos.copy_augmentation import CopySwap, word_pool
from distrl.algos.phrasing_augmentation import PhrasingEdit
from distrl.config.schema import RunConfig
from distrl.core.seeds import Stream, derive_seed
from distrl.core.task import Task
from distrl.core.trajectory import Trajectory
from distrl.errors import InputError
from distrl.policies.base import Policy, reads_screenshots
from distrl.runtime.play import DEMOS_COMMAND, play
from distrl.store import TrajectoryStore

#: Where a run that collects its own warm-start demonstrations stores them.
DEMOS_FOLDER = "demos"

log = logging.getLogger(__name__)

#: Cloning steps averaged for the loss the warm start reports at its start and end.
_LOSS_SPAN = 10


def demonstration_config(cfg: RunConfig) -> RunConfig:
    """The play config that collects ``cfg``'s warm-start demonstrations (noisy oracle).

    Played as ``command="demos"``, its devices are demonstration devices: simulator speed,
    without the latency and fault model of ``cfg``'s training devices (see
    :class:`~distrl.envs.devices.Purpose`)."""
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


def collect_demonstrations(
    cfg: RunConfig, tasks: list[Task], run_dir: Path, screenshots: bool
) -> list[Trajectory]:
    """``train.warm_start_episodes`` noisy-oracle demonstrations of ``tasks``, stored under
    ``run_dir/demos`` like any play run (``screenshots``: whether the policy reads them)."""
    demo_cfg = demonstration_config(cfg)
    demo_cfg.run_root, demo_cfg.run_name = str(run_dir), DEMOS_FOLDER
    demonstrations: list[Trajectory] = []
    play(
        demo_cfg,
        tasks,
        on_episode=demonstrations.append,
        command=DEMOS_COMMAND,
        screenshots=screenshots,
    )
    return demonstrations


def warm_start(
    policy: Policy,
    cfg: RunConfig,
    tasks: list[Task],
    run_dir: Path,
    demonstrations: list[Trajectory] | None = None,
) -> list[Trajectory]:
    """Clone noisy-oracle demonstrations into ``policy``; returns them (the replay keeps them
    when ``train.demo_fraction`` > 0).

    Uses ``demonstrations`` when given, else collects them now and stores them under
    ``run_dir/demos`` like any play run; cloning uses them in memory."""
    if demonstrations is None:
        # Screenshots only for a policy that reads them: 400 demos of screens were 2.1 GB.
        demonstrations = collect_demonstrations(cfg, tasks, run_dir, reads_screenshots(policy))
    augments = cloning_augments(cfg, demonstrations)
    losses = behaviour_clone(
        policy,
        demonstrations,
        steps=cfg.train.bc_steps,
        batch_size=cfg.train.bc_batch_size,
        lr=cfg.train.bc_lr,
        seed=derive_seed(cfg.seed, Stream.CLONING),
        augment=augments,
    )
    if losses:  # whether cloning took is the first thing to check when a warm start is weak
        first, last = losses[:_LOSS_SPAN], losses[-_LOSS_SPAN:]
        log.info(
            "behaviour cloning loss %.3f -> %.3f (means of the first and last %d steps)",
            sum(first) / len(first),
            sum(last) / len(last),
            len(last),
        )
    return demonstrations


def cloning_augments(cfg: RunConfig, demonstrations: list[Trajectory]) -> list[StepAugment]:
    """The rewrites of cloned steps ``cfg`` asks for, in the order they apply: the rewording
    first, so that the copy swap then renames the copied words in the reworded instruction."""
    augments: list[StepAugment] = []
    if cfg.train.bc_phrasing_augmentation > 0:
        rewording = PhrasingEdit.from_demonstrations(
            demonstrations, cfg.train.bc_phrasing_augmentation, cfg.train.phrasing_edits
        )
        augments.append(rewording)
        log.info("phrasing augmentation: %d template words to insert", len(rewording.pool))
    if cfg.train.bc_copy_augmentation > 0:
        pool = word_pool(step.observation for t in demonstrations for step in t.steps)
        augments.append(CopySwap(pool, cfg.train.bc_copy_augmentation))
        log.info("copy augmentation: %d replacement words", len(pool))
    return augments


def resumed_demonstrations(cfg: RunConfig, run_dir: Path) -> list[Trajectory]:
    """The demonstrations a resumed run warm-started from, for its replay's demonstration share:
    ``train.demos``, else those it collected into ``run_dir/demos`` (none: an empty list)."""
    if cfg.train.demo_fraction == 0:
        return []
    if cfg.train.demos:
        return load_demonstrations(Path(cfg.train.demos))
    store_dir = run_dir / DEMOS_FOLDER / "trajectories"
    return TrajectoryStore(store_dir).load() if store_dir.is_dir() else []
