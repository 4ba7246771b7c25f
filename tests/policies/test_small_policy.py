"""SmallPolicy: act and score_actions agree, the composite distribution is a distribution, oracle
actions are representable, batching and save/load change nothing, unrepresentable actions never
raise."""

from __future__ import annotations

import math
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
import torch
from pydantic import ValidationError

from distrl.core.action import Action, ActionType
from distrl.core.observation import Observation, UIElement
from distrl.policies import POLICY_REGISTRY, Policy, PolicyCheckpointError, load_policy
from distrl.policies.features import ACTION_KINDS, ActionKind
from distrl.policies.small import SmallPolicy, SmallPolicyConfig, _token_count

if TYPE_CHECKING:  # the shared episodes come from this folder's conftest.py fixtures
    from conftest import Demo, Rollout

TOL = 1e-5


def _flatten(demos: list[Demo]) -> tuple[list[Observation], list[Action]]:
    observations = [o for d in demos for o in d.observations]
    actions = [a for d in demos for a in d.actions]
    return observations, actions


def _small_obs(instruction: str, elements: tuple[UIElement, ...]) -> Observation:
    return Observation(np.zeros((8, 4, 3), np.uint8), instruction, elements)


def _element(text: str, bbox: tuple[float, float, float, float], kind: str = "button") -> UIElement:
    return UIElement(text, bbox, True, f"id/{text}", kind)


def test_small_policy_satisfies_the_protocol_and_is_registered() -> None:
    policy = SmallPolicy()
    assert isinstance(policy, Policy)
    assert POLICY_REGISTRY["small"] is SmallPolicy
    assert policy.version == 0


def test_act_logprobs_equal_score_actions_on_policy_rollouts(
    policy_rollouts: tuple[SmallPolicy, list[Rollout]],
) -> None:
    """The behaviour log-prob recorded while acting (batch of 1, no grad) equals the learner's
    log-prob of the same action (a whole episode as one batch, with grad)."""
    policy, rollouts = policy_rollouts
    steps = 0
    for rollout in rollouts:
        scores = policy.score_actions(rollout.observations, rollout.actions)
        assert bool(scores.representable.all())
        torch.testing.assert_close(scores.logprobs.detach(), rollout.logprobs, atol=TOL, rtol=0)
        steps += len(rollout.actions)
    assert steps >= 80


