"""The exploration mechanisms (docs/design.md §7.12), each against a hand computation: the
screen-novelty reward (what counts as a change, 1/sqrt(n) counts per task family, the linear
decay, its way into the replay's windows) and the TYPE head's rank prior."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from distrl.algos.novelty import ScreenNovelty, screen_change
from distrl.algos.registry import build_algorithm
from distrl.algos.rewards import RewardShaping, shaped_rewards
from distrl.algos.step_window import cut_windows
from distrl.config.loader import load_config
from distrl.core.action import Action
from distrl.core.observation import NO_SCREENSHOT, Observation, UIElement
from distrl.core.task import Task
from distrl.core.trajectory import Step, Trajectory
from distrl.policies.builtin import make_policy
from distrl.policies.small import SmallPolicy, SmallPolicyConfig, rank_prior
from distrl.runtime.components import build_replay, screen_novelty

_BOX = (0.1, 0.1, 0.9, 0.2)
_BUTTON = UIElement("Submit", (0.1, 0.5, 0.5, 0.6), True, "submit", "button")


def _screen(text: str = "", focused: bool = False, instruction: str = 'Type "Ana"') -> Observation:
    field = UIElement(text, _BOX, True, "name", "field", focused=focused)
    return Observation(NO_SCREENSHOT, instruction, (field, _BUTTON))


def _typing_episode(task: str = "enter-text", index: int = 0) -> Trajectory:
    """Focus the field, type into it, tap Submit (which changes nothing listed) and succeed."""
    screens = [_screen(), _screen(focused=True), _screen("Ana", focused=True)]
    actions = [Action.tap(0.15, 0.5), Action.type_text("Ana"), Action.tap(0.55, 0.3)]
    rewards, dones = [0.0, 0.0, 1.0], [False, False, True]
    steps = [
        Step(screen, action, reward, done)
        for screen, action, reward, done in zip(screens, actions, rewards, dones, strict=True)
    ]
    task_spec = Task(f"miniwob-{task}-train", task, "miniwob", "train", spec={"task": task})
    return Trajectory(
        task_spec, steps, True, trajectory_id=f"{task}-{index}", final_observation=screens[-1]
    )


def test_screen_change_names_each_kind_of_change_and_ignores_the_instruction() -> None:
    assert screen_change(_screen(), _screen(instruction="another")) == frozenset()
    assert screen_change(_screen(), _screen("A", focused=True)) == {
        ("field", "text"),
        ("field", "focus"),
    }
    ticked = Observation(
        NO_SCREENSHOT, "x", (UIElement("", _BOX, True, "name", "field", checked=True), _BUTTON)
    )
    assert screen_change(_screen(), ticked) == {("field", "checked")}
    only_button = Observation(NO_SCREENSHOT, "x", (_BUTTON,))
    assert screen_change(_screen(), only_button) == {("field", "gone")}
    assert screen_change(only_button, _screen()) == {("field", "appeared")}


def test_novelty_pays_bonus_over_root_count_with_a_linear_decay() -> None:
    novelty = ScreenNovelty(bonus=0.4, decay_trajectories=4)
    # Episode 1, scale 1: focus (n=1) 0.4, text (n=1) 0.4, the Submit tap changes nothing.
    assert novelty.rewards(_typing_episode()) == pytest.approx([0.4, 0.4, 0.0])
    # Episode 2, scale 1 - 1/4 = 0.75, each change seen twice: 0.75 * 0.4 / sqrt(2).
    second = 0.75 * 0.4 / math.sqrt(2)
    assert second == pytest.approx(0.212132, abs=1e-6)
    assert novelty.rewards(_typing_episode(index=1)) == pytest.approx([second, second, 0.0])
    # Another task family counts from 1 again, at scale 1 - 2/4 = 0.5.
    assert novelty.rewards(_typing_episode("login-user")) == pytest.approx([0.2, 0.2, 0.0])
    # Episode 4 at scale 0.25 (third sighting: 0.25 * 0.4 / sqrt(3)), then the bonus is gone.
    third = 0.25 * 0.4 / math.sqrt(3)
    assert novelty.rewards(_typing_episode(index=3)) == pytest.approx([third, third, 0.0])
    assert novelty.scale == 0.0
    assert novelty.rewards(_typing_episode(index=4)) == [0.0, 0.0, 0.0]


def test_the_last_step_earns_no_novelty_even_when_it_clears_the_screen() -> None:
    episode = _typing_episode()
    episode.final_observation = Observation(NO_SCREENSHOT, "x", ())  # a finished page: empty
    assert ScreenNovelty(bonus=0.4, decay_trajectories=4).rewards(episode) == pytest.approx(
        [0.4, 0.4, 0.0]
    )


def test_novelty_rewards_are_added_to_the_shaped_rewards_of_the_windows() -> None:
    episode = _typing_episode()
    shaping = RewardShaping(step_cost=0.01, invalid_penalty=0.1, repeat_penalty=0.05)
    (window,) = cut_windows(episode, 8, shaping, bonuses=[0.4, 0.4, 0.0])
    assert window.rewards == pytest.approx((0.39, 0.39, 0.99))
    with pytest.raises(ValueError):  # one bonus per step, never silently truncated
        cut_windows(episode, 8, shaping, bonuses=[0.4])


def test_without_the_step_cost_on_failures_only_successes_pay_it() -> None:
    success = _typing_episode()
    failure = Trajectory(success.task, success.steps[:2], False, trajectory_id="failed")
    for on_failure, failed_rewards in ((True, [-0.01, -0.01]), (False, [0.0, 0.0])):
        shaping = RewardShaping(0.01, 0.1, 0.05, step_cost_on_failure=on_failure)
        assert shaped_rewards(failure, shaping) == pytest.approx(failed_rewards)
        assert shaped_rewards(success, shaping) == pytest.approx([-0.01, -0.01, 0.99])
    # The config reaches the algorithm's shaping; penalties stay on failures either way.
    cfg = load_config(None, ["aride.step_cost_on_failure=false"])
    assert build_algorithm(cfg).shaping.step_cost_on_failure is False
    repeated = Trajectory(
        success.task, [success.steps[0], success.steps[0]], False, trajectory_id="repeat"
    )
    shaping = RewardShaping(0.01, 0.1, 0.05, step_cost_on_failure=False)
    assert shaped_rewards(repeated, shaping) == pytest.approx([0.0, -0.05])


def test_the_replay_adds_novelty_only_when_the_config_turns_it_on() -> None:
    assert screen_novelty(load_config(None, [])) is None
    overrides = ["explore.novelty_bonus=0.4", "explore.novelty_decay_episodes=4"]
    cfg = load_config(None, [*overrides, "train.min_replay=1"])
    replay = build_replay(cfg, keep_screenshots=False, store_dir=None)
    assert replay.novelty is not None
    replay.ingest([_typing_episode()])
    batch = replay.sample(1, learner_version=0)
    assert batch is not None
    assert batch.windows[0].rewards == pytest.approx((0.39, 0.39, 0.99))


def test_rank_prior_turns_a_uniform_type_head_into_zipf() -> None:
    # With equal logits, p(rank) = (1 + rank)^-a / sum_j (1 + j)^-a: for a = 2 over 3
    # candidates, 1 / (1 + 1/4 + 1/9) = 36/49 for the first.
    p = torch.softmax(rank_prior(3, 2.0), dim=0)
    assert p.tolist() == pytest.approx([36 / 49, 9 / 49, 4 / 49], abs=1e-6)
    assert torch.equal(rank_prior(3, 0.0), torch.zeros(3))


def test_candidate_prior_shifts_the_type_head_and_acting_agrees_with_scoring() -> None:
    obs = _screen()
    shape = {"d_model": 32, "layers": 1, "heads": 2, "hash_buckets": 256}
    plain = SmallPolicy(SmallPolicyConfig(**shape))
    prior = SmallPolicy(SmallPolicyConfig(**shape, candidate_prior=2.0))
    prior.load_state_dict(plain.state_dict())  # same weights: only the prior differs
    batch = plain.featurize([obs])
    plain_logits = plain._heads(batch).candidate_logp[0].detach()
    prior_logits = prior._heads(batch).candidate_logp[0].detach()
    count = int(batch.candidate_mask[0].sum())
    # log-softmax(l + prior) - log-softmax(l) is the prior up to one constant per row.
    shift = (prior_logits - plain_logits)[:count] - rank_prior(count, 2.0)
    assert torch.allclose(shift, shift[0].expand_as(shift), atol=1e-5)
    out = prior.act([obs], generator=torch.Generator().manual_seed(0))
    scored = prior.score_actions([obs], out.actions)
    assert torch.allclose(out.logprobs, scored.logprobs.detach(), atol=1e-6)


def test_the_run_config_carries_the_candidate_prior_into_the_small_policy() -> None:
    policy = make_policy(load_config(None, ["explore.candidate_prior=1.5"]))
    assert isinstance(policy, SmallPolicy) and policy.config.candidate_prior == 1.5
    assert np.isclose(make_policy(load_config(None, [])).config.candidate_prior, 0.0)


def test_the_run_config_carries_the_focus_switches_into_the_small_policy_and_its_checkpoint(
    tmp_path: Path,
) -> None:
    """A run's switch reaches the policy, and a saved checkpoint (what ``distrl eval`` loads)
    keeps it, so the evaluated policy masks TYPE as the trained one did."""
    policy = make_policy(
        load_config(
            None,
            [
                "explore.type_needs_focus=true",
                "explore.focused_type_prior=2",
                "explore.empty_field_type_prior=1.5",
            ],
        )
    )
    assert isinstance(policy, SmallPolicy) and policy.config.type_needs_focus
    assert policy.config.focused_type_prior == 2.0
    assert not make_policy(load_config(None, [])).config.type_needs_focus
    policy.save(tmp_path / "policy.pt")
    loaded = SmallPolicy.load(tmp_path / "policy.pt").config
    assert loaded.type_needs_focus and loaded.focused_type_prior == 2.0
    assert loaded.empty_field_type_prior == 1.5
