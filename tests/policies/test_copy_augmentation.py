"""Copy augmentation: the words a step copies from its instruction are swapped everywhere at once
(instruction, element list, action), so the swapped step is still correct; steps that copy
nothing, and the rest of the screen, are left alone; the VLM's target names the new word."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from distrl.algos.bc import behaviour_clone
from distrl.algos.copy_augmentation import CopySwap, copied_words, word_pool
from distrl.config.schema import VLMPolicyConfig
from distrl.core.action import Action, ActionType
from distrl.core.observation import NO_SCREENSHOT, Observation, UIElement
from distrl.core.task import Task
from distrl.core.trajectory import Step, Trajectory
from distrl.envs.phonesim.tasks.suites import load_suite, suite_instructions
from distrl.policies.vlm import VLMPolicy

CLOCK = UIElement("Clock", (0.1, 0.1, 0.3, 0.2), True, "app_clock", kind="button")
CAMERA = UIElement("Camera", (0.4, 0.1, 0.6, 0.2), True, "app_camera", kind="button")
OPEN_CLOCK = Observation(NO_SCREENSHOT, "Open the clock app", (CLOCK, CAMERA))
TAP_CLOCK = Action.tap(*CLOCK.center_yx)
POOL = ["zebra", "violin", "camera", "harbour", "lantern"]


def test_copied_words_are_those_the_action_writes_from_the_instruction() -> None:
    assert copied_words(OPEN_CLOCK, TAP_CLOCK) == ["clock"]  # case-insensitive
    assert copied_words(OPEN_CLOCK, Action.tap(*CAMERA.center_yx)) == []
    assert copied_words(OPEN_CLOCK, Action.press_back()) == []
    message = Observation(NO_SCREENSHOT, 'Tell Ivan Petrov "the package arrived" in Messages')
    # "the" is grammar, not a parameter; "in" is too short.
    assert copied_words(message, Action.type_text("the package arrived")) == ["arrived", "package"]


def test_a_tap_swaps_the_name_in_the_instruction_and_on_the_element_alike() -> None:
    swap = CopySwap(POOL, rate=1.0)
    for seed in range(20):
        observation, action = swap(OPEN_CLOCK, TAP_CLOCK, np.random.default_rng(seed))
        assert action == TAP_CLOCK  # the element did not move
        new = observation.elements[0].text
        assert new.lower() in POOL and new[0].isupper()  # the screen's capitalisation
        assert new.lower() != "camera"  # never a word the screen already shows
        assert observation.instruction == f"Open the {new.lower()} app"  # the instruction's
        assert observation.elements[1] == CAMERA
        assert observation.elements[0].bbox == CLOCK.bbox


def test_a_typed_text_is_swapped_consistently_in_the_previous_actions_too() -> None:
    instruction = 'Tell Ivan Petrov "Package arrived" in Messages'
    typed = Action.type_text("Package arrived")
    earlier = Observation(NO_SCREENSHOT, instruction, (), previous_actions=(typed,))
    observation, action = CopySwap(POOL, rate=1.0)(earlier, typed, np.random.default_rng(1))
    assert action.action_type is ActionType.TYPE
    first, second = action.text.split()
    assert first[0].isupper() and second.islower()
    assert {first.lower(), second} <= set(POOL) and first.lower() != second
    assert observation.instruction == f'Tell Ivan Petrov "{action.text}" in Messages'
    assert observation.previous_actions == (action,)


def test_rate_zero_or_nothing_copied_leaves_the_pair_as_it_was() -> None:
    rng = np.random.default_rng(0)
    assert CopySwap(POOL, rate=0.0)(OPEN_CLOCK, TAP_CLOCK, rng) == (OPEN_CLOCK, TAP_CLOCK)
    back = Action.press_back()
    assert CopySwap(POOL, rate=1.0)(OPEN_CLOCK, back, rng) == (OPEN_CLOCK, back)
    # A pool of only the screen's own words has nothing to swap in.
    assert CopySwap(["clock", "camera"], rate=1.0)(OPEN_CLOCK, TAP_CLOCK, rng) == (
        OPEN_CLOCK,
        TAP_CLOCK,
    )
    with pytest.raises(ValueError, match="rate"):
        CopySwap(POOL, rate=1.5)


def test_word_pool_holds_instruction_words_only() -> None:
    assert word_pool([OPEN_CLOCK]) == ["app", "clock", "open"]  # not "camera": screen only


def test_the_vlm_clones_swapped_steps_whose_target_names_the_new_word(
    run_oracle: Callable[[Task, int], Any],
) -> None:
    torch.set_num_threads(1)
    config = VLMPolicyConfig(
        tiny=True, lora=False, element_list=True, element_reference="name", max_new_tokens=16
    )
    policy = VLMPolicy(config, suite_instructions())
    general = load_suite("general", "train")
    open_app = next(task for task in general if task.spec.get("template") == "open_app")
    demo = run_oracle(open_app, env_seed=3)
    swap = CopySwap(POOL, rate=1.0)
    rng = np.random.default_rng(0)
    renamed = 0
    for observation, action in zip(demo.observations, demo.actions, strict=True):
        copied = copied_words(observation, action)
        swapped, swapped_action = swap(observation, action, rng)
        text = policy.prompts.action_text(swapped_action, swapped)
        if copied:
            renamed += 1
            assert not any(word in text.lower() for word in copied), text
            assert '"name":' in text
    assert renamed > 0  # opening an app taps the name the instruction gives

    steps = [
        Step(observation, action, reward=0.0, done=False)
        for observation, action in zip(demo.observations, demo.actions, strict=True)
    ]
    trajectory = Trajectory(demo.task, steps, success=True)
    losses = behaviour_clone(
        policy, [trajectory], steps=3, batch_size=4, lr=1e-3, seed=0, augment=swap
    )
    assert len(losses) == 3 and all(np.isfinite(losses))
