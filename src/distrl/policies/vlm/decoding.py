"""The two ways the VLM policy reads its model: sampling action text, and scoring given text.

An action's log-prob is the sum of its tokens' log-probs under the temperature-scaled
distribution, log softmax(logits / T), end-of-sequence token included (ending the text is a
choice too). :func:`sample` computes it from the logits ``generate`` saw while sampling;
:func:`teacher_force` recomputes it in one forward pass over prompt + tokens, with gradients. The
two agree to float32 rounding because they are the same arithmetic on the same prefix.

Entropy estimate: the sum of the per-token entropies H(pi(. | prompt, y_<t)) along the scored
sequence. Along a sampled sequence its expectation is the entropy of the whole sequence
distribution (chain rule, H(Y) = E[sum_t H(Y_t | Y_<t)]), which has no closed form; it is
differentiable, and ``act`` and ``score_actions`` compute it on the same path.

Sampling is pure temperature sampling: the model's own generation defaults (top-k, top-p,
repetition penalty in a checkpoint's generation_config.json) are overridden, since any of them
would make the sampled distribution differ from the one the log-probs describe.

Admissible texts (:mod:`.admissible`): given one token trie per row, :func:`sample` lets a row
generate only tokens its trie admits and both functions take log-probs and entropies over the
distribution renormalised to those tokens, from the same masked logits.

Per-row sampling (``Choice.row_generators``, an inference service's batches): ``generate`` runs
greedily over scores a logits processor has already decided, each row's next token drawn from
its own generator (:func:`~distrl.policies.base.pick_per_row`), so a row's text depends on its
own seed only, whatever rows share the batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import torch
from transformers import GenerationConfig, LogitsProcessor, LogitsProcessorList

from distrl.policies.base import Choice, pick_per_row
from distrl.policies.vlm.admissible import TokenTrie, admissible_mask

__all__ = ["Decoding", "Sampled", "SequenceScores", "prompt_features", "sample", "teacher_force"]


@dataclass(frozen=True)
class Decoding:
    """What both ways of reading the model share: the sampling temperature the log-probs are
    taken under, the longest action text, the tokenizer's end and padding ids, and whether to
    also return the prompt's pooled features (for a critic head on the model)."""

    temperature: float
    max_new_tokens: int
    eos_token_id: int
    pad_token_id: int
    pool: bool


class SequenceScores(NamedTuple):
    """Per row: summed log-prob and entropy estimate of the scored tokens, and (when asked) the
    mean of the last hidden layer over the prompt's tokens (the critic's features), ``[B, H]``."""

    logprobs: torch.Tensor
    entropies: torch.Tensor
    features: torch.Tensor | None


class Sampled(NamedTuple):
    """What :func:`sample` generated: each row's token ids (end-of-sequence included when the
    model ended the text) and their scores."""

    tokens: list[list[int]]
    scores: SequenceScores


def _cast(inputs: dict[str, Any], dtype: torch.dtype) -> dict[str, Any]:
    """Floating inputs (pixel values) in the model's dtype."""
    return {
        key: value.to(dtype)
        if isinstance(value, torch.Tensor) and value.is_floating_point()
        else value
        for key, value in inputs.items()
    }


