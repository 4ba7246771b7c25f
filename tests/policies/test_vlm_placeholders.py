"""``policy.vlm.name_placeholders``: the instruction's names become Name1, Name2, ... in the
model's view of an observation, typed texts get their names back before the device, and acting
and scoring agree on the model's texts."""

from __future__ import annotations

import pytest
import torch

from distrl.config.loader import ConfigError, load_config
from distrl.config.schema import VLMPolicyConfig
from distrl.core.action import Action, ActionType
from distrl.core.observation import NO_SCREENSHOT, Observation, UIElement
from distrl.envs.phonesim.tasks.suites import suite_instructions
from distrl.policies.features import instruction_names
from distrl.policies.vlm import VLMPolicy
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
def policy() -> VLMPolicy:
    torch.set_num_threads(1)
    config = VLMPolicyConfig(
        tiny=True,
        element_list=True,
        element_reference="name",
        admissible_actions=True,
        name_placeholders=True,
        max_new_tokens=24,
    )
    return VLMPolicy(config, suite_instructions())


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
