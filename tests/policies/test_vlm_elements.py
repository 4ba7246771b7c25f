"""``policy.vlm.element_list``: the element list in the prompt and taps by element index or name;
the tiny tokenizer that keeps words and action fragments whole."""

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
from distrl.policies.features import tap_point
from distrl.policies.vlm import VLMPolicy
from distrl.policies.vlm import elements as elements_module
from distrl.policies.vlm.elements import MAX_NAME_WORDS, ElementReferences
from distrl.policies.vlm.tiny import action_fragments, tiny_tokenizer

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

    def forced(model, inputs, decoding, choice, tries=None):
        out = real_sample(model, inputs, decoding, choice, tries)
        return type(out)([[*target, policy.prompts.eos_token_id]], out.scores)

    monkeypatch.setattr(policy_module, "sample", forced)
    out = policy.act([SCREEN])
    assert out.actions == [Action.tap(*ELEMENTS[2].center_yx)]


def test_a_name_reference_copies_the_element_text_and_round_trips(
    run_oracle: Callable[[Task, int], Any],
) -> None:
    references = ElementReferences(limit=50, form="name")
    named = 0
    for task_index in (0, 4, 7):
        demo = run_oracle(load_suite("general", "train")[task_index], env_seed=1)
        for observation, action in zip(demo.observations, demo.actions, strict=True):
            text = references.canonical_text(action, observation)
            if not action.is_tap:
                assert text is None
                continue
            assert text is not None and references.parse(text, observation) == action
            if '"name":' in text:
                named += 1
                name = text.split('"name": ', 1)[1]
                assert any(" ".join(e.text.split()) == name for e in observation.elements)
    assert named > 0


@pytest.mark.parametrize("task_index", [8, 20, 33])  # open_conversation train tasks
def test_a_title_reference_taps_a_conversation_row_by_the_name_the_instruction_holds(
    run_oracle: Callable[[Task, int], Any], task_index: int
) -> None:
    """A conversation row ("Ben Carter · Call me when you get this") is too long to be a name
    and is tapped by index in ``name`` form; in ``title`` form it is tapped by its title, the
    contact's name the instruction holds, and every tap still round-trips."""
    task = load_suite("general", "train")[task_index]
    demo = run_oracle(task, env_seed=1)
    by_name, by_title = ElementReferences(50, form="name"), ElementReferences(50, form="title")
    forms: dict[str, list[str]] = {"name": [], "title": []}
    for observation, action in zip(demo.observations, demo.actions, strict=True):
        for label, references in (("name", by_name), ("title", by_title)):
            text = references.canonical_text(action, observation)
            if text is None:
                continue
            assert references.parse(text, observation) == action
            forms[label].append(text)
    assert any('"element":' in text for text in forms["name"])
    assert not any('"element":' in text for text in forms["title"])
    row_names = [t.split('"name": ', 1)[1] for t in forms["title"]]
    assert task.spec["params"]["name"] in row_names


def test_a_title_names_its_element_only_where_a_name_reference_finds_it() -> None:
    """Titles follow the name rules (at most ``MAX_NAME_WORDS`` words, the first element
    found by it), and a name is looked up as a whole text before a title, so a title another
    element's whole text reads is no name for its own element."""
    rows = (
        UIElement("Ana · Hi there, how are you today?", (0.0, 0.0, 1.0, 0.1), True, "a"),
        UIElement("Ana · See you", (0.0, 0.1, 1.0, 0.2), True, "b"),  # same title as row a
        UIElement("Ben · Call me", (0.0, 0.2, 1.0, 0.3), True, "c"),
        UIElement("Ben", (0.0, 0.3, 1.0, 0.4), True, "d"),  # whole text = row c's title
        UIElement("Cleo Ray", (0.0, 0.4, 1.0, 0.5), True, "e"),  # no subtitle: its text
    )
    screen = Observation(NO_SCREENSHOT, "Open the chat with Ana", rows)
    references = ElementReferences(limit=50, form="title")
    texts = [references.canonical_text(Action.tap(*tap_point(e)), screen) for e in rows]
    assert texts == [
        ElementReferences.name_text("Ana"),
        ElementReferences.reference_text(1),
        ElementReferences.reference_text(2),
        ElementReferences.name_text("Ben"),
        ElementReferences.name_text("Cleo Ray"),
    ]
    for element, text in zip(rows, texts, strict=True):
        assert text is not None and references.parse(text, screen) == Action.tap(
            *tap_point(element)
        )
    # Every form reads titles and whole texts: a title in name mode, a whole text in title mode.
    ana = Action.tap(*tap_point(rows[0]))
    assert (
        ElementReferences(50, form="name").parse(ElementReferences.name_text("Ana"), screen) == ana
    )
    assert references.parse(ElementReferences.name_text(rows[2].text), screen) == Action.tap(
        *tap_point(rows[2])
    )