def _pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of ``hidden`` ``[B, P, H]`` over the positions where ``mask`` ``[B, P]`` is 1."""
    weights = mask.to(torch.float32).unsqueeze(-1)
    return (hidden.float() * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)


def _token_scores(
    logits: torch.Tensor, tokens: torch.Tensor, temperature: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """log pi(token) and H(pi) of one or more steps (``logits`` ``[..., V]``)."""
    logp = torch.log_softmax(logits.float() / temperature, dim=-1)
    chosen = logp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
    entropy = -(logp.exp() * logp).sum(dim=-1)
    return chosen, entropy


def _admissible_logits(
    logits: torch.Tensor, rows: Sequence[Sequence[int]], tries: Sequence[TokenTrie] | None
) -> torch.Tensor:
    """``logits`` ``[B, A, V]`` with each row's inadmissible tokens masked along its own tokens
    (``rows[b]``; steps past them are left as they are), or unchanged without ``tries``."""
    if tries is None:
        return logits
    mask = torch.zeros_like(logits, dtype=torch.float32)
    for row, (trie, tokens) in enumerate(zip(tries, rows, strict=True)):
        steps = min(len(tokens), logits.shape[1])
        mask[row, :steps] = admissible_mask(trie, tokens[:steps], logits.shape[2], logits.device)
    return logits.float() + mask


def teacher_force(
    model: Any,
    inputs: dict[str, Any],
    targets: Sequence[Sequence[int]],
    decoding: Decoding,
    tries: Sequence[TokenTrie] | None = None,
) -> SequenceScores:
    """Score ``targets[b]`` as the continuation of prompt ``b`` (left-padded ``inputs``), with
    gradients. Targets are appended after the prompt and padded on the right, which is where
    ``generate`` put the tokens it sampled. With ``tries`` each row's distribution is
    renormalised over the tokens its trie admits (:mod:`.admissible`)."""
    input_ids, attention_mask = inputs["input_ids"], inputs["attention_mask"]
    batch, prompt_length = input_ids.shape
    length = max(1, max((len(t) for t in targets), default=1))
    device = input_ids.device
    target_ids = torch.full(
        (batch, length), decoding.pad_token_id, dtype=input_ids.dtype, device=device
    )
    target_mask = torch.zeros((batch, length), dtype=attention_mask.dtype, device=device)
    for row, tokens in enumerate(targets):
        if tokens:
            target_ids[row, : len(tokens)] = torch.tensor(list(tokens), device=device)
            target_mask[row, : len(tokens)] = 1
    model_inputs = _cast(dict(inputs), model.dtype)
    for key, value in inputs.items():  # per-token inputs (e.g. token type ids) grow with the text
        per_token = isinstance(value, torch.Tensor) and value.shape == input_ids.shape
        if per_token and key not in ("input_ids", "attention_mask"):
            model_inputs[key] = torch.cat([value, torch.zeros_like(target_ids)], dim=1)
    model_inputs["input_ids"] = torch.cat([input_ids, target_ids], dim=1)
    model_inputs["attention_mask"] = torch.cat([attention_mask, target_mask], dim=1)
    # Only the logits that predict target tokens (positions P-1 .. P+A-2) are computed.
    out = model(**model_inputs, output_hidden_states=decoding.pool, logits_to_keep=length + 1)
    logits = _admissible_logits(out.logits[:, :length], targets, tries)
    chosen, entropy = _token_scores(logits, target_ids, decoding.temperature)
    weights = target_mask.to(chosen.dtype)
    features = (
        _pool(out.hidden_states[-1][:, :prompt_length], attention_mask) if decoding.pool else None
    )
    return SequenceScores((chosen * weights).sum(dim=1), (entropy * weights).sum(dim=1), features)


def prompt_features(model: Any, inputs: dict[str, Any]) -> torch.Tensor:
    """Mean last-layer features over the prompt tokens, ``[B, H]`` (differentiable)."""
    out = model(**_cast(inputs, model.dtype), output_hidden_states=True, logits_to_keep=1)
    return _pool(out.hidden_states[-1], inputs["attention_mask"])


def _generation_config(decoding: Decoding, greedy: bool) -> GenerationConfig:
    sampling: dict[str, Any] = {"do_sample": False}
    if not greedy:
        sampling = {
            "do_sample": True,
            "temperature": decoding.temperature,
            "top_k": 0,
            "top_p": 1.0,
        }
    return GenerationConfig(
        **sampling,
        max_new_tokens=decoding.max_new_tokens,
        repetition_penalty=1.0,
        eos_token_id=decoding.eos_token_id,
        pad_token_id=decoding.pad_token_id,
        output_logits=True,
        output_hidden_states=decoding.pool,
        return_dict_in_generate=True,
    )


class _RowSampler(LogitsProcessor):
    """Draws each row's next token from its own generator at the sampling temperature and
    leaves only that token possible, so greedy decoding emits it. ``output_logits`` still
    returns the model's raw logits, from which :func:`sample` scores the tokens."""

    def __init__(self, generators: Sequence[torch.Generator], temperature: float):
        self.generators = generators
        self.temperature = temperature

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        logp = torch.log_softmax(scores.float() / self.temperature, dim=-1)
        picks = pick_per_row(logp, self.generators)
        decided = torch.full_like(scores, float("-inf"))
        decided[torch.arange(scores.shape[0], device=scores.device), picks] = 0.0
        return decided


