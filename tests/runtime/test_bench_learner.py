"""``distrl bench learner``: figures measured on real data, checked against direct computations."""

from __future__ import annotations

import pytest
import torch

from distrl.algos.step_window import cut_windows
from distrl.bench.learner_bench import _play, _time_cloning, bench_learner
from distrl.cli.main import main
from distrl.config.schema import RunConfig
from distrl.runtime.components import build_algorithm, build_policy


def test_bench_learner_figures_agree_with_direct_counts() -> None:
    cfg = RunConfig()
    cfg.ray.num_cpus = 2
    # A bound tighter than the updates timed: the bench's data never refreshes, so drawing it at
    # the learner's version would leave nothing drawable after the first updates.
    cfg.train.max_staleness = 1
    cfg.train.demo_noise = 0.0  # every demonstration succeeds: there is something to clone
    bench = bench_learner(cfg, episodes=4, seconds=0.2, updates=3)
    summary = bench.summary()
    # Windows per episode: what cutting the same episodes gives directly.
    torch.manual_seed(cfg.seed)  # the same policy, so the same episodes, as the bench played
    trajectories = _play(cfg, build_policy(cfg), 4)
    shaping = build_algorithm(cfg).shaping
    expected = sum(len(cut_windows(t, cfg.aride.window, shaping)) for t in trajectories) / 4
    assert summary["windows_per_episode"] == pytest.approx(expected, abs=0.01)
    # Published bytes: the policy's whole state (the small policy trains every parameter).
    state = build_policy(cfg).state_dict()
    assert summary["publish_bytes"] == sum(t.numel() * t.element_size() for t in state.values())
    assert len(bench.update_ms) == 3 and len(bench.publish_ms) == 10
    assert summary["replay_insert_windows_per_s"] > 0
    assert summary["replay_sample_update_batches_per_s"] > 0
    assert summary["parameters"] == summary["trainable_parameters"] > 0
    # Nothing to clone, no figure: only failed episodes.
    failed = [t for t in trajectories if not t.success]
    assert _time_cloning(cfg, build_policy(cfg), failed, steps=1) is None
    # The warm start's estimate is the timed cloning step times train.bc_steps.
    assert summary["cloning_ms_per_step"] > 0
    assert summary["cloning_s_for_bc_steps"] == pytest.approx(
        summary["cloning_ms_per_step"] * cfg.train.bc_steps / 1000, rel=0.01, abs=0.1
    )


def test_bench_learner_rejects_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "learner", "--updates", "0", "--json"]) == 2
    assert "--updates must be > 0" in capsys.readouterr().err
