"""Unseen instruction words read as the unknown word (``policy.vlm.mask_unseen_words``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from distrl.core.action import Action, ActionType
from distrl.core.observation import NO_SCREENSHOT, Observation, UIElement
from distrl.policies.unseen_words import UNKNOWN_WORD, UnseenWords
from distrl.policies.vlm import VLMPolicy
from distrl.policies.vlm.admissible import admissible_actions

KNOWN = ["Take a note: buy milk", "Open the Clock app", "Text Name1 that you are late"]
NOTE_FIELD = UIElement("Note", (0.0, 0.2, 1.0, 0.3), True, "field", kind="input")


def _note(instruction: str) -> Observation:
    return Observation(NO_SCREENSHOT, instruction, (NOTE_FIELD,))


def test_only_prose_words_outside_the_known_texts_and_the_screen_are_masked() -> None:
    unseen = UnseenWords(KNOWN, ["Name1"])
    assert unseen.mask("Scribble a note: buy eggs") == "<unk> a note: buy <unk>"
    # Case as the tokenizer holds it: "clock" is not "Clock".
    assert unseen.mask("open the clock app") == "<unk> the <unk> app"
    # Placeholders (extra words), quoted texts, numbers, times, addresses and words with a sign
    # inside stay; so does the unknown word itself, and a word the screen shows.
    kept = 'Text Name1 "see you soon" by 5:30pm via maps.com or Wi-Fi <unk>'
    masked = 'Text Name1 "see you soon" <unk> 5:30pm <unk> maps.com <unk> Wi-Fi <unk>'
    assert unseen.mask(kept) == masked
    assert unseen.mask("Scribble the Note", screen_words={"Note"}) == "<unk> the Note"
    # Edge punctuation and apostrophes stay around a masked word.
    assert unseen.mask("(Scribble) what's up?") == "(<unk>) <unk>'<unk> <unk>?"
    with pytest.raises(ValueError, match="tokenizer texts"):
        UnseenWords([])


def test_the_observation_keeps_the_words_its_screen_shows() -> None:
    unseen = UnseenWords(KNOWN)
    seen = unseen.observation(_note("Scribble a Note: buy eggs"))
    assert seen.instruction == "<unk> a Note: buy <unk>"
    assert seen.elements == (NOTE_FIELD,)
    same = _note("Take a note: buy milk")
    assert unseen.observation(same) is same


@pytest.fixture(scope="module")
def policy(element_name_vlm: Callable[..., VLMPolicy]) -> VLMPolicy:
    return element_name_vlm(name_placeholders=True, text_placeholders=True, mask_unseen_words=True)


def test_the_model_reads_every_unseen_word_as_the_one_unknown_token(policy: VLMPolicy) -> None:
    """Two instructions that differ only in words no train instruction holds are the same
    prompt: same token ids (the unknown token where the words were), same scores."""
    scribble = _note('Scribble down "Refill prescription"')
    doodle = _note('Doodle down "Refill prescription"')
    (seen,), _ = policy._seen([scribble])
    assert seen.instruction == '<unk> down "Text1"'
    tokenizer = policy.prompts.tokenizer
    ids = [tokenizer.encode(policy.prompts.chat(o)) for o in policy._seen([scribble, doodle])[0]]
    assert ids[0] == ids[1] and tokenizer.unk_token_id in ids[0]
    typed = Action.type_text("Refill prescription")
    scores = policy.score_actions([scribble, doodle], [typed, typed])
    assert scores.logprobs[0] == scores.logprobs[1]
    # A known word is read as itself: the prompt differs.
    (write,), _ = policy._seen([_note('Write down "Refill prescription"')])
    assert "Write" in write.instruction


def test_a_masked_word_is_never_typed_and_act_agrees_with_score(policy: VLMPolicy) -> None:
    search = _note("Look up the meaning of quixotic")
    (seen,), _ = policy._seen([search])
    assert seen.instruction == "Look up the meaning of <unk>"
    texts = [a.text for a in admissible_actions(seen, 8) if a.action_type is ActionType.TYPE]
    assert texts and not any(UNKNOWN_WORD in t for t in texts)
    observations = [search] * 48
    out = policy.act(observations, generator=torch.Generator().manual_seed(0))
    typed = [a.text for a in out.actions if a.action_type is ActionType.TYPE]
    assert typed and not any(UNKNOWN_WORD in t for t in typed)
    scores = policy.score_actions(observations, out.actions)
    assert torch.allclose(out.logprobs, scores.logprobs.detach(), atol=1e-4, rtol=0)
