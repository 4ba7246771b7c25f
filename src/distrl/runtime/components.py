"""Building the runtime's parts from a config, identically for the serial and the Ray runtime."""

from __future__ import annotations

from pathlib import Path

import torch

from distrl.algos.novelty import ScreenNovelty
from distrl.algos.registry import beta_budget, build_algorithm
from distrl.config.schema import RunConfig
from distrl.core.seeds import Stream, derive_seed
from distrl.envs.phonesim.tasks.suites import suite_instructions
from distrl.extras import require
from distrl.policies.base import Policy
from distrl.policies.builtin import make_policy
from distrl.runtime.learner import Learner
from distrl.runtime.replay_service import ReplayService


def build_policy(cfg: RunConfig) -> Policy:
    """The policy a run trains: ``policy.kind`` small (the CPU default), vlm or a plug-in.
    Torch's global RNG is seeded from the seed tree first, so every process that builds the
    policy of a run (the driver, a learner replica, a worker) gets the same initial weights."""
    torch.manual_seed(derive_seed(cfg.seed, Stream.POLICY_INIT))
    return make_policy(cfg)  # a built-in or plug-in kind (distrl.policies.builtin)


def vlm_policy(cfg: RunConfig) -> Policy:
    """``policy.kind=vlm``: a transformers vision-language model with LoRA (the ``vlm`` extra;
    imported on demand, so transformers and peft load only for runs that use them)."""
    for module in ("transformers", "peft"):
        require(module, "vlm", "policy.kind=vlm")
    from distrl.policies.vlm import VLMPolicy

    return VLMPolicy(cfg.policy.vlm, suite_instructions())


def build_learner(cfg: RunConfig, policy: Policy) -> Learner:
    """The learner of one process; with ``train.learner_processes > 1`` each process of the
    learner group (:mod:`distrl.runtime.distributed.learner_group`) builds its own."""
    vlm = cfg.policy.vlm
    accumulation = vlm.grad_accumulation if cfg.policy.kind == "vlm" else 1
    return Learner(
        policy,
        build_algorithm(cfg),
        lr=cfg.train.lr,
        grad_clip=cfg.train.grad_clip,
        accumulation=accumulation,
        average_decay=cfg.train.averaged_policy_decay,
    )


def build_replay(
    cfg: RunConfig, keep_screenshots: bool, store_dir: Path | None, flush_seconds: float = 0.0
) -> ReplayService:
    """The replay for ``cfg``: its algorithm's sampler and admission rule, storing to
    ``store_dir``; observations keep screenshots only if the policy reads them (a 360x720 screen
    is 0.78 MB: a replay full of them does not fit in memory). The learner's rate limit
    (``max_samples_per_insert``) applies to async runs only: serial and sync rounds set their
    own ratio of updates to data, and a sync baseline must get the updates its rounds ask for.
    A prioritized sampler without an update budget anneals beta over the run's minutes, which
    the replay reports to it (:func:`~distrl.algos.registry.beta_budget`)."""
    asynchronous = cfg.train.runtime == "ray" and cfg.train.mode == "async"
    return ReplayService(
        build_algorithm(cfg),
        window=cfg.aride.window,
        capacity=cfg.train.replay_capacity,
        max_staleness=cfg.train.max_staleness,
        keep_screenshots=keep_screenshots,
        store_dir=store_dir,
        flush_seconds=flush_seconds,
        max_inserts_per_sample=cfg.train.max_inserts_per_sample,
        max_samples_per_insert=cfg.train.max_samples_per_insert if asynchronous else None,
        min_replay=cfg.train.min_replay,
        demo_fraction=cfg.train.demo_fraction,
        demo_rewording=cfg.train.demo_phrasing_augmentation,
        demo_rewording_edits=cfg.train.phrasing_edits,
        success_share=cfg.success_replay.share,
        success_capacity=cfg.success_replay.capacity,
        seed=derive_seed(cfg.seed, Stream.REPLAY),
        beta_budget_seconds=beta_budget(cfg)[1],
        novelty=screen_novelty(cfg),
    )


def screen_novelty(cfg: RunConfig) -> ScreenNovelty | None:
    """The replay's screen-novelty reward, if ``explore.novelty_bonus`` turns it on."""
    explore = cfg.explore
    if explore.novelty_bonus <= 0:
        return None
    return ScreenNovelty(explore.novelty_bonus, explore.novelty_decay_episodes)