def test_a_name_that_does_not_name_one_element_falls_back_to_the_index() -> None:
    long_text = " ".join(["word"] * (MAX_NAME_WORDS + 1))
    screen = Observation(
        NO_SCREENSHOT,
        "Tap things",
        (
            UIElement("OK", (0.0, 0.0, 0.5, 0.1), True, "a", kind="button"),
            UIElement("OK", (0.5, 0.0, 1.0, 0.1), True, "b", kind="button"),  # same text
            UIElement("", (0.0, 0.2, 1.0, 0.3), True, "c", kind="icon"),  # no text
            UIElement(long_text, (0.0, 0.4, 1.0, 0.5), True, "d"),  # too long to be a name
            UIElement("Say\n hi", (0.0, 0.6, 1.0, 0.7), True, "e", kind="button"),
        ),
    )
    references = ElementReferences(limit=50, form="name")
    texts = [references.canonical_text(Action.tap(*tap_point(e)), screen) for e in screen.elements]
    assert texts == [
        ElementReferences.name_text("OK"),
        ElementReferences.reference_text(1),
        ElementReferences.reference_text(2),
        ElementReferences.reference_text(3),
        ElementReferences.name_text("Say hi"),  # whitespace collapsed as in the prompt
    ]
    for element, text in zip(screen.elements, texts, strict=True):
        assert text is not None and references.parse(text, screen) == Action.tap(
            *tap_point(element)
        )
    # The index form parses in name mode too, and a name in index mode.
    assert references.parse(ElementReferences.reference_text(4), screen) == Action.tap(
        *tap_point(screen.elements[4])
    )
    by_index = ElementReferences(limit=50)
    assert by_index.canonical_text(Action.tap(*tap_point(screen.elements[0])), screen) == (
        ElementReferences.reference_text(0)
    )
    assert by_index.parse(ElementReferences.name_text("OK"), screen) == Action.tap(
        *tap_point(screen.elements[0])
    )


def test_elements_with_one_centre_are_tapped_as_the_first_and_screens_never_mix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A tap on a centre two elements share (a row and its label) is written as the first of
    them; the texts are kept per element list, and a full store is emptied, not consulted
    wrongly: the same tap on two screens that differ in one label gets each screen's text."""
    monkeypatch.setattr(elements_module, "TAP_TEXT_CACHE_SIZE", 2)
    row = UIElement("", (0.2, 0.0, 0.3, 1.0), True, "row", kind="row")
    label = UIElement("Alarms", (0.2, 0.0, 0.3, 1.0), False, "label")
    other = UIElement("Timer", (0.5, 0.0, 0.6, 1.0), True, "timer", kind="button")
    references = ElementReferences(limit=50, form="name")
    screen = Observation(NO_SCREENSHOT, "Open alarms", (row, label, other))
    assert references.canonical_text(Action.tap(*tap_point(label)), screen) == (
        ElementReferences.reference_text(0)
    )
    for step in range(4):  # more screens than the store holds
        word = f"Timer{step}"
        changed = Observation(
            NO_SCREENSHOT,
            "Open alarms",
            (label, UIElement(word, other.bbox, True, "timer", kind="button")),
        )
        for tapped, expected in ((label, "Alarms"), (changed.elements[1], word)):
            text = references.canonical_text(Action.tap(*tap_point(tapped)), changed)
            assert text == ElementReferences.name_text(expected)
        assert references.canonical_text(Action.tap(*tap_point(other)), screen) == (
            ElementReferences.name_text("Timer")
        )


