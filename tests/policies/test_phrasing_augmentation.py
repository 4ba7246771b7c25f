"""Phrasing augmentation: a cloned step's instruction is reworded around the words the step
needs (a name, a number, a quoted text, a word the screen shows or the action writes), which
always survive; nothing else of the step changes; the warm start chains it before the copy swap."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from distrl.algos.bc import behaviour_clone
from distrl.algos.copy_augmentation import CopySwap
from distrl.algos.phrasing_augmentation import EDIT_SHARE, PhrasingEdit, editable_words
from distrl.config.loader import ConfigError, load_config
from distrl.config.schema import VLMPolicyConfig
from distrl.core.action import Action
from distrl.core.observation import NO_SCREENSHOT, Observation, UIElement
from distrl.core.task import Task
from distrl.core.trajectory import Step, Trajectory
from distrl.envs.phonesim.tasks.suites import load_suite, suite_instructions
from distrl.policies.unseen_words import UNKNOWN_WORD
from distrl.policies.vlm import VLMPolicy
from distrl.runtime.warm_start import cloning_augments

MESSAGES = UIElement("Messages", (0.1, 0.1, 0.3, 0.2), True, "app_messages", kind="button")
CLOCK = UIElement("Clock", (0.4, 0.1, 0.6, 0.2), True, "app_clock", kind="button")
SEND = Observation(
    NO_SCREENSHOT,
    'Please send a quick message to Ivan Petrov saying "see you at 5" before noon',
    (MESSAGES, CLOCK),
)
TAP_MESSAGES = Action.tap(*MESSAGES.center_yx)
#: The tokens of SEND's instruction that the step needs: a name, a quoted text.
NEEDED = ["Ivan", "Petrov", '"see you at 5"']
TEMPLATE = ["Please", "send", "a", "quick", "message", "to", "saying", "before", "noon"]
POOL = ["kindly", "now", "phone"]


def _tokens(instruction: str) -> list[str]:
    """Whitespace tokens, a quoted span kept whole."""
    tokens, quoted = [], None
    for token in instruction.split(" "):
        if quoted is not None:
            quoted += " " + token
            if token.endswith('"'):
                tokens.append(quoted)
                quoted = None
        elif token.startswith('"') and not (len(token) > 1 and token.endswith('"')):
            quoted = token
        else:
            tokens.append(token)
    return tokens


def test_the_words_the_step_needs_always_survive_and_only_template_words_change() -> None:
    edit = PhrasingEdit(POOL, rate=1.0)
    reworded = set()
    for seed in range(200):
        observation, action = edit(SEND, TAP_MESSAGES, np.random.default_rng(seed))
        assert action == TAP_MESSAGES
        assert observation.elements == SEND.elements
        assert observation.previous_actions == SEND.previous_actions
        tokens = _tokens(observation.instruction)
        counts = Counter(tokens)
        for token in NEEDED:
            assert counts[token] == 1, observation.instruction
        template = {word.lower() for word in TEMPLATE + POOL}
        template |= {word.capitalize() for word in template}
        assert {t for t in tokens if t not in NEEDED} <= template, observation.instruction
        # Sentence case: only the names are capitalised inside the sentence, whatever moved.
        assert tokens[0][0].isupper() or tokens[0] in NEEDED
        assert [t for t in tokens[1:] if t[0].isupper()] == ["Ivan", "Petrov"]
        reworded.add(observation.instruction)
    assert len(reworded) > 50  # the rewordings vary


def test_names_with_particles_and_addresses_are_kept_whole() -> None:
    search = Observation(NO_SCREENSHOT, "How is the weather in Rio de Janeiro today?", ())
    visit = Observation(NO_SCREENSHOT, "please visit yelp.com and turn on Wi-Fi", ())
    edit = PhrasingEdit(POOL, rate=1.0)
    for seed in range(100):
        rng = np.random.default_rng(seed)
        assert "Rio de Janeiro" in edit(search, TAP_MESSAGES, rng)[0].instruction
        words = edit(visit, TAP_MESSAGES, rng)[0].instruction.split()
        assert "yelp.com" in words and "Wi-Fi" in words


def test_each_reworded_step_gets_one_kind_of_edit() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        swapped = PhrasingEdit(POOL, 1.0, edits=("swap",))(SEND, TAP_MESSAGES, rng)[0]
        words = [sorted(t.lower() for t in _tokens(i.instruction)) for i in (swapped, SEND)]
        assert words[0] == words[1]
        grown = PhrasingEdit(POOL, 1.0, edits=("insert",))(SEND, TAP_MESSAGES, rng)[0]
        inserted = len(_tokens(grown.instruction)) - len(_tokens(SEND.instruction))
        assert inserted == round(EDIT_SHARE * len(TEMPLATE))  # 0.15 of 9 template words: 1
    with pytest.raises(ValueError, match="phrasing edits"):
        PhrasingEdit(POOL, 1.0, edits=("shuffle",))


def test_a_word_on_the_screen_or_written_by_the_action_is_kept() -> None:
    open_clock = Observation(NO_SCREENSHOT, "open the clock app for me", (MESSAGES, CLOCK))
    typed = Action.type_text("wake up")
    alarm = Observation(NO_SCREENSHOT, "set a reminder to wake up early", ())
    for seed in range(100):
        rng = np.random.default_rng(seed)
        assert "clock" in PhrasingEdit([], 1.0)(open_clock, Action.press_back(), rng)[0].instruction
        words = PhrasingEdit([], 1.0)(alarm, typed, rng)[0].instruction.split()
        assert "wake" in words and "up" in words


def test_deletion_takes_the_stated_share_of_template_words() -> None:
    # Deletion alone: a template word missing from the result was deleted. Reference: each of
    # the 9 goes with probability EDIT_SHARE.
    edit = PhrasingEdit([], rate=1.0, edits=("delete",))
    deleted = 0
    draws = 2000
    for seed in range(draws):
        observation, _ = edit(SEND, TAP_MESSAGES, np.random.default_rng(seed))
        deleted += len(TEMPLATE) - sum(
            1 for token in _tokens(observation.instruction) if token in TEMPLATE
        )
    share = deleted / (draws * len(TEMPLATE))
    assert abs(share - EDIT_SHARE) < 0.02, share


def test_the_same_seed_gives_the_same_rewording_and_rate_zero_none() -> None:
    edit = PhrasingEdit(POOL, rate=1.0)
    first = edit(SEND, TAP_MESSAGES, np.random.default_rng(7))
    assert edit(SEND, TAP_MESSAGES, np.random.default_rng(7)) == first
    assert PhrasingEdit(POOL, rate=0.0)(SEND, TAP_MESSAGES, np.random.default_rng(7)) == (
        SEND,
        TAP_MESSAGES,
    )
    only_needed = Observation(NO_SCREENSHOT, '"Hello there"', ())
    assert PhrasingEdit(POOL, rate=1.0)(only_needed, TAP_MESSAGES, np.random.default_rng(0)) == (
        only_needed,
        TAP_MESSAGES,
    )
    with pytest.raises(ValueError, match="phrasing augmentation rate"):
        PhrasingEdit(POOL, rate=-0.1)


def test_the_insertion_pool_is_the_template_words_of_the_instructions() -> None:
    open_clock = Observation(NO_SCREENSHOT, "Open the Clock app", (MESSAGES, CLOCK))
    assert editable_words([(open_clock, Action.tap(*CLOCK.center_yx))]) == ["app", "open", "the"]
    dont = Observation(NO_SCREENSHOT, "I don't need the alarm, turn it off", ())
    assert "don't" in editable_words([(dont, TAP_MESSAGES)])
    assert "alarm" in editable_words([(dont, TAP_MESSAGES)])  # "alarm," without its comma
    pool = editable_words([(SEND, TAP_MESSAGES)])
    assert pool == sorted(word.lower() for word in TEMPLATE)


def test_the_warm_start_rewords_before_it_swaps_copied_words() -> None:
    cfg = load_config(
        "vlm-quick", ["train.bc_phrasing_augmentation=0.5", "train.bc_copy_augmentation=0.25"]
    )
    task = load_suite("general", "train")[0]
    demo = Trajectory(task, [Step(SEND, TAP_MESSAGES, 1.0, True)], success=True)
    augments = cloning_augments(cfg, [demo])
    assert [type(a) for a in augments] == [PhrasingEdit, CopySwap]
    assert augments[0].rate == 0.5 and augments[1].rate == 0.25
    off = load_config("vlm-quick", ["train.bc_phrasing_augmentation=0"])
    assert cloning_augments(off, [demo]) == []


def test_the_vlm_clones_reworded_general_demonstrations(
    run_oracle: Callable[[Task, int], Any],
) -> None:
    torch.set_num_threads(1)
    general = load_suite("general", "train")
    templates = ("toggle_setting", "lookup_contact", "create_note")
    tasks = [next(t for t in general if t.spec.get("template") == name) for name in templates]
    demos = [run_oracle(task, 5) for task in tasks]
    pairs = [(o, a) for d in demos for o, a in zip(d.observations, d.actions, strict=True)]
    edit = PhrasingEdit(editable_words(pairs), rate=1.0)
    rng = np.random.default_rng(0)
    for observation, action in pairs:  # a real step's parameters survive the rewording
        reworded, _ = edit(observation, action, rng)
        for position, token in enumerate(observation.instruction.split()):
            if (position > 0 and token[:1].isupper()) or any(c.isdigit() for c in token):
                assert token in reworded.instruction, (token, reworded.instruction)

    config = VLMPolicyConfig(
        tiny=True, lora=False, element_list=True, element_reference="name", max_new_tokens=16
    )
    policy = VLMPolicy(config, suite_instructions())
    trajectories = [
        Trajectory(
            d.task,
            [Step(o, a, 0.0, False) for o, a in zip(d.observations, d.actions, strict=True)],
            success=True,
        )
        for d in demos
    ]
    losses = behaviour_clone(
        policy,
        trajectories,
        steps=3,
        batch_size=4,
        lr=1e-3,
        seed=0,
        augment=[edit, CopySwap(editable_words(pairs), rate=0.5)],
    )
    assert len(losses) == 3 and all(np.isfinite(losses))


def test_the_mask_edit_replaces_only_template_words_by_the_unknown_word() -> None:
    # Reference: each of the 9 template words is masked with probability EDIT_SHARE, at least
    # one; the needed words (a name, a quoted text) never are, and nothing moves.
    edit = PhrasingEdit(POOL, rate=1.0, edits=("mask",))
    masked = 0
    draws = 2000
    for seed in range(draws):
        observation, action = edit(SEND, TAP_MESSAGES, np.random.default_rng(seed))
        assert action == TAP_MESSAGES
        tokens, original = _tokens(observation.instruction), _tokens(SEND.instruction)
        assert len(tokens) == len(original)
        changed = [(new, old) for new, old in zip(tokens, original, strict=True) if new != old]
        assert changed, observation.instruction
        for new, old in changed:
            assert old in TEMPLATE and new == UNKNOWN_WORD, observation.instruction
        masked += len(changed)
    share = masked / (draws * len(TEMPLATE))
    # At least one a draw lifts the share a little above EDIT_SHARE: P(none) = 0.85^9 = 0.23.
    expected = EDIT_SHARE + (1 - EDIT_SHARE) ** len(TEMPLATE) / len(TEMPLATE)
    assert abs(share - expected) < 0.02, (share, expected)


def test_the_mask_edit_keeps_edge_punctuation_and_is_off_by_default() -> None:
    question = Observation(NO_SCREENSHOT, "can you open my notes?", ())
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(200):
        reworded = PhrasingEdit([], 1.0, edits=("mask",))(question, Action.press_back(), rng)[0]
        seen.add(reworded.instruction)
        assert reworded.instruction.endswith("?")
    assert any(i.endswith(" <unk>?") for i in seen), seen
    for seed in range(200):
        default = PhrasingEdit(POOL, 1.0)(SEND, TAP_MESSAGES, np.random.default_rng(seed))[0]
        assert UNKNOWN_WORD not in default.instruction


def test_the_mask_edit_needs_a_vlm_that_masks_unseen_words() -> None:
    with pytest.raises(ConfigError, match="mask_unseen_words"):
        load_config(None, ["train.phrasing_edits=[delete,mask]"])
    with pytest.raises(ConfigError, match="mask_unseen_words=true needs policy.vlm.tiny"):
        load_config(
            None,
            ["policy.kind=vlm", "policy.vlm.tiny=false", "policy.vlm.path=/nowhere"]
            + ["policy.vlm.mask_unseen_words=true"],
        )
    cfg = load_config(
        None,
        ["policy.kind=vlm", "policy.vlm.tiny=true", "policy.vlm.mask_unseen_words=true"]
        + ["train.phrasing_edits=[delete,swap,insert,mask]"],
    )
    assert cfg.train.phrasing_edits == ["delete", "swap", "insert", "mask"]
