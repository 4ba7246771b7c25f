"""The scripted MiniWoB++ experts: they solve their tasks in Chromium and recover from detours."""

from __future__ import annotations

import numpy as np
import pytest

from distrl.agents.noisy import NoisyOracleAgent
from distrl.agents.oracle import OracleAgent
from distrl.core.action import ActionType
from distrl.core.observation import UIElement
from distrl.envs.miniwob import SUPPORTED_TASKS, UnsupportedExpertTask, expert_action

REQUIRED = ["click-test", "click-button", "click-link", "focus-text", "enter-text"]
EXTRA = ["click-checkboxes", "click-tab", "enter-password"]


def _run(env, agent, task) -> tuple[float, int]:
    obs = env.reset(task)
    done, reward = False, 0.0
    while not done:
        obs, reward, done, _ = env.step(agent.act(obs))
    return reward, env.steps


@pytest.mark.parametrize("name", REQUIRED)
def test_the_oracle_solves_the_required_tasks(miniwob_env, train_tasks, pinned, name):
    oracle = OracleAgent(miniwob_env)
    for seed in (11, 12, 13):
        reward, steps = _run(miniwob_env, oracle, pinned(train_tasks[name], seed))
        assert reward == 1.0, (name, seed, miniwob_env.state.utterance, miniwob_env.actions)
        assert steps <= 4


@pytest.mark.parametrize("name", EXTRA)
def test_the_oracle_solves_the_extra_tasks(miniwob_env, train_tasks, pinned, name):
    oracle = OracleAgent(miniwob_env)
    for seed in (21, 22):
        reward, _ = _run(miniwob_env, oracle, pinned(train_tasks[name], seed))
        assert reward == 1.0, (name, seed, miniwob_env.state.utterance, miniwob_env.actions)


def test_the_noisy_oracle_runs_whole_episodes(miniwob_env, train_tasks):
    agent = NoisyOracleAgent(miniwob_env, noise=0.3, rng=np.random.default_rng(0))
    rewards = [_run(miniwob_env, agent, train_tasks["enter-text"])[0] for _ in range(4)]
    assert set(rewards) <= {0.0, 1.0}


def test_unsupported_tasks_name_the_supported_ones():
    with pytest.raises(UnsupportedExpertTask, match="click-button.*enter-text") as error:
        expert_action("book-flight", "Book the cheapest flight", [])
    assert "\n" not in str(error.value)
    assert set(REQUIRED + EXTRA) <= set(SUPPORTED_TASKS)


# -- recovery, on hand-built screens --------------------------------------------------------------
def _field(text: str, focused: bool) -> UIElement:
    return UIElement(text, (0.1, 0.3, 0.8, 0.4), True, "tt", "field", focused=focused)


SUBMIT = UIElement("Submit", (0.1, 0.5, 0.6, 0.6), True, "subbtn", "button")
UTTERANCE = 'Enter "Ronda" into the text field and press Submit.'


def test_enter_text_steps_focus_type_then_submit():
    first = expert_action("enter-text", UTTERANCE, [_field("", False), SUBMIT])
    assert first.is_tap and _field("", False).contains(*first.touch_yx)
    typed = expert_action("enter-text", UTTERANCE, [_field("", True), SUBMIT])
    assert (typed.action_type, typed.text) == (ActionType.TYPE, "Ronda")
    submit = expert_action("enter-text", UTTERANCE, [_field("Ronda", True), SUBMIT])
    assert SUBMIT.contains(*submit.touch_yx)


def test_a_half_typed_field_is_completed_and_a_wrong_one_given_up():
    rest = expert_action("enter-text", UTTERANCE, [_field("Ro", True), SUBMIT])
    assert rest.text == "nda"
    wrong = expert_action("enter-text", UTTERANCE, [_field("Xy", True), SUBMIT])
    assert wrong.action_type is ActionType.STATUS_TASK_IMPOSSIBLE


def test_a_wrongly_ticked_checkbox_is_unticked_first():
    boxes = [
        UIElement("abc", (0.0, 0.2, 0.3, 0.3), True, "ch0", "toggle", checked=True),
        UIElement("xyz", (0.0, 0.4, 0.3, 0.5), True, "ch1", "toggle", checked=False),
    ]
    action = expert_action("click-checkboxes", "Select xyz and click Submit.", [*boxes, SUBMIT])
    assert boxes[0].contains(*action.touch_yx)