def test_a_name_no_listed_element_reads_is_an_invalid_action() -> None:
    action = ElementReferences(limit=50, form="name").parse(
        ElementReferences.name_text("Settings"), SCREEN
    )
    assert action is not None and action.action_type is ActionType.INVALID
    assert "no listed element reads 'Settings'" in action.invalid_reason
    beyond = ElementReferences(limit=1, form="name").parse(
        ElementReferences.name_text("Wi-Fi"), SCREEN
    )  # on the screen but not listed
    assert beyond is not None and beyond.action_type is ActionType.INVALID
    with pytest.raises(ValueError, match="form"):
        ElementReferences(limit=5, form="label")  # type: ignore[arg-type]


def test_the_tiny_tokenizer_keeps_words_and_action_fragments_whole() -> None:
    """A word is one and the same token in the instruction, the element list and a reference;
    every action fragment is one token."""
    tokenizer = tiny_tokenizer(0, suite_instructions(), ElementReferences.fragments())

    def pieces(text: str) -> list[str]:
        return [tokenizer.decode([i]) for i in tokenizer.encode(text, add_special_tokens=False)]

    assert pieces("Task: Open Clock")[-1] == " Clock"
    assert pieces("3 button: Clock")[-1] == " Clock"
    assert pieces(ElementReferences.name_text("Uma Reddy"))[1:] == [" Uma", " Reddy"]
    assert pieces('Send Uma Reddy a text that says "good night"')[1:3] == [" Uma", " Reddy"]
    typed = pieces(format_action(Action.type_text("good night")))
    assert typed[1:] == ["good", " night", '"']
    for fragment in action_fragments(ElementReferences.fragments()):
        assert pieces(fragment) == [fragment]
    assert len(pieces(ElementReferences.reference_text(12))) == 3  # the prefix, 1 and 2
    assert pieces("503-555") == ["5", "0", "3", "-", "5", "5", "5"]  # one token a digit


def test_match_marks_end_the_lines_of_elements_the_instruction_names() -> None:
    """policy.vlm.element_match_marks: the small policy's word-overlap feature as text."""
    from distrl.policies.vlm.elements import MATCH_MARK

    screen = Observation(
        NO_SCREENSHOT,
        "Open the Clock app and turn Wi-Fi off",
        (
            UIElement("Clock", (0.0, 0.0, 0.2, 0.1), True, "clock", kind="icon"),
            UIElement("Alarm clock settings", (0.0, 0.2, 0.2, 0.3), True, "alarm"),
            UIElement("Wi-Fi", (0.1, 0.4, 0.9, 0.5), True, "wifi", kind="toggle", checked=True),
            UIElement("", (0.1, 0.6, 0.9, 0.7), True, "blank"),
            UIElement("Open Clock settings now", (0.1, 0.8, 0.9, 0.9), True, "two-of-four"),
        ),
    )
    lines = ElementReferences(limit=50, mark_matches=True).prompt_lines(screen)
    assert lines[1:] == [
        f"0 icon: Clock{MATCH_MARK}",
        "1 text: Alarm clock settings",  # 1 word of 3
        f"2 toggle: Wi-Fi (on){MATCH_MARK}",
        "3 text: ",  # no words: never named
        f"4 text: Open Clock settings now{MATCH_MARK}",  # half
    ]
    assert MATCH_MARK not in "".join(ElementReferences(limit=50).prompt_lines(screen))
    # The tiny tokenizer keeps the mark one token when the policy asks for it.
    config = VLMPolicyConfig(
        tiny=True, element_list=True, element_match_marks=True, max_new_tokens=16
    )
    policy = VLMPolicy(config, suite_instructions())
    tokenizer = policy.prompts.tokenizer
    pieces = tokenizer(f"3 icon: Clock{MATCH_MARK}", add_special_tokens=False)["input_ids"]
    assert tokenizer.decode(pieces[-1:]) == MATCH_MARK
    assert MATCH_MARK in policy.prompts.chat(screen)


def test_match_marks_need_the_element_list() -> None:
    from distrl.config.loader import ConfigError, load_config

    with pytest.raises(ConfigError, match="element_match_marks=true needs"):
        load_config(
            None, ["policy.kind=vlm", "policy.vlm.tiny=true", "policy.vlm.element_match_marks=true"]
        )