def test_act_and_score_actions_agree_on_oracle_states(oracle_demos: list[Demo]) -> None:
    """Same check on a batch of 32 states from both suites (popups, banners, keyboards...),
    entropies and values included."""
    policy = SmallPolicy(SmallPolicyConfig(init_seed=3))
    observations, _ = _flatten(oracle_demos)
    batch = observations[:: max(1, len(observations) // 32)][:32]
    out = policy.act(batch, generator=torch.Generator().manual_seed(0))
    assert all(a.is_valid for a in out.actions)
    scores = policy.score_actions(batch, out.actions)
    assert bool(scores.representable.all())
    for got, want in (
        (scores.logprobs, out.logprobs),
        (scores.entropies, out.entropies),
        (scores.values, out.values),
    ):
        assert got.dtype == torch.float32
        torch.testing.assert_close(got.detach(), want, atol=TOL, rtol=0)
    assert bool((out.logprobs <= 0).all())
    assert bool((out.entropies > 0).all())


def test_oracle_actions_are_representable(oracle_demos: list[Demo]) -> None:
    """All oracle steps of the sampled episodes map into the composite space, except TYPE of
    texts the instruction does not contain verbatim (info queries; see test_candidates)."""
    policy = SmallPolicy()
    observations, actions = _flatten(oracle_demos)
    scores = policy.score_actions(observations, actions)
    representable = scores.representable
    missing = [
        (d.task.spec["template"], a)
        for d in oracle_demos
        for a, ok in zip(
            d.actions, policy.score_actions(d.observations, d.actions).representable, strict=True
        )
        if not ok
    ]
    assert all(template == "info_query" for template, _ in missing), missing
    assert all(a.action_type is ActionType.TYPE for _, a in missing), missing
    # Measured over all 1,700 tasks: 10,928 of 10,970 oracle steps (99.6%).
    assert float(representable.float().mean()) >= 0.98
    assert bool((scores.logprobs[~representable] == 0).all())
    assert bool(torch.isfinite(scores.logprobs).all())


def _all_composite_actions(policy: SmallPolicy, obs: Observation) -> list[tuple[int, Action]]:
    """Every action the policy can emit in ``obs``, one per composite choice, with its kind."""
    item = policy.featurize([obs]).items[0]
    actions = []
    for kind in range(len(ACTION_KINDS)):
        if kind == ActionKind.TAP:
            actions += [
                (kind, policy._action_of(item, kind, i, 0))
                for i in range(len(item.elements))
                if item.tap_targets[i]
            ]
        elif kind == ActionKind.TYPE:
            if policy.config.type_needs_focus and not item.has_focus:
                continue
            actions += [
                (kind, policy._action_of(item, kind, 0, c)) for c in range(len(item.candidates))
            ]
        else:
            actions.append((kind, policy._action_of(item, kind, 0, 0)))
    return actions


def _entropy_of(probabilities: list[float]) -> float:
    total = sum(probabilities)
    return -sum(p / total * math.log(p / total) for p in probabilities if p > 0)


def _brute_force_check(policy: SmallPolicy, obs: Observation) -> None:
    kinds, actions = zip(*_all_composite_actions(policy, obs), strict=True)
    assert len(set(actions)) == len(actions), "two composite choices emit the same action"
    scores = policy.score_actions([obs] * len(actions), list(actions))
    assert bool(scores.representable.all())
    logp = scores.logprobs.detach().double()
    assert math.isclose(float(logp.exp().sum()), 1.0, abs_tol=1e-5)
    brute_entropy = float(-(logp.exp() * logp).sum())
    assert math.isclose(float(scores.entropies[0].detach()), brute_entropy, abs_tol=1e-4)
    # Each head's own entropy: the kind marginal, and the argument given its kind (NaN when the
    # screen offers that kind nothing).
    probability = [float(p) for p in logp.exp()]
    by_kind = [
        sum(p for k, p in zip(kinds, probability, strict=True) if k == kind)
        for kind in range(len(ACTION_KINDS))
    ]
    heads = {head: float(value[0]) for head, value in scores.head_entropies.items()}
    assert math.isclose(heads["kind"], _entropy_of(by_kind), abs_tol=1e-4)
    for head, kind in (("tap_element", ActionKind.TAP), ("type_text", ActionKind.TYPE)):
        arguments = [p for k, p in zip(kinds, probability, strict=True) if k == kind]
        if arguments:
            assert math.isclose(heads[head], _entropy_of(arguments), abs_tol=1e-4), head
        else:
            assert math.isnan(heads[head]), head


def test_entropy_matches_brute_force_enumeration_small_case() -> None:
    policy = SmallPolicy(SmallPolicyConfig(init_seed=1))
    obs = _small_obs(
        "Open 'notes' now",
        (
            _element("Notes", (0.1, 0.1, 0.4, 0.2)),
            _element("Clock", (0.5, 0.1, 0.9, 0.2)),
            # Covers Notes' centre: Notes is no tap target, so it carries no probability.
            _element("Dialog", (0.0, 0.0, 0.5, 0.5), "dialog"),
        ),
    )
    item = policy.featurize([obs]).items[0]
    assert item.tap_targets.tolist() == [False, True, True]
    _brute_force_check(policy, obs)


def test_entropy_matches_brute_force_enumeration_on_phonesim(oracle_demos: list[Demo]) -> None:
    policy = SmallPolicy(SmallPolicyConfig(init_seed=2))
    for demo in oracle_demos[::8]:
        _brute_force_check(policy, demo.observations[len(demo.observations) // 2])


def test_entropy_without_elements_or_candidates_has_no_tap_or_type() -> None:
    policy = SmallPolicy()
    obs = _small_obs("?!", ())
    out = policy.act([obs] * 20, generator=torch.Generator().manual_seed(0))
    assert all(
        a.action_type not in (ActionType.DUAL_POINT, ActionType.TYPE) or not a.is_tap
        for a in out.actions
    )
    assert all(a.action_type is not ActionType.TYPE for a in out.actions)
    _brute_force_check(policy, obs)


def _form(focused: bool, typed: str = "") -> Observation:
    """MiniWoB++'s enter-text in miniature: a text field (focused or not, holding ``typed``)
    and a Submit button."""
    field = UIElement(typed, (0.1, 0.1, 0.9, 0.2), True, "id/field", "input_text", focused=focused)
    return _small_obs(
        'Enter "Kasey" into the text field and press Submit.',
        (field, _element("Submit", (0.1, 0.3, 0.4, 0.4))),
    )


def test_type_needs_focus_offers_type_only_where_a_field_has_the_focus() -> None:
    """With ``type_needs_focus`` the kind head masks TYPE on a screen where nothing has the
    focus (typing there changes nothing on any backend): acting never emits it, scoring calls a
    stored TYPE there unrepresentable (log-prob 0, no actor gradient), and the probabilities
    still sum to 1 with the entropy of the masked distribution. With the focus, TYPE is offered
    as before; without the switch (the default) it is offered everywhere."""
    gated = SmallPolicy(SmallPolicyConfig(type_needs_focus=True, init_seed=3))
    ungated = SmallPolicy(SmallPolicyConfig(init_seed=3))
    unfocused, focused = _form(False), _form(True)
    type_kasey = Action.type_text("Kasey")

    draws = gated.act([unfocused] * 300, generator=torch.Generator().manual_seed(0)).actions
    assert not any(a.action_type is ActionType.TYPE for a in draws)
    draws = gated.act([focused] * 300, generator=torch.Generator().manual_seed(0)).actions
    assert any(a.action_type is ActionType.TYPE for a in draws)
    draws = ungated.act([unfocused] * 300, generator=torch.Generator().manual_seed(0)).actions
    assert any(a.action_type is ActionType.TYPE for a in draws)

    scores = gated.score_actions([unfocused, focused], [type_kasey, type_kasey])
    assert scores.representable.tolist() == [False, True]
    logprobs = scores.logprobs.detach()
    assert float(logprobs[0]) == 0.0 and float(logprobs[1]) < 0.0
    assert bool(ungated.score_actions([unfocused], [type_kasey]).representable[0])
    assert math.isnan(
        float(gated.score_actions([unfocused], [type_kasey]).head_entropies["type_text"][0])
    )
    for policy in (gated, ungated):
        for obs in (unfocused, focused):
            _brute_force_check(policy, obs)


def test_focused_type_prior_raises_the_type_logit_by_its_value_where_a_field_has_the_focus() -> (
    None
):
    """The prior adds exactly its value to TYPE's logit against every other kind on a focused
    screen and nothing elsewhere; acting and scoring agree and the entropy stays exact."""
    plain = SmallPolicy(SmallPolicyConfig(init_seed=3))
    prior = SmallPolicy(SmallPolicyConfig(init_seed=3, focused_type_prior=2.5))
    type_kasey, tap_submit = Action.type_text("Kasey"), Action.tap(0.35, 0.25)

    def type_over_tap(policy: SmallPolicy, obs: Observation) -> float:
        logp = policy.score_actions([obs, obs], [type_kasey, tap_submit]).logprobs.detach()
        return float(logp[0] - logp[1])

    focused, unfocused = _form(True), _form(False)
    assert math.isclose(
        type_over_tap(prior, focused) - type_over_tap(plain, focused), 2.5, abs_tol=1e-4
    )
    assert math.isclose(
        type_over_tap(prior, unfocused), type_over_tap(plain, unfocused), abs_tol=1e-5
    )
    out = prior.act([focused] * 8, generator=torch.Generator().manual_seed(1))
    scored = prior.score_actions([focused] * 8, out.actions).logprobs.detach()
    assert torch.allclose(out.logprobs, scored, atol=1e-5)
    _brute_force_check(prior, focused)


def test_empty_field_type_prior_lifts_type_only_until_the_focused_field_holds_text() -> None:
    """The empty-field prior adds exactly its value to TYPE's logit where the focused field is
    still empty, nothing once it holds text (the focus stays there after typing) or where
    nothing has the focus; it adds to the focused-screen prior; acting and scoring agree."""
    plain = SmallPolicy(SmallPolicyConfig(init_seed=3))
    empty = SmallPolicy(SmallPolicyConfig(init_seed=3, empty_field_type_prior=1.5))
    both = SmallPolicy(
        SmallPolicyConfig(init_seed=3, empty_field_type_prior=1.5, focused_type_prior=0.5)
    )
    type_kasey, tap_submit = Action.type_text("Kasey"), Action.tap(0.35, 0.25)

    def type_over_tap(policy: SmallPolicy, obs: Observation) -> float:
        logp = policy.score_actions([obs, obs], [type_kasey, tap_submit]).logprobs.detach()
        return float(logp[0] - logp[1])

    focused_empty, focused_filled = _form(True), _form(True, typed="Kasey")
    unfocused = _form(False)
    batch = SmallPolicy().featurize([focused_empty, focused_filled, unfocused])
    assert batch.focus_empty.tolist() == [True, False, False]
    expected = [
        (empty, focused_empty, 1.5),
        (empty, focused_filled, 0.0),
        (empty, unfocused, 0.0),
        (both, focused_empty, 2.0),
        (both, focused_filled, 0.5),
        (both, unfocused, 0.0),
    ]
    for policy, obs, lift in expected:
        assert math.isclose(
            type_over_tap(policy, obs) - type_over_tap(plain, obs), lift, abs_tol=1e-4
        )
    out = empty.act([focused_empty] * 8, generator=torch.Generator().manual_seed(1))
    scored = empty.score_actions([focused_empty] * 8, out.actions).logprobs.detach()
    assert torch.allclose(out.logprobs, scored, atol=1e-5)
    _brute_force_check(both, focused_empty)
    _brute_force_check(both, focused_filled)


def test_type_needs_focus_keeps_the_general_suites_oracle_steps(oracle_demos: list[Demo]) -> None:
    """PhoneSim's expert taps a field before it types, so on the general suite the gate takes
    no demonstrated step away. (On webshop it does: the site's search field sits at the bottom
    and the keyboard covers it, so the element list shows nothing focused while typing works;
    the switch's description says so.)"""
    general = [d for d in oracle_demos if d.task.suite == "general"]
    observations, actions = _flatten(general)
    gated = SmallPolicy(SmallPolicyConfig(type_needs_focus=True))
    assert any(a.action_type is ActionType.TYPE for a in actions)
    assert gated.score_actions(observations, actions).representable.tolist() == (
        SmallPolicy().score_actions(observations, actions).representable.tolist()
    )


def test_batching_with_different_element_counts_equals_one_by_one(
    oracle_demos: list[Demo],
) -> None:
    policy = SmallPolicy(SmallPolicyConfig(init_seed=4))
    observations, actions = _flatten(oracle_demos)
    picks = list(range(0, len(observations), max(1, len(observations) // 12)))[:12]
    batch_obs = [observations[i] for i in picks]
    batch_actions = [actions[i] for i in picks]
    assert len({len(o.elements) for o in batch_obs}) > 1
    together = policy.score_actions(batch_obs, batch_actions)
    for row, (obs, action) in enumerate(zip(batch_obs, batch_actions, strict=True)):
        alone = policy.score_actions([obs], [action])
        for got, want in zip(together[:3], alone[:3], strict=True):
            torch.testing.assert_close(got[row], want[0], atol=TOL, rtol=0)
        assert bool(together.representable[row]) == bool(alone.representable[0])
    with torch.no_grad():
        values = policy.trajectory_value(batch_obs)
        for row, obs in enumerate(batch_obs):
            torch.testing.assert_close(
                values[row], policy.trajectory_value([obs])[0], atol=TOL, rtol=0
            )


def test_act_is_deterministic_given_the_generator(oracle_demos: list[Demo]) -> None:
    policy = SmallPolicy()
    batch, _ = _flatten(oracle_demos[:4])
    first = policy.act(batch, generator=torch.Generator().manual_seed(7))
    second = policy.act(batch, generator=torch.Generator().manual_seed(7))
    assert first.actions == second.actions
    assert torch.equal(first.logprobs, second.logprobs)
    greedy = policy.act(batch, greedy=True)
    assert greedy.actions == policy.act(batch, greedy=True).actions
    assert SmallPolicy().state_dict().keys() == policy.state_dict().keys()
    for key, value in SmallPolicy().state_dict().items():
        assert torch.equal(value, policy.state_dict()[key]), key  # init_seed fixes the weights


def test_greedy_takes_the_most_likely_kind_then_its_most_likely_argument(
    oracle_demos: list[Demo],
) -> None:
    policy = SmallPolicy(SmallPolicyConfig(init_seed=5))
    observations, _ = _flatten(oracle_demos[::4])
    greedy = policy.act(observations, greedy=True)
    batch = policy.featurize(observations)
    with torch.no_grad():
        heads = policy._heads(batch)
    targets = policy.targets(batch, greedy.actions)
    assert bool(targets.representable.all())
    assert torch.equal(targets.kinds, heads.kind_logp.argmax(dim=1))
    taps = targets.kinds == ActionKind.TAP
    assert torch.equal(targets.elements[taps], heads.element_logp.argmax(dim=1)[taps])
    types = targets.kinds == ActionKind.TYPE
    assert torch.equal(targets.candidates[types], heads.candidate_logp.argmax(dim=1)[types])


def test_unrepresentable_actions_get_zero_logprob_and_no_exception() -> None:
    policy = SmallPolicy()
    obs = _small_obs(
        "Open notes",
        (_element("Notes", (0.1, 0.1, 0.4, 0.2)), _element("Dialog", (0.0, 0.0, 0.5, 0.5))),
    )
    actions = [
        Action.tap(0.9, 0.9),  # on nothing
        Action.type_text("not in the instruction"),
        Action.invalid("garbage"),
        Action.swipe((0.5, 0.1), (0.5, 0.9)),  # horizontal
        Action.tap(0.45, 0.45),  # on the dialog: representable
        Action.swipe((0.8, 0.5), (0.2, 0.5)),  # SWIPE_UP, whatever its length
        Action.swipe((0.2, 0.5), (0.3, 0.5)),  # SWIPE_DOWN
        Action.type_text("notes"),
        Action.press_enter(),
        Action.complete(),
    ]
    scores = policy.score_actions([obs] * len(actions), actions)
    assert scores.representable.tolist() == [False] * 4 + [True] * 6
    assert bool((scores.logprobs[:4] == 0).all())
    assert bool((scores.logprobs[4:] < 0).all())
    targets = policy.targets(policy.featurize([obs] * 3), actions[5:8])
    assert targets.kinds.tolist() == [ActionKind.SWIPE_UP, ActionKind.SWIPE_DOWN, ActionKind.TYPE]


def test_emitted_swipes_scroll_in_the_named_direction() -> None:
    policy = SmallPolicy()
    item = policy.featurize([_small_obs("x", ())]).items[0]
    up = policy._action_of(item, ActionKind.SWIPE_UP, 0, 0)
    down = policy._action_of(item, ActionKind.SWIPE_DOWN, 0, 0)
    assert not up.is_tap and up.lift_yx[0] < up.touch_yx[0]  # the finger moves up
    assert not down.is_tap and down.lift_yx[0] > down.touch_yx[0]


def test_score_actions_is_differentiable_and_reaches_every_head(oracle_demos: list[Demo]) -> None:
    policy = SmallPolicy()
    observations, actions = _flatten(oracle_demos[:6])
    scores = policy.score_actions(observations, actions)
    loss = (
        -scores.logprobs.sum()
        - scores.entropies.sum()
        + scores.values.square().sum()
        + policy.trajectory_value(observations[:3]).square().sum()
    )
    loss.backward()
    for name, parameter in policy.named_parameters():
        if name.startswith(("history_embedding", "element_kind", "text", "trajectory_text")):
            continue  # sparse rows: only the looked-up ones get gradient
        assert parameter.grad is not None and bool(parameter.grad.abs().sum() > 0), name


def test_save_load_round_trip_gives_identical_outputs(
    tmp_path: Path, oracle_demos: list[Demo]
) -> None:
    config = SmallPolicyConfig(d_model=64, heads=2, layers=1, init_seed=9)
    policy = SmallPolicy(config)
    with torch.no_grad():
        for parameter in policy.parameters():
            parameter.add_(0.01 * torch.randn_like(parameter))  # not the init weights
    policy.version = 17
    path = tmp_path / "ckpt" / "policy.pt"
    policy.save(path)
    for loaded in (SmallPolicy.load(path), load_policy(path)):
        assert isinstance(loaded, SmallPolicy)
        assert loaded.version == 17 and loaded.config == config
        observations, actions = _flatten(oracle_demos[:3])
        want, got = (
            policy.score_actions(observations, actions),
            loaded.score_actions(observations, actions),
        )
        for a, b in zip(want[:4], got[:4], strict=True):
            assert torch.equal(a, b)
        for head, entropy in want.head_entropies.items():
            torch.testing.assert_close(
                entropy, got.head_entropies[head], rtol=0, atol=0, equal_nan=True
            )
        gen = lambda: torch.Generator().manual_seed(3)  # noqa: E731
        assert (
            policy.act(observations, generator=gen()).actions
            == loaded.act(observations, generator=gen()).actions
        )
        assert torch.equal(
            policy.trajectory_value(observations), loaded.trajectory_value(observations)
        )


def test_bad_checkpoints_fail_with_the_file_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.pt"
    with pytest.raises(PolicyCheckpointError, match="nope.pt"):
        SmallPolicy.load(missing)
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(2)}, foreign)
    with pytest.raises(PolicyCheckpointError, match="not a distrl policy checkpoint"):
        load_policy(foreign)
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint")
    with pytest.raises(PolicyCheckpointError, match="cannot be read"):
        load_policy(garbage)


def test_config_rejects_unknown_keys_and_bad_shapes() -> None:
    with pytest.raises(ValidationError):
        SmallPolicyConfig(d_modle=64)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="divisible"):
        SmallPolicyConfig(d_model=30, heads=4)
    with pytest.raises(ValidationError, match="swipe_from_y"):
        SmallPolicyConfig(swipe_from_y=0.3, swipe_to_y=0.3)


def test_wrong_number_of_actions_is_an_error_naming_the_fix() -> None:
    policy = SmallPolicy()
    with pytest.raises(ValueError, match="one action per observation"):
        policy.score_actions([_small_obs("x", ())], [])


def test_recomputed_activations_give_the_same_loss_and_gradients(
    oracle_demos: list[Demo],
) -> None:
    """Keeping only each layer's input for the backward pass (the learner's memory saver)
    changes how the gradient is computed, not what it is."""
    observations, actions = _flatten(oracle_demos[:6])
    grads = []
    for recompute in (False, True):
        policy = SmallPolicy(SmallPolicyConfig(recompute_activations=recompute))
        scores = policy.score_actions(observations, actions)
        loss = -scores.logprobs.mean() + scores.values.pow(2).mean()
        loss.backward()
        grads.append([p.grad.clone() for p in policy.parameters() if p.grad is not None])
    assert len(grads[0]) == len(grads[1]) > 0
    for plain, recomputed in zip(*grads, strict=True):
        assert torch.allclose(plain, recomputed, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("recompute", [True, False])
def test_the_run_config_chooses_whether_activations_are_recomputed(
    recompute: bool, tmp_path: Path
) -> None:
    """``policy.small.recompute_activations`` reaches the policy a run builds, and a saved
    policy keeps the choice."""
    from distrl.config.loader import load_config
    from distrl.policies.builtin import make_policy

    cfg = load_config(overrides=[f"policy.small.recompute_activations={str(recompute).lower()}"])
    policy = make_policy(cfg)
    assert isinstance(policy, SmallPolicy)
    assert policy.config.recompute_activations is recompute
    policy.save(tmp_path / "policy.pt")
    assert load_policy(tmp_path / "policy.pt").config.recompute_activations is recompute


def test_length_groups_change_padding_not_scores_or_gradients(oracle_demos: list[Demo]) -> None:
    """The learner scores a batch in groups of similar token count: every row's log-prob,
    entropy and value, the step critic and the gradients equal those of one padded batch, in
    the caller's order (the oracle states mix short home screens with long typing screens)."""
    observations, actions = _flatten(oracle_demos)
    assert len(observations) >= 64  # enough for two groups of at least 32
    results = []
    for groups in (1, 8):
        policy = SmallPolicy(SmallPolicyConfig(score_groups=groups))
        scores = policy.score_actions(observations, actions)
        values = policy.value(observations)
        loss = -scores.logprobs.mean() - scores.entropies.mean() + values.pow(2).mean()
        loss.backward()
        grads = [p.grad.clone() for p in policy.parameters() if p.grad is not None]
        results.append((scores, values, grads))
    (one, one_values, one_grads), (grouped, grouped_values, grouped_grads) = results
    for field in ("logprobs", "entropies", "values"):
        assert torch.allclose(getattr(one, field), getattr(grouped, field), atol=1e-5), field
    assert torch.equal(one.representable, grouped.representable)
    for head, entropy in one.head_entropies.items():
        assert torch.allclose(entropy, grouped.head_entropies[head], atol=1e-5, equal_nan=True)
    assert torch.allclose(one_values, grouped_values, atol=1e-5)
    assert len(one_grads) == len(grouped_grads) > 0
    for plain, by_group in zip(one_grads, grouped_grads, strict=True):
        assert torch.allclose(plain, by_group, atol=1e-5, rtol=1e-4)


def test_length_groups_sort_by_token_count_and_keep_at_least_32(oracle_demos: list[Demo]) -> None:
    observations, _ = _flatten(oracle_demos)
    policy = SmallPolicy(SmallPolicyConfig(score_groups=8))
    groups = policy._length_groups(observations).batches
    assert len(groups) == min(8, len(observations) // 32) >= 2
    rows = [i for indices, _ in groups for i in indices]
    assert sorted(rows) == list(range(len(observations)))  # every row once
    counts = [[_token_count(item) for item in batch.items] for _, batch in groups]
    for shorter, longer in pairwise(counts):
        assert max(shorter) <= min(longer)  # sorted: each group pads only to its own longest
    assert max(counts[0]) < max(counts[-1])
    too_few = observations[:40]  # too few for two groups of 32
    assert len(policy._length_groups(too_few).batches) == 1
