"""Token vectors that share their words' letters (``policy.vlm.tiny_subword_buckets``).

Why: the tiny model's tokenizer makes every word one token (:mod:`.tiny`), so "note" in an
instruction, "notes" in another and the app "Notes" on the home screen are three unrelated random
vectors. A pretrained language model has long learnt that they are one word; a model that learns
from a few hundred demonstrations has to see each pairing in them, and a test instruction that
words a task with a form no train instruction used ("Save a note" where train said "notes",
"in a text message" beside the app "Messages") reads as a word it knows nothing about. In the
``vlm-quick`` runs the cloned policy opened Messages for 40 of 43 ``create_note`` tasks although
the instruction said "note" and the screen listed "Notes" (docs/results.md, "Where
``send_message`` goes").

The remedy is fastText's (Bojanowski et al., 2017, "Enriching Word Vectors with Subword
Information"): a word's vector is its own vector plus the mean of vectors of its character
n-grams (3 to 5 letters of the lower-case word between boundary marks, hashed into a fixed number
of buckets). "note", "notes" and "Notes" then share most of their n-grams, whatever the training
data paired; a word only the test split holds starts from the n-grams it shares with trained
words instead of from noise. Only single-word tokens get n-grams; action fragments, digits, marks
and the Name1/Text1 placeholders keep their own vector alone, so a placeholder stays a symbol.

The output layer is the same table (the tiny model ties its output layer to the embedding), so
writing "Notes" scores the vector that reading "Notes" uses, n-grams included.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["SubwordEmbedding", "SubwordOutput", "add_subword_vectors", "word_ngrams"]

#: The n-gram lengths (fastText's default is 3 to 6; the suites' words are short).
MIN_N, MAX_N = 3, 5
#: A token that is one word (with or without its leading space) gets n-grams.
_WORD_TOKEN = re.compile(r" ?([A-Za-z]+)")


def word_ngrams(token_text: str) -> list[str]:
    """The character n-grams of ``token_text`` when it is one word (lower case, between the
    boundary marks ``<`` and ``>``), else none.

    >>> word_ngrams(" Notes")[:4]
    ['<no', 'not', 'ote', 'tes']
    >>> word_ngrams("Name1"), word_ngrams(" 7")
    ([], [])
    """
    match = _WORD_TOKEN.fullmatch(token_text)
    if match is None:
        return []
    word = f"<{match.group(1).lower()}>"
    return [
        word[start : start + n]
        for n in range(MIN_N, MAX_N + 1)
        for start in range(len(word) - n + 1)
    ]


def _bucket(ngram: str, buckets: int) -> int:
    """A stable bucket for ``ngram`` (the same in every process, unlike ``hash``)."""
    digest = hashlib.blake2b(ngram.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % buckets


class SubwordEmbedding(nn.Module):
    """An embedding whose row for a token is the token's own vector (``words``, the model's
    original embedding, kept as it is) plus the mean of its n-grams' bucket vectors."""

    def __init__(self, words: nn.Embedding, token_texts: Sequence[str], buckets: int):
        super().__init__()
        if buckets <= 0:
            raise ValueError(f"subword buckets must be positive (got {buckets})")
        self.words = words
        dim = words.embedding_dim
        self.ngrams = nn.Embedding(buckets, dim)
        # The scale of the model's own embedding initialisation, so neither part dominates.
        with torch.no_grad():
            nn.init.normal_(self.ngrams.weight, std=float(words.weight.std().clamp(min=1e-3)))
        indices: list[int] = []
        offsets: list[int] = []
        for text in token_texts:
            offsets.append(len(indices))
            indices.extend(_bucket(gram, buckets) for gram in dict.fromkeys(word_ngrams(text)))
        # Rebuilt from the tokenizer in every process: not part of the weights.
        self.register_buffer("_indices", torch.tensor(indices, dtype=torch.long), persistent=False)
        self.register_buffer("_offsets", torch.tensor(offsets, dtype=torch.long), persistent=False)
        self._cached: tuple[tuple[int, ...], torch.Tensor] | None = None

    @property
    def num_embeddings(self) -> int:
        return self.words.num_embeddings

    @property
    def embedding_dim(self) -> int:
        return self.words.embedding_dim

    @property
    def weight(self) -> torch.Tensor:
        """The effective table (vocabulary x width): own vectors plus n-gram means (a token
        without n-grams adds zeros).

        Without gradients (acting, evaluation) the table is kept until either part changes:
        generation reads it twice for every token it writes. A change is seen by the tensors'
        version counters, which every in-place write (an optimiser step, loading weights)
        advances."""
        if torch.is_grad_enabled():
            return self._table()
        key = (
            self.words.weight._version,
            self.ngrams.weight._version,
            self.words.weight.data_ptr(),
            self.ngrams.weight.data_ptr(),
        )
        if self._cached is None or self._cached[0] != key:
            self._cached = (key, self._table())
        return self._cached[1]

    def _table(self) -> torch.Tensor:
        grams = F.embedding_bag(self._indices, self.ngrams.weight, self._offsets, mode="mean")
        return self.words.weight + grams.to(self.words.weight.dtype)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return F.embedding(input_ids, self.weight, self.words.padding_idx)


class SubwordOutput(nn.Module):
    """The output layer tied to a :class:`SubwordEmbedding`: logits are hidden states times its
    effective table."""

    def __init__(self, embedding: SubwordEmbedding):
        super().__init__()
        self.embedding = embedding

    @property
    def weight(self) -> torch.Tensor:
        return self.embedding.weight

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return F.linear(hidden, self.embedding.weight)


def add_subword_vectors(model: nn.Module, token_texts: Sequence[str], buckets: int) -> None:
    """Give ``model`` (a transformers model with tied input and output embeddings) subword
    token vectors: its input embedding becomes a :class:`SubwordEmbedding` over
    ``token_texts`` (the text of each token id, in id order) and its output layer reads the
    same table."""
    words = model.get_input_embeddings()
    if len(token_texts) != words.num_embeddings:
        raise ValueError(
            f"{len(token_texts)} token texts for an embedding of {words.num_embeddings} rows"
        )
    embedding = SubwordEmbedding(words, token_texts, buckets)
    model.set_input_embeddings(embedding)
    model.set_output_embeddings(SubwordOutput(embedding))