class _AdmissibleOnly(LogitsProcessor):
    """Leaves each row only the tokens that continue one of its admissible texts (a row whose
    text has ended, or left its trie, is left as it is: ``generate`` pads it)."""

    def __init__(self, tries: Sequence[TokenTrie], prompt_length: int):
        self.tries = tries
        self.prompt_length = prompt_length

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        # A new tensor: ``generate`` hands back the very tensor it passed in as the raw logits.
        kept = scores.clone()
        for row, trie in enumerate(self.tries):
            allowed = trie.allowed(input_ids[row, self.prompt_length :].tolist())
            if allowed:
                kept[row] = float("-inf")
                kept[row, allowed] = scores[row, allowed]
        return kept


@torch.no_grad()
def sample(
    model: Any,
    inputs: dict[str, Any],
    decoding: Decoding,
    choice: Choice,
    tries: Sequence[TokenTrie] | None = None,
) -> Sampled:
    """Generate one action text per prompt (argmax when ``choice.greedy``) and score it; with
    ``tries``, only texts a row's trie holds (:mod:`.admissible`).

    ``generate`` draws from torch's global RNG; it runs under a forked RNG seeded from
    ``choice.generator``, so a call is reproducible given the generator's state and leaves the
    caller's global RNG untouched. With ``choice.row_generators`` each row draws from its own
    generator instead (:class:`_RowSampler`)."""
    per_row = not choice.greedy and choice.row_generators is not None
    config = _generation_config(decoding, choice.greedy or per_row)
    device = inputs["input_ids"].device
    prompt_length = inputs["input_ids"].shape[1]
    processors = LogitsProcessorList()
    if tries is not None:  # first: the row sampler draws from what it leaves
        processors.append(_AdmissibleOnly(tries, prompt_length))
    if per_row:
        assert choice.row_generators is not None
        processors.append(_RowSampler(choice.row_generators, decoding.temperature))
    seed = None
    if choice.generator is not None and not per_row:
        seed = int(torch.randint(0, 2**62, (1,), generator=choice.generator))
    cuda = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=cuda, enabled=seed is not None):
        if seed is not None:
            torch.manual_seed(seed)
        out = model.generate(
            **_cast(inputs, model.dtype), generation_config=config, logits_processor=processors
        )
    generated = out.sequences[:, prompt_length:]
    batch = generated.shape[0]
    # ``output_logits`` are the model's own, before any processor: mask them as act did.
    logits_by_step = _admissible_logits(
        torch.stack(out.logits, dim=1), generated.tolist(), tries
    ).unbind(dim=1)
    logprobs = torch.zeros(batch, device=device)
    entropies = torch.zeros(batch, device=device)
    running = torch.ones(batch, dtype=torch.bool, device=device)
    lengths = torch.zeros(batch, dtype=torch.long, device=device)
    for step, logits in enumerate(logits_by_step):
        tokens = generated[:, step]
        chosen, entropy = _token_scores(logits, tokens, decoding.temperature)
        logprobs += torch.where(running, chosen, 0.0)
        entropies += torch.where(running, entropy, 0.0)
        lengths += running.long()
        running &= tokens != decoding.eos_token_id
    features = None
    if decoding.pool:
        features = _pool(out.hidden_states[0][-1][:, :prompt_length], inputs["attention_mask"])
    rows = [generated[b, : int(lengths[b])].tolist() for b in range(batch)]
    return Sampled(rows, SequenceScores(logprobs, entropies, features))
