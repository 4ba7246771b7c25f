"""Subword token vectors of the tiny VLM (``policy.vlm.tiny_subword_buckets``): the table is
each token's own vector plus the mean of its n-grams' vectors, input and output read that one
table, and the extra vectors train, travel and reload with the rest of the weights."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F

from distrl.core.action import Action
from distrl.core.observation import Observation
from distrl.policies.base import load_policy
from distrl.policies.vlm import VLMPolicy
from distrl.policies.vlm.subwords import SubwordEmbedding, _bucket, word_ngrams


def test_word_ngrams_are_the_lower_case_words_letters_between_boundaries() -> None:
    assert word_ngrams(" Notes") == word_ngrams("notes")
    grams = word_ngrams("note")
    assert grams == ["<no", "not", "ote", "te>", "<not", "note", "ote>", "<note", "note>"]
    assert set(grams) & set(word_ngrams(" Notes")) >= {"<no", "not", "ote", "<not", "note"}
    # Placeholders, digits, marks and action fragments keep their own vector alone.
    for token in ("Name1", "Text2", " 7", ":", '"TAP_ELEMENT", "name": ', "9:41"):
        assert word_ngrams(token) == []


def test_table_is_own_vector_plus_mean_of_ngram_vectors() -> None:
    words = torch.nn.Embedding(3, 4)
    embedding = SubwordEmbedding(words, [" note", "Name1", " notes"], buckets=16)
    table = embedding.weight
    for row, text in enumerate([" note", "Name1", " notes"]):
        buckets = [_bucket(gram, 16) for gram in dict.fromkeys(word_ngrams(text))]
        grams = (
            embedding.ngrams.weight[buckets].mean(0) if buckets else torch.zeros(4)
        )  # the reference: fastText's sum of the word's parts, averaged
        assert torch.allclose(table[row], words.weight[row] + grams, atol=1e-6)
    ids = torch.tensor([[2, 0, 1]])
    assert torch.allclose(embedding(ids), table[ids])
    # Without gradients the table is kept, and rebuilt once either part changes in place.
    with torch.no_grad():
        kept = embedding.weight
        assert embedding.weight is kept
        embedding.ngrams.weight.add_(1.0)
        assert torch.allclose(embedding.weight[0], kept[0] + 1.0, atol=1e-6)
        words.weight.mul_(0.0)
        assert torch.allclose(embedding.weight[1], torch.zeros(4))  # Name1: its own vector


def test_tiny_vlm_reads_and_writes_through_one_table(
    element_name_vlm: Callable[..., VLMPolicy],
    observations: list[Observation],
    tmp_path: Path,
) -> None:
    policy = element_name_vlm(tiny_subword_buckets=64, name_placeholders=True, lora=False)
    model = policy.model
    embedding = model.get_input_embeddings()
    assert isinstance(embedding, SubwordEmbedding)
    hidden = torch.randn(2, 3, embedding.embedding_dim)
    assert torch.allclose(
        model.get_output_embeddings()(hidden), F.linear(hidden, embedding.weight), atol=1e-6
    )
    state = policy.trainable_state_dict()
    ngrams = [name for name in state if name.endswith("ngrams.weight")]
    assert len(ngrams) == 1 and state[ngrams[0]].shape == (64, embedding.embedding_dim)

    # The n-gram vectors learn: a scored action's loss reaches them.
    actions = [Action.press_back(), Action.press_home()] * (len(observations) // 2)
    policy.score_actions(observations, actions).logprobs.sum().backward()
    assert embedding.ngrams.weight.grad is not None and embedding.ngrams.weight.grad.abs().sum() > 0
    policy.zero_grad()

    # ... and travel: a checkpoint reloads to the same log-probs.
    with torch.no_grad():
        embedding.ngrams.weight.add_(0.05)
    policy.save(tmp_path / "policy.pt")
    loaded = load_policy(tmp_path / "policy.pt")
    assert isinstance(loaded.model.get_input_embeddings(), SubwordEmbedding)
    before = policy.score_actions(observations, actions).logprobs
    after = loaded.score_actions(observations, actions).logprobs
    assert torch.allclose(before, after, atol=1e-5, rtol=0)
