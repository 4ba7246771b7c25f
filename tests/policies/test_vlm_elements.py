"""``policy.vlm.element_list``: the element list in the prompt and taps by element index."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

from distrl.config.schema import VLMPolicyConfig
from distrl.core.action import Action, ActionType, format_action
from distrl.core.observation import NO_SCREENSHOT, Observation, UIElement
from distrl.core.task import Task
from distrl.envs.phonesim.tasks.suites import load_suite, suite_instructions
from distrl.policies.vlm import VLMPolicy
from distrl.policies.vlm.elements import ElementReferences

ELEMENTS = (
    UIElement("9:41", (0.0, 0.0, 1.0, 0.04), False, "clock"),
    UIElement('Say "hi"\nnow', (0.1, 0.2, 0.5, 0.3), True, "hi", kind="button"),
    UIElement("Wi-Fi", (0.1, 0.4, 0.9, 0.5), True, "wifi", kind="toggle", checked=True),
)
SCREEN = Observation(NO_SCREENSHOT, "Say hi", ELEMENTS)


@pytest.fixture(scope="module")
def policy() -> VLMPolicy:
    torch.set_num_threads(1)
    config = VLMPolicyConfig(tiny=True, element_list=True, max_new_tokens=16)
    return VLMPolicy(config, suite_instructions())


def test_prompt_lists_the_elements_one_per_line(policy: VLMPolicy) -> None:
    prompt = policy.prompts.chat(SCREEN)
    assert 'Elements:\n0 text: 9:41\n1 button: Say "hi" now\n2 toggle: Wi-Fi (on)\n' in prompt
    assert "Elements: none" in policy.prompts.chat(Observation(NO_SCREENSHOT, "Say hi"))
    short = ElementReferences(limit=2)
    assert short.prompt_lines(SCREEN)[-1].startswith("1 button")


def test_taps_on_element_centres_round_trip_through_references(
    run_oracle: Callable[[Task, int], Any],
) -> None:
    references = ElementReferences(limit=50)
    demo = run_oracle(load_suite("general", "train")[4], env_seed=2)
    taps = 0
    for observation, action in zip(demo.observations, demo.actions, strict=True):
        text = references.canonical_text(action, observation)
        if action.is_tap:
            taps += 1
            assert text is not None and '"TAP_ELEMENT"' in text  # the oracle taps centres
            assert references.parse(text, observation) == action
        else:
            assert text is None
    assert taps > 0
    assert references.canonical_text(Action.tap(0.55, 0.55), SCREEN) is None  # off-centre
    assert references.parse(format_action(Action.press_home()), SCREEN) is None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('Action Decision: "action_type": "TAP_ELEMENT", "element": 3', "not listed"),
        ('Action Decision: "action_type": "TAP_ELEMENT", "element": 12345', "malformed"),
        ('Action Decision: "action_type": "TAP_ELEMENT", "element": "1"', "malformed"),
        ('Action Decision: "action_type": "TAP_ELEMENT", "element": -1', "malformed"),
        ('Action Decision: "action_type": "TAP_ELEMENT", "element": 1, "x": 2', "malformed"),
        ('Action Decision: "action_type": "TAP_ELEMENT"', "malformed"),
    ],
)
def test_malformed_references_are_invalid_actions(text: str, reason: str) -> None:
    action = ElementReferences(limit=50).parse(text, SCREEN)
    assert action is not None and action.action_type is ActionType.INVALID
    assert reason in action.invalid_reason


def test_reasoning_before_the_decision_is_allowed() -> None:
    text = 'Plan: say hi.\nAction Decision: "action_type": "TAP_ELEMENT", "element": 1 '
    action = ElementReferences(limit=50).parse(text, SCREEN)
    assert action == Action.tap(*ELEMENTS[1].center_yx)


def test_references_are_short_and_act_agrees_with_score(
    policy: VLMPolicy, run_oracle: Callable[[Task, int], Any]
) -> None:
    demo = run_oracle(load_suite("general", "train")[0], env_seed=0)
    observation, action = demo.observations[0], demo.actions[0]
    assert len(policy.prompts.action_ids(action, observation)) <= 4  # three tokens and </s>
    assert len(policy.prompts.action_ids(action, SCREEN)) > 10  # no element there: AitW text
    observations = demo.observations[:4]
    out = policy.act(observations, generator=torch.Generator().manual_seed(0))
    scores = policy.score_actions(observations, out.actions)
    assert torch.allclose(out.logprobs, scores.logprobs.detach(), atol=1e-4, rtol=0)
    forced = policy.score_actions(observations, demo.actions[:4])
    assert torch.isfinite(forced.logprobs).all()


def test_a_generated_reference_is_the_tap_it_names(
    policy: VLMPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the model writes reaches the device as a tap on that element's centre."""
    from distrl.policies.vlm import policy as policy_module

    reference = ElementReferences.reference_text(2)
    target = [*policy.prompts.tokenizer.encode(reference, add_special_tokens=False)]
    real_sample = policy_module.sample

    def forced(model, inputs, decoding, choice):
        out = real_sample(model, inputs, decoding, choice)
        return type(out)([[*target, policy.prompts.eos_token_id]], out.scores)

    monkeypatch.setattr(policy_module, "sample", forced)
    out = policy.act([SCREEN])
    assert out.actions == [Action.tap(*ELEMENTS[2].center_yx)]
