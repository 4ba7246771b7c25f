"""``policy.vlm.name_placeholders``: the instruction's names become Name1, Name2, ... in the
model's view of an observation, typed texts get their names back before the device, and acting
and scoring agree on the model's texts."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from distrl.config.loader import ConfigError, load_config
from distrl.config.schema import VLMPolicyConfig
from distrl.core.action import Action, ActionType
from distrl.core.observation import NO_SCREENSHOT, Observation, UIElement
from distrl.envs.phonesim.tasks.suites import suite_instructions
from distrl.policies.features import instruction_names
from distrl.policies.vlm import VLMPolicy
from distrl.policies.vlm.admissible import admissible_actions
from distrl.policies.vlm.placeholders import MAX_PLACEHOLDERS, Placeholders
from distrl.policies.vlm.prompt import prompt_text

CONTACTS = Observation(
    NO_SCREENSHOT,
    "Text Olivia Baker: see you at Kai's",
    (
        UIElement("Contacts", (0.0, 0.0, 1.0, 0.1), False, "title"),
        UIElement("Olivia Baker", (0.0, 0.2, 1.0, 0.3), True, "c1", kind="item"),
        UIElement("Olivia Bakery", (0.0, 0.3, 1.0, 0.4), True, "c2", kind="item"),
        UIElement("Kai", (0.0, 0.4, 1.0, 0.5), True, "c3", kind="item", checked=False),
    ),
)


@pytest.mark.parametrize(
    ("instruction", "names"),
    [
        ("Open the Clock app", ("Clock",)),
        ("Store Olivia Baker's number", ("Olivia Baker",)),
        ("Text Ana: the door code is 4512", ("Ana",)),
        ("Turn on Wi-Fi, then call Kai and Jo. Then call Kai", ("Wi-Fi", "Kai", "Jo")),
        ("search for running shoes", ()),
    ],
)
def test_names_are_runs_of_capitalised_words_where_no_sentence_starts(
    instruction: str, names: tuple[str, ...]
) -> None:
    assert instruction_names(instruction) == names


def test_the_model_sees_placeholders_in_the_instruction_and_on_whole_element_words() -> None:
    names = Placeholders.of(CONTACTS.instruction)
    assert names.names == ("Olivia Baker", "Kai")
    seen = names.observation(CONTACTS)
    assert seen.instruction == "Text Name1: see you at Name2's"
    assert [e.text for e in seen.elements] == ["Contacts", "Name1", "Olivia Bakery", "Name2"]
    # Only the texts change: geometry, ids, kinds and states are the screen's.
    for before, after in zip(CONTACTS.elements, seen.elements, strict=True):
        assert (after.bbox, after.resource_id, after.kind, after.checked) == (
            before.bbox,
            before.resource_id,
            before.kind,
            before.checked,
        )
    text = prompt_text(seen, history=0)
    assert "Olivia" not in text.replace("Olivia Bakery", "") and "Name1" in text
    # An instruction without names leaves the observation as it is.
    plain = Observation(NO_SCREENSHOT, "go back", CONTACTS.elements)
    assert Placeholders.of(plain.instruction).observation(plain) is plain


def test_typed_texts_round_trip_and_taps_are_untouched() -> None:
    names = Placeholders.of(CONTACTS.instruction)
    typed = Action.type_text("Olivia Baker, meet Kai")
    hidden = names.hidden_action(typed)
    assert hidden.text == "Name1, meet Name2"
    assert names.shown_action(hidden) == typed
    tap = Action.tap(0.25, 0.5)
    assert names.hidden_action(tap) is tap and names.shown_action(tap) is tap
    # A placeholder that names nothing here (Name3) stays as written.
    assert names.show("Name3 and Name2") == "Name3 and Kai"
    # Names put back that make the text too long to type: an INVALID action with the reason.
    long_name = "Zed" + "z" * 600
    too_long = Placeholders((long_name,)).shown_action(Action.type_text("Name1 " * 3))
    assert too_long.action_type is ActionType.INVALID
    assert "names put back" in too_long.invalid_reason
    # At most MAX_PLACEHOLDERS names are hidden; later ones stay as written.
    many = " ".join(f"and Person{chr(65 + i)}" for i in range(MAX_PLACEHOLDERS + 2))
    assert len(Placeholders.of("Call " + many).names) == MAX_PLACEHOLDERS


@pytest.fixture(scope="module")
def policy(element_name_vlm: Callable[..., VLMPolicy]) -> VLMPolicy:
    return element_name_vlm(name_placeholders=True)


def test_the_policy_types_names_acts_as_it_scores_and_reads_placeholders(
    policy: VLMPolicy,
) -> None:
    """Sampled actions reach the device with the names, never a placeholder; their act
    log-probs are what score_actions gives the device actions; the prompt the model reads has
    the placeholders, each one token."""
    observations = [CONTACTS] * 48
    out = policy.act(observations, generator=torch.Generator().manual_seed(0))
    typed = [a.text for a in out.actions if a.action_type is ActionType.TYPE]
    assert typed, "48 draws among ~40 admissible texts should type at least once"
    assert not any("Name1" in t or "Name2" in t for t in typed)
    assert any("Olivia Baker" in t or "Kai" in t for t in typed)
    scores = policy.score_actions(observations, out.actions)
    assert torch.allclose(out.logprobs, scores.logprobs.detach(), atol=1e-4, rtol=0)
    # A name-form tap on the named contact is written with its placeholder.
    tap = Action.tap(0.25, 0.5)
    (seen,), _ = policy._seen([CONTACTS])
    assert policy.prompts.action_text(tap, seen).endswith('"name": Name1')
    chat = policy.prompts.chat(seen)
    assert "Name1" in chat and "Olivia Baker" not in chat.replace("Olivia Bakery", "")
    tokenizer = policy.prompts.tokenizer
    for text in ("Name1", " Name1", "Text Name2"):
        pieces = [tokenizer.decode([i]) for i in tokenizer.encode(text, add_special_tokens=False)]
        assert pieces[-1].strip() == text.split()[-1]


def test_name_placeholders_need_the_element_list() -> None:
    with pytest.raises(ConfigError, match="name_placeholders=true needs"):
        load_config(
            None, ["policy.kind=vlm", "policy.vlm.tiny=true", "policy.vlm.name_placeholders=true"]
        )


@pytest.mark.parametrize(
    ("instruction", "names", "texts", "seen"),
    [
        (
            'Save a note with the text "Backup laptop photos"',
            (),
            ("Backup laptop photos",),
            'Save a note with the text "Text1"',
        ),
        (
            "Let Emma Johnson know by SMS: I'm outside",
            ("Emma Johnson", "SMS"),
            ("I'm outside",),
            "Let Name1 know by Name2: Text1",
        ),
        ("Take a note: Buy milk", (), ("Buy milk",), "Take a note: Text1"),
        ("Do a web search for 'red shoes'", (), ("red shoes",), "Do a web search for 'Text1'"),
        # A tail holding a name lists fields to fill ("Olivia" opens the tail, so only "Baker"
        # reads as a name): it is no text, and its name stays a name.
        (
            "Create a new contact: Olivia Baker, 555-1234",
            ("Baker",),
            (),
            "Create a new contact: Olivia Name1, 555-1234",
        ),
        # A name seen only inside a dictated text is part of the text; one seen outside too stays
        # a name.
        ('Tell Kai "call Jo" or Kai: see you', ("Kai",), ("call Jo", "see you"), None),
        ('Write "hi Jo" to Jo', ("Jo",), ("hi Jo",), 'Write "Text1" to Name1'),
        ("Open the Clock app", ("Clock",), (), "Open the Name1 app"),
    ],
)
def test_dictated_texts_become_text_placeholders(
    instruction: str, names: tuple[str, ...], texts: tuple[str, ...], seen: str | None
) -> None:
    placeholders = Placeholders.of(instruction, texts=True)
    assert (placeholders.names, placeholders.texts) == (names, texts)
    if seen is not None:
        assert placeholders.hide(instruction) == seen
    # Without texts=True only names are hidden, as before.
    assert Placeholders.of(instruction).texts == ()


def test_typed_texts_and_previous_actions_are_hidden_and_typed_texts_put_back() -> None:
    note = Observation(
        NO_SCREENSHOT,
        'Write "see you at 5" to Olivia Baker in a text message',
        (UIElement("see you at 5", (0.0, 0.8, 1.0, 0.9), True, "field", kind="input"),),
        previous_actions=(Action.type_text("see you at 5"), Action.type_text("Olivia Baker")),
    )
    placeholders = Placeholders.of(note.instruction, texts=True)
    seen = placeholders.observation(note)
    assert seen.instruction == 'Write "Text1" to Name1 in a text message'
    assert [e.text for e in seen.elements] == ["Text1"]
    assert [a.text for a in seen.previous_actions] == ["Text1", "Name1"]
    assert "see you" not in prompt_text(seen, history=2)
    typed = Action.type_text("see you at 5")
    assert placeholders.hidden_action(typed).text == "Text1"
    assert placeholders.shown_action(Action.type_text("Text1")) == typed
    assert placeholders.show("Text1, Name1; Text2") == "see you at 5, Olivia Baker; Text2"


@pytest.mark.parametrize(
    ("switches", "instruction", "field", "value", "placeholder", "spellings", "read"),
    [
        (
            {"text_placeholders": True},
            'Jot down "Refill prescription"',
            "Note",
            "Refill prescription",
            "Text1",
            ("Text1", ' "Text1"'),
            'Jot down "Text1"',
        ),
        (
            {"text_placeholders": True, "site_placeholders": True},
            "Take me to espn.com",
            "Search or type URL",
            "espn.com",
            "Site1",
            ("Site1", " Site1"),
            "Take me to Site1",
        ),
    ],
)
def test_the_policy_types_dictated_texts_and_addresses_as_it_scores_them(
    switches: dict[str, bool],
    instruction: str,
    field: str,
    value: str,
    placeholder: str,
    spellings: tuple[str, ...],
    read: str,
) -> None:
    """With text (site) placeholders the model reads and writes Text1 (Site1), one token, and
    the device gets the text (address); act and score_actions agree on the device's actions."""
    torch.set_num_threads(1)
    policy = VLMPolicy(
        VLMPolicyConfig(
            tiny=True,
            element_list=True,
            element_reference="name",
            admissible_actions=True,
            name_placeholders=True,
            max_new_tokens=24,
            **switches,
        ),
        suite_instructions(),
    )
    screen = Observation(
        NO_SCREENSHOT,
        instruction,
        (UIElement(field, (0.0, 0.2, 1.0, 0.3), True, "field", kind="input"),),
    )
    observations = [screen] * 48
    out = policy.act(observations, generator=torch.Generator().manual_seed(0))
    typed = [a.text for a in out.actions if a.action_type is ActionType.TYPE]
    assert typed and any(value in t for t in typed)
    assert not any(placeholder in t for t in typed)
    scores = policy.score_actions(observations, out.actions)
    assert torch.allclose(out.logprobs, scores.logprobs.detach(), atol=1e-4, rtol=0)
    # The device's text is scored as the placeholder the model writes for it.
    (seen,), _ = policy._seen([screen])
    assert seen.instruction == read
    assert Action.type_text(placeholder) in admissible_actions(seen, 8)
    both = policy.score_actions(
        [screen, screen], [Action.type_text(value), Action.type_text(placeholder)]
    )
    assert both.logprobs[0] == both.logprobs[1]
    assert value not in policy.prompts.chat(seen)
    tokenizer = policy.prompts.tokenizer
    for text in spellings:
        pieces = [tokenizer.decode([i]) for i in tokenizer.encode(text, add_special_tokens=False)]
        assert placeholder in [piece.strip() for piece in pieces]


