"""The vlm-quick first-action study (docs/results/vlm-quick/first_actions.py): each episode's
first action is counted per family as the model writes it (placeholders, element names), with
the successes that followed it."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest

from distrl.core.action import Action
from distrl.core.observation import NO_SCREENSHOT, Observation, UIElement
from distrl.core.task import Task
from distrl.core.trajectory import Step, Trajectory
from distrl.policies.vlm import VLMPolicy

HOME = (
    UIElement("Messages", (0.0, 0.2, 0.5, 0.3), True, "app_messages", kind="button"),
    UIElement("Notes", (0.5, 0.2, 1.0, 0.3), True, "app_notes", kind="button"),
    UIElement("Olivia Baker", (0.0, 0.6, 1.0, 0.7), True, "contact", kind="item"),
)
MESSAGES, NOTES = Action.tap(0.25, 0.25), Action.tap(0.25, 0.75)


@pytest.fixture(scope="module")
def policy(element_name_vlm: Callable[..., VLMPolicy]) -> VLMPolicy:
    return element_name_vlm(name_placeholders=True, text_placeholders=True)


def _episode(template: str, instruction: str, first: Action, success: bool) -> Trajectory:
    task = Task("t", instruction, "general", "train", spec={"template": template, "params": {}})
    screen = Observation(NO_SCREENSHOT, instruction, HOME)
    steps = [Step(screen, first, 0.0, False), Step(screen, Action.press_home(), 0.0, True)]
    return Trajectory(task, steps, success=success)


def test_first_actions_are_counted_per_family_as_the_model_writes_them(
    results_script: Callable[[str], ModuleType], policy: VLMPolicy
) -> None:
    study = results_script("vlm-quick/first_actions.py")
    message = 'Send Olivia Baker a text that says "see you"'
    played = [
        _episode("send_message", message, NOTES, False),
        _episode("send_message", message, MESSAGES, True),
        _episode("send_message", message, NOTES, False),
        _episode("create_note", 'Take a note: "see you"', NOTES, True),
    ]
    table = study.first_actions(policy, played)
    tap_notes, tap_messages = '"TAP_ELEMENT", "name": Notes', '"TAP_ELEMENT", "name": Messages'
    assert table == {
        "send_message": {tap_notes: [2, 0], tap_messages: [1, 1]},
        "create_note": {tap_notes: [1, 1]},
    }
    assert list(table["send_message"]) == [tap_notes, tap_messages]  # most frequent first
    screen = Observation(NO_SCREENSHOT, message, HOME)
    # Names and dictated texts as their placeholders, in taps and in typed text alike.
    assert study.written(policy, screen, Action.tap(0.65, 0.5)).endswith('"name": Name1')
    assert study.written(policy, screen, Action.type_text("see you")).endswith('"Text1"')
    assert study.written(policy, screen, Action.type_text("Olivia Baker")).endswith('"Name1"')
