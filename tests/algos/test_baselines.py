"""DigiRL and filtered BC: reference computations, loss decrease, and what each trains on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from distrl.algos.digirl import curriculum_mask, digirl_loss, mixed_advantages
from distrl.algos.filtered_bc import filtered_bc_loss
from distrl.algos.registry import build_algorithm
from distrl.algos.rewards import RewardShaping
from distrl.algos.step_window import StepWindow, cut_windows
from distrl.config.schema import DigiRLConfig, RunConfig
from distrl.core.trajectory import Trajectory
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.policies.small import SmallPolicy, SmallPolicyConfig
from distrl.replay.samplers import PrioritizedSampler, UniformSampler
from distrl.runtime.play import play
from distrl.runtime.replay_service import ReplayService


def _noisy_oracle_episodes(tmp_path: Path, episodes: int = 16) -> list[Trajectory]:
    """Noisy-oracle episodes: a mix of successes and failures, as a weak agent produces."""
    cfg = RunConfig()
    cfg.run_root, cfg.play.policy, cfg.play.noise, cfg.play.episodes = (
        str(tmp_path),
        "noisy",
        0.5,
        episodes,
    )
    out: list[Trajectory] = []
    play(cfg, load_suite("general", "train"), on_episode=out.append)
    assert any(t.success for t in out) and not all(t.success for t in out)
    return out


def _windows(trajectories: list[Trajectory], length: int = 4) -> list[StepWindow]:
    return [w for t in trajectories for w in cut_windows(t, length, RewardShaping())]


def test_mixed_advantages_match_a_per_step_loop() -> None:
    rng = np.random.default_rng(3)
    batch, length, gamma, lam = 6, 5, 0.9, 0.7
    values = rng.normal(size=(batch, length))
    next_values = rng.normal(size=(batch, length))
    success = rng.integers(0, 2, size=(batch, 1)).astype(float)
    dones = (rng.random((batch, length)) < 0.3).astype(float)
    steps_after = rng.integers(0, 8, size=(batch, length)).astype(float)
    mask = np.ones((batch, length))
    mask[0, 3:] = 0
    expected = np.zeros((batch, length))
    for b in range(batch):
        for t in range(length):
            if not mask[b, t]:
                continue
            reward = success[b, 0] if dones[b, t] else 0.0
            td = reward + gamma * next_values[b, t] * (1 - dones[b, t]) - values[b, t]
            k = steps_after[b, t]
            expected[b, t] = lam**k * success[b, 0] + (1 - lam**k) * td
    got = mixed_advantages(
        *(
            torch.tensor(x, dtype=torch.float32)
            for x in (values, next_values, success, dones, steps_after, mask)
        ),
        gamma=gamma,
        lam=lam,
    )
    np.testing.assert_allclose(got.numpy(), expected, atol=1e-5)


def test_curriculum_keeps_the_top_fraction() -> None:
    surprise = torch.linspace(-1, 1, 100)[torch.randperm(100)]
    kept = curriculum_mask(surprise, 0.25)
    assert int(kept.sum()) == 25
    assert float(surprise[kept.bool()].min()) > float(surprise[~kept.bool()].max())
    assert int(curriculum_mask(surprise, 1.0).sum()) == 100


def test_digirl_loss_decreases_and_fits_its_critics(tmp_path: Path) -> None:
    torch.manual_seed(0)
    windows = _windows(_noisy_oracle_episodes(tmp_path))
    policy = SmallPolicy(SmallPolicyConfig())
    config = DigiRLConfig()
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    first = None
    for _ in range(40):
        loss, metrics = digirl_loss(policy, windows, config)
        first = first or (float(loss.detach()), metrics)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert float(loss.detach()) < first[0] - 0.1, (first, metrics)
    assert metrics["value_loss"] < first[1]["value_loss"]
    assert metrics["instruction_value_loss"] < first[1]["instruction_value_loss"]
    assert 0.0 < metrics["kept_fraction"] < 1.0


def test_digirl_actor_ignores_steps_of_failed_episodes_at_their_end(tmp_path: Path) -> None:
    # At a failed episode's last step the outcome term dominates fully (lam^0 = 1): A = R = 0,
    # which is not above the threshold, so that step must not train the actor.
    windows = [w for w in _windows(_noisy_oracle_episodes(tmp_path), 1) if w.dones[-1]]
    failed = [w for w in windows if not w.trajectory_success]
    policy = SmallPolicy(SmallPolicyConfig())
    loss, metrics = digirl_loss(policy, failed, DigiRLConfig(top_fraction=1.0))
    assert metrics["kept_fraction"] == 0.0 and metrics["policy_loss"] == 0.0


def test_filtered_bc_trains_on_successes_only(tmp_path: Path) -> None:
    torch.manual_seed(0)
    episodes = _noisy_oracle_episodes(tmp_path)
    windows = _windows(episodes)
    policy = SmallPolicy(SmallPolicyConfig())
    failed = [w for w in windows if not w.trajectory_success]
    loss, metrics = filtered_bc_loss(policy, failed)
    assert float(loss.detach()) == 0.0 and metrics["kept_fraction"] == 0.0
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    losses = []
    for _ in range(30):
        loss, _ = filtered_bc_loss(policy, windows)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < 0.5 * losses[0], losses

    cfg = RunConfig()
    cfg.train.algo = "fbc"
    replay = ReplayService(
        build_algorithm(cfg), window=4, capacity=1000, max_staleness=50, keep_screenshots=False
    )
    replay.ingest(episodes)
    assert replay.counters.not_admitted == sum(not t.success for t in episodes)
    assert len(replay) == len(_windows([t for t in episodes if t.success]))


def test_each_algorithm_picks_its_sampler() -> None:
    for name, kind in (("aride", PrioritizedSampler), ("digirl", UniformSampler)):
        cfg = RunConfig()
        cfg.train.algo = name
        assert isinstance(build_algorithm(cfg).make_sampler(8), kind)
    cfg = RunConfig()
    cfg.train.algo = "fbc"
    assert isinstance(build_algorithm(cfg).make_sampler(8), UniformSampler)


def test_dper_constants_come_from_the_config() -> None:
    cfg = RunConfig()
    cfg.aride.priority_alpha, cfg.aride.priority_beta_start = 0.3, 0.7
    cfg.aride.priority_beta_end, cfg.aride.priority_beta_steps = 0.9, 10
    sampler = build_algorithm(cfg).make_sampler(8)
    assert isinstance(sampler, PrioritizedSampler)
    assert (sampler.alpha, sampler.beta, sampler.beta_end, sampler.beta_steps) == (
        0.3,
        0.7,
        0.9,
        10,
    )
    cfg.aride.prioritized = False  # the uniform-replay ablation of A-RIDE
    assert isinstance(build_algorithm(cfg).make_sampler(8), UniformSampler)