@pytest.mark.parametrize(
    ("instruction", "names", "texts", "sites", "seen"),
    [
        ("Take me to espn.com", (), (), ("espn.com",), "Take me to Site1"),
        (
            "Open the website espn.com in Chrome",
            ("Chrome",),
            (),
            ("espn.com",),
            "Open the website Site1 in Name1",
        ),
        ("Visit maps.com, then yelp.com.", (), (), ("maps.com", "yelp.com"), None),
        # An address inside a dictated text is part of the text; a quoted address is a text.
        ("Text Kai: check maps.com now", ("Kai",), ("check maps.com now",), (), None),
        ('Go to "espn.com"', (), ("espn.com",), (), 'Go to "Text1"'),
        ("Turn on Wi-Fi", ("Wi-Fi",), (), (), "Turn on Name1"),
    ],
)
def test_web_addresses_become_site_placeholders(
    instruction: str,
    names: tuple[str, ...],
    texts: tuple[str, ...],
    sites: tuple[str, ...],
    seen: str | None,
) -> None:
    placeholders = Placeholders.of(instruction, texts=True, sites=True)
    assert (placeholders.names, placeholders.texts, placeholders.sites) == (names, texts, sites)
    if seen is not None:
        assert placeholders.hide(instruction) == seen
    # Without sites=True addresses stay as written.
    assert Placeholders.of(instruction, texts=True).sites == ()


