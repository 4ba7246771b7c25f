"""A-RIDE's loss on real PhoneSim windows: it decreases on a fixed batch, edges behave."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest
import torch

from distrl.algos.aride import aride_loss
from distrl.algos.rewards import RewardShaping
from distrl.algos.step_window import StepWindow, cut_windows
from distrl.algos.window_batch import score_windows
from distrl.config.schema import ARideConfig
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.policies.features import ACTION_KINDS
from distrl.policies.small import SmallPolicy, SmallPolicyConfig
from distrl.runtime.worker import Worker

CONFIG = ARideConfig()


def _windows(policy: SmallPolicy, episodes: int = 12) -> list[StepWindow]:
    tasks = load_suite("general", "train")
    rng = np.random.default_rng(0)
    worker = Worker(
        [PhoneSimEnv(seed=i) for i in range(4)],
        policy,
        lambda: tasks[int(rng.integers(len(tasks)))],
        seed=0,
    )
    shaping = RewardShaping(CONFIG.step_cost, CONFIG.invalid_penalty, CONFIG.repeat_penalty)
    return [w for t in worker.collect(episodes) for w in cut_windows(t, 4, shaping)]


@pytest.mark.parametrize("objective", ["clipped_is", "ppo_clip", "truncated_is", "binarized_is"])
def test_loss_decreases_on_a_fixed_batch(objective: str) -> None:
    # On a fixed batch the critic's loss must fall, and a small gradient step on the policy
    # objective must move the policy towards the actions judged better than expected (sum of
    # A * change in log pi > 0, to first order lr * |grad|^2). The direction is checked on the
    # policy term alone: the critic shares the encoder, so after many joint steps the critic's
    # own gradient may move log pi either way, and the total need not fall monotonically
    # (advantages move with the critic).
    torch.manual_seed(0)
    config = ARideConfig(policy_objective=objective)
    policy = SmallPolicy(SmallPolicyConfig())
    windows = _windows(policy, episodes=6)
    weights = torch.ones(len(windows))
    start_logp = score_windows(policy, windows).logprobs.detach()

    probe = copy.deepcopy(policy)
    policy_only = config.model_copy(update={"value_coef": 0.0, "entropy_coef": 0.0})
    step = aride_loss(probe, windows, weights, policy_only)
    step.total.backward()
    torch.optim.SGD(probe.parameters(), lr=1e-3).step()
    moved = score_windows(probe, windows).logprobs.detach() - start_logp
    assert float((moved * step.advantages).sum()) > 0.0

    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    first = aride_loss(policy, windows, weights, config)
    for _ in range(60):
        loss = aride_loss(policy, windows, weights, config)
        optimizer.zero_grad()
        loss.total.backward()
        optimizer.step()
    assert loss.value_loss < 0.25 * first.value_loss


def test_on_policy_ratios_are_one_and_priorities_are_per_window() -> None:
    policy = SmallPolicy(SmallPolicyConfig())
    windows = _windows(policy, episodes=6)
    loss = aride_loss(policy, windows, torch.ones(len(windows)), CONFIG)
    # The windows were acted by these very weights: pi == mu, so every ratio is 1.
    assert abs(loss.mean_rho - 1.0) < 1e-4
    assert loss.priorities.shape == (len(windows),)
    assert torch.isfinite(loss.priorities).all() and (loss.priorities > 0).all()


def test_importance_weights_scale_the_loss() -> None:
    policy = SmallPolicy(SmallPolicyConfig())
    windows = _windows(policy, episodes=6)
    ones = aride_loss(policy, windows, torch.ones(len(windows)), CONFIG)
    halves = aride_loss(policy, windows, torch.full((len(windows),), 0.5), CONFIG)
    assert abs(halves.value_loss - 0.5 * ones.value_loss) < 1e-5
    assert abs(halves.policy_loss - 0.5 * ones.policy_loss) < 1e-5


def test_ppo_clip_matches_the_truncated_is_gradient_on_policy() -> None:
    # On-policy (pi == mu) the ratio is 1 and inside the clip, so d(ratio * A) = A * d log pi:
    # both objectives must give the same policy gradient.
    torch.manual_seed(0)
    policy = SmallPolicy(SmallPolicyConfig())
    windows = _windows(policy, episodes=6)
    weights = torch.ones(len(windows))
    gradients = []
    for objective in ("truncated_is", "ppo_clip"):
        config = CONFIG.model_copy(
            update={"policy_objective": objective, "value_coef": 0.0, "entropy_coef": 0.0}
        )
        policy.zero_grad()
        aride_loss(policy, windows, weights, config).total.backward()
        gradients.append(
            torch.cat([p.grad.flatten() for p in policy.parameters() if p.grad is not None])
        )
    assert torch.allclose(gradients[0], gradients[1], atol=1e-6)
    assert gradients[0].abs().sum() > 0


def _surrogate_gradient(objective: str, rho: torch.Tensor, advantage: torch.Tensor) -> torch.Tensor:
    from distrl.algos.aride import policy_surrogate

    logp = torch.full_like(rho, -1.0, requires_grad=True)
    behaviour = logp.detach() - rho.log()
    valid = torch.ones_like(rho, dtype=torch.bool)
    config = ARideConfig(policy_objective=objective, ppo_clip_eps=0.2, rho_bar=1.0)
    policy_surrogate(logp, behaviour, rho, advantage, valid, config).sum().backward()
    return logp.grad


def test_clipped_is_stops_pushing_down_below_the_floor_only() -> None:
    rho = torch.tensor([[0.5, 0.5, 0.9, 1.5, 0.5, 1.5]])
    advantage = torch.tensor([[-1.0, 1.0, -1.0, -1.0, 2.0, 2.0]])
    truncated = _surrogate_gradient("truncated_is", rho, advantage)
    clipped = _surrogate_gradient("clipped_is", rho, advantage)
    # d/dlogp of min(rho_bar, rho) * A * logp is min(1, rho) * A ...
    assert torch.allclose(truncated, torch.clamp(rho, max=1.0) * advantage)
    # ... except a negative advantage whose action is already below (1 - eps) of mu's.
    expected = truncated.clone()
    expected[0, 0] = 0.0
    assert torch.allclose(clipped, expected)


def test_binarized_is_weights_steps_by_the_sign_of_the_raw_advantage() -> None:
    # The released actor's form: the gradient on log pi is min(rho_bar, rho) * 1[A > 0] with A
    # the raw Retrace advantage (not standardised: a batch of failures has no positive half).
    torch.manual_seed(0)
    policy = SmallPolicy(SmallPolicyConfig())
    windows = _windows(policy, episodes=6)
    config = ARideConfig(policy_objective="binarized_is", value_coef=0.0, entropy_coef=0.0)
    loss = aride_loss(policy, windows, torch.ones(len(windows)), config)
    scored = score_windows(policy, windows)
    raw = aride_loss(
        policy,
        windows,
        torch.ones(len(windows)),
        config.model_copy(
            update={
                "policy_objective": "truncated_is",
                "normalize_advantages": False,
                "advantage_clip": 1000.0,
            }
        ),
    ).advantages
    assert torch.equal(loss.advantages, (raw > 0).float() * scored.mask)
    # On policy (rho = 1) the policy loss is minus the summed log-probs of the kept steps.
    kept = loss.advantages * scored.representable
    expected = -float((kept * scored.logprobs.detach()).sum() / scored.steps)
    assert abs(loss.policy_loss - expected) < 1e-5


def test_a_batch_of_one_step_gives_finite_gradients() -> None:
    # Dropping stale windows can leave a single step in a batch: normalising its advantage
    # must not divide by an undefined spread (NaN weights would then poison every worker).
    policy = SmallPolicy(SmallPolicyConfig())
    tasks = load_suite("general", "train")
    episode = Worker([PhoneSimEnv(seed=3)], policy, lambda: tasks[0], seed=0).collect(1)[0]
    one_step = dataclasses.replace(
        episode, steps=[dataclasses.replace(episode.steps[0], done=True)]
    )
    shaping = RewardShaping(CONFIG.step_cost, CONFIG.invalid_penalty, CONFIG.repeat_penalty)
    windows = cut_windows(one_step, 4, shaping)
    assert len(windows) == 1 and len(windows[0].actions) == 1
    loss = aride_loss(policy, windows, torch.ones(1), CONFIG)
    loss.total.backward()
    assert torch.isfinite(loss.total)
    assert all(torch.isfinite(p.grad).all() for p in policy.parameters() if p.grad is not None)


@pytest.mark.parametrize("objective", ["clipped_is", "ppo_clip", "truncated_is"])
def test_demonstration_steps_only_pull_their_action_up(objective: str) -> None:
    # A demonstration has no behaviour log-prob (NaN), so nothing would stop a negative
    # advantage from pushing its action towards log pi = -inf: only the positive part counts.
    from distrl.algos.aride import policy_surrogate

    logp = torch.full((1, 4), -1.0, requires_grad=True)
    behaviour = torch.tensor([[float("nan"), float("nan"), -1.0, -1.0]])
    rho = torch.ones(1, 4)
    advantage = torch.tensor([[-2.0, 1.5, -2.0, 1.5]])
    valid = torch.ones(1, 4, dtype=torch.bool)
    config = ARideConfig(policy_objective=objective, ppo_clip_eps=0.2, rho_bar=1.0)
    policy_surrogate(logp, behaviour, rho, advantage, valid, config).sum().backward()
    # Demonstrated: -2 -> 0, +1.5 kept; acted (pi == mu): the full advantage either way.
    assert torch.allclose(logp.grad, torch.tensor([[0.0, 1.5, -2.0, 1.5]]))


def test_diagnostics_read_zero_on_policy_and_move_once_the_learner_moves() -> None:
    torch.manual_seed(1)
    policy = SmallPolicy(SmallPolicyConfig())
    windows = _windows(policy, episodes=6)
    weights = torch.ones(len(windows))
    on_policy = aride_loss(policy, windows, weights, CONFIG)
    # pi == mu: no divergence, and no clip, floor or truncation can bite at rho == 1.
    assert abs(on_policy.approx_kl) < 1e-6 and on_policy.clip_fraction == 0.0
    assert on_policy.explained_variance <= 1.0
    optimizer = torch.optim.Adam(policy.parameters(), lr=3e-3)
    for _ in range(30):
        loss = aride_loss(policy, windows, weights, CONFIG)
        optimizer.zero_grad()
        loss.total.backward()
        optimizer.step()
    moved = aride_loss(policy, windows, weights, CONFIG)
    assert moved.approx_kl > 1e-4 and 0.0 < moved.clip_fraction <= 1.0
    # The critic fitted these targets: it explains more of them than at the start.
    assert moved.explained_variance > on_policy.explained_variance


def test_each_head_entropy_is_logged_over_the_steps_where_that_head_had_a_choice() -> None:
    torch.manual_seed(2)
    policy = SmallPolicy(SmallPolicyConfig())
    windows = _windows(policy, episodes=6)
    scored = score_windows(policy, windows)
    assert set(scored.head_entropies) == {"kind", "tap_element", "type_text"}
    for entropy in scored.head_entropies.values():
        assert bool(torch.isnan(entropy[~scored.valid]).all())  # padding is no step
    kind = scored.head_entropies["kind"]
    assert not bool(torch.isnan(kind[scored.valid]).any())  # every step chooses a kind
    metrics = aride_loss(policy, windows, torch.ones(len(windows)), CONFIG).head_entropies
    for head, entropy in scored.head_entropies.items():
        present = entropy[~torch.isnan(entropy)]
        assert metrics[f"entropy_{head}"] == pytest.approx(float(present.mean()), rel=1e-6)
    # The kind head chooses among 5+ kinds at initialisation: its entropy is well above 0.
    assert 0.5 < metrics["entropy_kind"] <= np.log(len(ACTION_KINDS)) + 1e-6


def test_a_ratio_a_rounding_error_above_rho_bar_is_no_truncation() -> None:
    """Acting and scoring sum the same log-probs in another order, so on-policy rho can read
    1 + 1e-7; the diagnostic must not count that as the truncation biting (it flaked in CI)."""
    from distrl.algos.aride import clip_fraction

    config = ARideConfig(policy_objective="clipped_is", rho_bar=1.0, ppo_clip_eps=0.2)
    advantage = torch.ones(1, 3)
    on_data = torch.ones(1, 3)
    assert (
        clip_fraction(torch.tensor([[1.0 + 1e-7, 1.0, 1.0 - 1e-7]]), advantage, on_data, config)
        == 0.0
    )
    assert clip_fraction(
        torch.tensor([[1.01, 1.0, 1.0]]), advantage, on_data, config
    ) == pytest.approx(1 / 3)


def _as_demonstrations(windows: list[StepWindow]) -> list[StepWindow]:
    """The same windows as scripted demonstrations: no behaviour log-prob (NaN)."""
    return [
        dataclasses.replace(w, behaviour_logprobs=tuple(float("nan") for _ in w.actions))
        for w in windows
    ]


def test_critic_warmup_loss_is_the_critic_regression_alone() -> None:
    torch.manual_seed(0)
    policy = SmallPolicy(SmallPolicyConfig())
    windows = _windows(policy, episodes=6)
    weights = torch.ones(len(windows))
    config = ARideConfig(demo_bc_coef=1.0)
    warmup = aride_loss(policy, windows, weights, config, fit_policy=False)
    full = aride_loss(policy, windows, weights, config)
    assert abs(float(warmup.total.detach()) - config.value_coef * warmup.value_loss) < 1e-5
    assert abs(float(full.total.detach()) - float(warmup.total.detach())) > 1e-4
    # The diagnostics are those of the full loss: only the total differs.
    assert warmup.policy_loss == pytest.approx(full.policy_loss)
    assert warmup.explained_variance == pytest.approx(full.explained_variance)
    # No gradient reaches the action heads, which only the policy term trains.
    policy.zero_grad(set_to_none=True)
    warmup.total.backward()
    heads = [p for n, p in policy.named_parameters() if n.startswith(("kind_head", "element_head"))]
    assert heads and all(p.grad is None or not p.grad.any() for p in heads)


def test_demo_bc_term_is_the_mean_nll_of_the_demonstrated_actions() -> None:
    torch.manual_seed(0)
    policy = SmallPolicy(SmallPolicyConfig())
    acted = _windows(policy, episodes=6)
    demos = _as_demonstrations(acted[:4])
    windows = demos + acted[4:]
    weights = torch.ones(len(windows))
    # Reference: -mean log pi over the demonstration windows' representable steps alone.
    scored = score_windows(policy, demos)
    shown = scored.valid & scored.representable.bool()
    reference = float(-scored.logprobs.detach()[shown].mean())
    off = aride_loss(policy, windows, weights, ARideConfig())
    assert off.demo_nll == pytest.approx(reference, abs=1e-5)
    on = aride_loss(policy, windows, weights, ARideConfig(demo_bc_coef=2.0))
    assert float((on.total - off.total).detach()) == pytest.approx(2.0 * reference, abs=1e-4)
    # Without demonstrations in the batch the term is 0 (not a NaN mean).
    assert aride_loss(policy, acted, torch.ones(len(acted)), CONFIG).demo_nll == 0.0

    # The term's gradient raises the demonstrated actions' log-probs.
    bc_only = ARideConfig(demo_bc_coef=1.0, value_coef=0.0, entropy_coef=0.0)
    probe = copy.deepcopy(policy)
    loss = aride_loss(probe, demos, torch.ones(len(demos)), bc_only)
    term = aride_loss(
        probe, demos, torch.ones(len(demos)), bc_only.model_copy(update={"demo_bc_coef": 0.0})
    )
    (loss.total - term.total).backward()
    torch.optim.SGD(probe.parameters(), lr=1e-2).step()
    after = score_windows(probe, demos).logprobs.detach()[shown]
    assert float(after.mean()) > float(scored.logprobs.detach()[shown].mean())
