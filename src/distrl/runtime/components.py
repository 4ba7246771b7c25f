"""Building the runtime's parts from a config, identically for the serial and the Ray runtime."""

from __future__ import annotations

from pathlib import Path

from distrl.algos.registry import build_algorithm
from distrl.config.schema import RunConfig
from distrl.policies.base import Policy
from distrl.policies.small import SmallPolicy, SmallPolicyConfig
from distrl.runtime.learner import Learner
from distrl.runtime.replay_service import ReplayService


def build_policy(cfg: RunConfig) -> Policy:
    """The policy a run trains: ``policy.kind`` small (the CPU default) or vlm."""
    if cfg.policy.kind == "vlm":
        # Imported on demand: transformers and peft load only for runs that use them.
        from distrl.policies.vlm import VLMPolicy

        return VLMPolicy(cfg.policy.vlm)
    return SmallPolicy(SmallPolicyConfig())


def reads_screenshots(policy: Policy) -> bool:
    return bool(getattr(policy, "uses_screenshots", True))


def capture_config(cfg: RunConfig, policy: Policy) -> RunConfig:
    """``cfg`` with devices told to skip screenshots nobody reads: when ``policy`` reads only the
    element list, training drops screenshots before the replay and the store anyway; a
    browser's screenshot is most of a MiniWoB++ step (about 3x the step time), and PhoneSim's
    are 0.78 MB each, which a run's in-flight episodes and demonstrations held by the gigabyte."""
    if reads_screenshots(policy):
        return cfg
    lean = cfg.model_copy(deep=True)
    lean.env.miniwob.screenshots = False
    lean.env.phonesim.screenshots = False
    return lean


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
    )


def build_replay(
    cfg: RunConfig, keep_screenshots: bool, store_dir: Path | None, flush_seconds: float = 0.0
) -> ReplayService:
    """The replay for ``cfg``: its algorithm's sampler and admission rule, storing to
    ``store_dir``; observations keep screenshots only if the policy reads them (a 360x720 screen
    is 0.78 MB: a replay full of them does not fit in memory). The learner's rate limit
    (``max_samples_per_insert``) applies to async runs only: serial and sync rounds set their
    own ratio of updates to data, and a sync baseline must get the updates its rounds ask for."""
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
        seed=cfg.seed,
    )