def test_addresses_are_hidden_on_screen_and_in_history_and_typed_back() -> None:
    browser = Observation(
        NO_SCREENSHOT,
        "Open the website espn.com in Chrome",
        (
            UIElement("https://espn.com/scores", (0.0, 0.0, 1.0, 0.1), True, "url", kind="input"),
            UIElement("espn.community", (0.0, 0.2, 1.0, 0.3), True, "link", kind="item"),
        ),
        previous_actions=(Action.type_text("espn.com"),),
    )
    placeholders = Placeholders.of(browser.instruction, sites=True)
    seen = placeholders.observation(browser)
    assert seen.instruction == "Open the website Site1 in Name1"
    # Whole words only: another address that starts the same is left alone.
    assert [e.text for e in seen.elements] == ["https://Site1/scores", "espn.community"]
    assert [a.text for a in seen.previous_actions] == ["Site1"]
    assert placeholders.shown_action(Action.type_text("Site1")) == Action.type_text("espn.com")
    assert placeholders.show("Site1 or Name1") == "espn.com or Chrome"


@pytest.mark.parametrize("kind", ["text", "site"])
def test_text_and_site_placeholders_need_name_placeholders(kind: str) -> None:
    with pytest.raises(ConfigError, match=f"{kind}_placeholders=true needs"):
        load_config(
            None,
            [
                "policy.kind=vlm",
                "policy.vlm.tiny=true",
                "policy.vlm.element_list=true",
                f"policy.vlm.{kind}_placeholders=true",
            ],
        )
