"""The small CPU policy: a pointer network over the element list with a composite action.

Why this shape. A phone screen is a short list of elements, and almost every useful action is
"do X to one of them" or "type one phrase from the instruction". So instead of predicting pixel
coordinates or spelling text, the policy chooses

* a **kind** among :data:`~distrl.policies.features.ACTION_KINDS` (TAP, SWIPE_UP, SWIPE_DOWN,
  TYPE, PRESS_BACK, PRESS_HOME, PRESS_ENTER, STATUS_TASK_COMPLETE, STATUS_TASK_IMPOSSIBLE),
* for TAP, an **element** (pointer head; the tap lands on the element's bbox centre; tapping the
  status bar is how it waits for a loading page),
* for TYPE, a **candidate** text from :mod:`distrl.policies.candidates` (pointer head).

A kind is offered only where it can act: TAP where an element can be tapped, TYPE where the
instruction offers a candidate and, with ``type_needs_focus``, where an element has the focus.

The composite action's probability factorises, so with k the kind and x its argument

    log pi(a|s) = log p(k|s) + log p(x|k, s)          (no argument term for argument-free kinds)
    H(pi(.|s))  = H(k) + sum_k p(k) H(x|k)            (chain rule of entropy)

which is what both :meth:`SmallPolicy.act` and :meth:`SmallPolicy.score_actions` compute, from the
same tensors, so behaviour and target log-probs agree exactly.

Network: hashed bag-of-words embeddings of the instruction, every element and every candidate,
plus their geometry/flags, go through a small pre-norm transformer encoder over
``[summary token, elements..., candidates...]``; the summary token also carries the last few
action kinds. Heads read the summary (kind, value) and the element/candidate tokens (pointers).
A separate, smaller network gives the trajectory-level value V(instruction, s0) that DigiRL's
curriculum ranks tasks by; it shares nothing with the policy so curriculum regression cannot
disturb the actor.

>>> import numpy as np
>>> from distrl.core.observation import Observation, UIElement
>>> policy = SmallPolicy(SmallPolicyConfig(d_model=32, layers=1, heads=2, hash_buckets=256))
>>> obs = Observation(np.zeros((4, 4, 3), np.uint8), "Open the Clock app",
...                   (UIElement("Clock", (0.1, 0.1, 0.3, 0.2), True, "icon_clock", "icon"),))
>>> out = policy.act([obs], generator=torch.Generator().manual_seed(0))
>>> ev = policy.score_actions([obs], out.actions)
>>> bool(torch.allclose(out.logprobs, ev.logprobs.detach())), bool(ev.representable[0])
(True, True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import torch
from pydantic import Field, model_validator
from torch import nn
from torch.nn import functional as F
from torch.utils.checkpoint import checkpoint

from distrl.config.schema import ConfigSection
from distrl.core.action import Action, ActionType
from distrl.core.observation import Observation
from distrl.policies.base import (
    ActionScores,
    Choice,
    Policy,
    PolicyOutput,
    check_one_action_each,
    read_policy_file,
    register_policy,
    write_policy_file,
)
from distrl.policies.candidates import DEFAULT_MAX_CANDIDATES
from distrl.policies.features import (
    ACTION_KINDS,
    CANDIDATE_FEATURES,
    ELEMENT_FEATURES,
    GLOBAL_FEATURES,
    HISTORY_OTHER,
    HISTORY_PAD,
    WORD_FEATURES,
    ActionKind,
    FeatureBatch,
    ObservationFeatures,
    ObservationFeaturizer,
    collate,
    kind_of_action,
    resolve_tap,
    tap_point,
)
from distrl.policies.length_groups import LengthGroups, length_groups

__all__ = ["ActionTargets", "SmallPolicy", "SmallPolicyConfig", "rank_prior"]

#: Logit of a masked choice: exp() of it is exactly 0 in float32, yet it stays finite, so
#: p * log p is 0 (not NaN) in the entropy.
_MASKED = -1e9


class SmallPolicyConfig(ConfigSection):
    """Shape of the small policy's network and featuriser (all defaults work on PhoneSim)."""

    d_model: int = Field(default=96, ge=8, le=1024, description="Width of every token.")
    heads: int = Field(default=4, ge=1, le=32, description="Attention heads (divide d_model).")
    layers: int = Field(default=2, ge=0, le=8, description="Transformer encoder layers.")
    ff_mult: int = Field(default=2, ge=1, le=8, description="Feed-forward width / d_model.")
    hash_buckets: int = Field(
        default=4096, ge=16, le=1 << 20, description="Hashed text vocabulary (id 0 is padding)."
    )
    max_text_tokens: int = Field(
        default=48, ge=1, le=512, description="Hashed tokens kept per text (words first)."
    )
    text_init_std: float | None = Field(
        default=None,
        ge=0,
        description="Init std of the hashed-text embeddings (None: d_model^-0.5). 0 makes a "
        "token never seen in training contribute nothing, instead of random noise.",
    )
    instruction_words: bool = Field(
        default=True,
        description="Give every instruction word its own encoder token (attention can then pick "
        "out the words that matter and pass over unfamiliar ones).",
    )
    instruction_bag: bool = Field(
        default=True, description="Also add the instruction's mean text embedding to the summary."
    )
    char_trigrams: bool = Field(
        default=True, description="Hash each word's character trigrams as well as the word."
    )
    kind_buckets: int = Field(default=32, ge=2, le=4096, description="Hashed element kinds.")
    history: int = Field(default=4, ge=0, le=32, description="Previous action kinds seen.")
    max_elements: int = Field(default=128, ge=1, le=4096, description="Elements kept (last).")
    max_candidates: int = Field(
        default=DEFAULT_MAX_CANDIDATES, ge=1, le=1024, description="TYPE candidates kept."
    )
    trajectory_value_dim: int = Field(
        default=32, ge=4, le=512, description="Width of the V(instruction, s0) network."
    )
    swipe_from_y: float = Field(
        default=0.55,
        ge=0.0,
        le=1.0,
        description="SWIPE_UP starts here and SWIPE_DOWN ends here (inside the scroll area even "
        "when the keyboard is up).",
    )
    swipe_to_y: float = Field(
        default=0.25, ge=0.0, le=1.0, description="SWIPE_UP ends here, SWIPE_DOWN starts here."
    )
    swipe_x: float = Field(default=0.5, ge=0.0, le=1.0, description="x of both swipes.")
    init_seed: int = Field(default=0, ge=0, description="Seed of the weight initialisation.")
    candidate_prior: float = Field(
        default=0.0,
        ge=0.0,
        le=10.0,
        description="Zipf prior of the TYPE head: -a*log(1+rank) added to the rank-th "
        "candidate's logit (explore.candidate_prior; docs/design.md §7.12).",
    )
    type_needs_focus: bool = Field(
        default=False,
        description="Offer TYPE only on screens where an element has the input focus "
        "(explore.type_needs_focus; docs/design.md §7.12).",
    )
    focused_type_prior: float = Field(
        default=0.0,
        ge=0.0,
        le=10.0,
        description="Added to the TYPE kind's logit on screens where an element has the focus "
        "(explore.focused_type_prior; docs/design.md §7.12).",
    )
    empty_field_type_prior: float = Field(
        default=0.0,
        ge=0.0,
        le=10.0,
        description="Added to the TYPE kind's logit on screens where the focused element shows "
        "no text yet (explore.empty_field_type_prior; docs/design.md §7.12).",
    )
    recompute_activations: bool = Field(
        default=True,
        description="Keep only each encoder layer's input for the backward pass and recompute "
        "the rest there (policy.small.recompute_activations in a run's config, where the "
        "measured trade-off is stated).",
    )
    score_groups: int = Field(
        default=8,
        ge=1,
        le=64,
        description="The learner scores a batch as up to this many groups of observations of "
        "similar token count (policy.small.score_groups in a run's config, which says why).",
    )
    feature_cache: int = Field(
        default=8192,
        ge=0,
        description="Encoded observations the learner remembers (by content, ~15 KB each) so "
        "replayed steps are not encoded again on every draw; 0 turns the cache off.",
    )

    @model_validator(mode="after")
    def _check_shapes(self) -> SmallPolicyConfig:
        if self.d_model % self.heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by heads ({self.heads})")
        if self.swipe_from_y - self.swipe_to_y <= 0.05:
            raise ValueError(
                "swipe_from_y must exceed swipe_to_y by more than 0.05 (a shorter drag is a tap)"
            )
        return self


class ActionTargets(NamedTuple):
    """Actions in the policy's composite space, ``[B]`` each: the kind, the element (TAP) and
    candidate (TYPE) indices (0 where unused) and whether the action is representable at all."""

    kinds: torch.Tensor
    elements: torch.Tensor
    candidates: torch.Tensor
    representable: torch.Tensor


class _Heads(NamedTuple):
    kind_logp: torch.Tensor  # [B, K]
    element_logp: torch.Tensor  # [B, E]
    candidate_logp: torch.Tensor  # [B, C]
    entropies: torch.Tensor  # [B]
    values: torch.Tensor  # [B]
    #: Each head's own entropy, detached; NaN where the head has nothing to choose from.
    head_entropies: dict[str, torch.Tensor]


class _TextBag(nn.Module):
    """Mean of hashed-token embeddings; padding (id 0) is excluded from sum and count."""

    def __init__(self, buckets: int, dim: int, init_std: float | None = None):
        super().__init__()
        self.bag = nn.EmbeddingBag(buckets, dim, mode="sum", padding_idx=0)
        nn.init.normal_(self.bag.weight, std=dim**-0.5 if init_std is None else init_std)
        with torch.no_grad():
            self.bag.weight[0].zero_()

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        shape = tokens.shape[:-1]
        flat = tokens.reshape(-1, tokens.shape[-1])
        summed = self.bag(flat)
        count = (flat != 0).sum(dim=1, keepdim=True).clamp(min=1).to(summed.dtype)
        return (summed / count).reshape(*shape, -1)


class _EncoderBlock(nn.Module):
    """Pre-norm self-attention + feed-forward, written out so that the same arithmetic runs in
    ``act`` (no grad) and ``score_actions`` (grad): PyTorch's fused inference path for
    ``nn.TransformerEncoderLayer`` would round differently and bias the importance ratios.
    Attention itself is ``scaled_dot_product_attention``, whose fused CPU kernel makes a learner
    update about 1.6x faster than softmax over explicit score matrices (measured on 2 cores)."""

    def __init__(self, dim: int, heads: int, ff: int):
        super().__init__()
        self.heads = heads
        self.norm_attn = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm_ff = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, ff), nn.GELU(), nn.Linear(ff, dim))

    def forward(self, x: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
        """``key_mask`` [B, S] marks real tokens; every row has one (the summary token), so no
        query attends to nothing."""
        batch, length, dim = x.shape
        qkv = self.qkv(self.norm_attn(x)).view(batch, length, 3, self.heads, dim // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)  # each [B, H, S, Dh]
        attended = F.scaled_dot_product_attention(q, k, v, attn_mask=key_mask[:, None, None, :])
        x = x + self.proj(attended.transpose(1, 2).reshape(batch, length, dim))
        return x + self.ff(self.norm_ff(x))


#: The fewest observations a learner's length group holds: smaller groups cost more in per-call
#: overhead than their padding saves.
_MIN_GROUP = 32


def _token_count(item: ObservationFeatures) -> int:
    """Tokens an observation puts through the encoder: summary, elements, candidates, words."""
    return 1 + len(item.elements) + len(item.candidates) + int(item.word_tokens.shape[0])


class _LengthGroups(NamedTuple):
    """A batch cut into groups of similar token count (see ``SmallPolicy._length_groups``)."""

    #: Each group: the caller's row indices and their features, collated alone.
    batches: list[tuple[list[int], FeatureBatch]]
    #: How the groups' results go back into the caller's order.
    cut: LengthGroups

    def join(self, parts: Sequence[torch.Tensor]) -> torch.Tensor:
        """The groups' ``[B_g]`` results as one ``[B]`` tensor in the caller's order."""
        return self.cut.join(parts)


def _mlp(dim_in: int, hidden: int, dim_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(dim_in, hidden), nn.GELU(), nn.Linear(hidden, dim_out))


def _masked_log_softmax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return logits.masked_fill(~mask, _MASKED).log_softmax(dim=-1)


def rank_prior(count: int, strength: float, device: torch.device | None = None) -> torch.Tensor:
    """``-strength * log(1 + rank)`` for ranks ``0..count-1``: added to logits, a uniform head
    becomes Zipf's law p(rank) ~ (1 + rank)^-strength. The candidate extractor lists first the
    spans people type verbatim (quoted text, times, numbers), so this prior makes them likely
    before any reward says so, while every candidate keeps a non-zero probability and learning
    can still move the logits anywhere (docs/design.md §7.12).

    >>> [round(float(x), 4) for x in rank_prior(3, 2.0)]
    [-0.0, -1.3863, -2.1972]
    """
    return -strength * torch.log1p(torch.arange(count, dtype=torch.float32, device=device))


def _entropy(logp: torch.Tensor) -> torch.Tensor:
    return -(logp.exp() * logp).sum(dim=-1)


@register_policy("small")
class SmallPolicy(Policy):
    """The small composite-action policy with step critic V(s) and trajectory value.

    A :class:`~distrl.policies.base.Policy`. ``version`` starts at 0; the learner
    increments it when it publishes weights, and it is saved with them.
    """

    #: It reads the element list, never the pixels: learners may drop screenshots from replay.
    uses_screenshots = False

    def __init__(self, config: SmallPolicyConfig | None = None):
        super().__init__()
        self.config = config if config is not None else SmallPolicyConfig()
        self.version = 0
        cfg = self.config
        self.featurizer = ObservationFeaturizer(
            hash_buckets=cfg.hash_buckets,
            max_text_tokens=cfg.max_text_tokens,
            kind_buckets=cfg.kind_buckets,
            history=cfg.history,
            max_elements=cfg.max_elements,
            max_candidates=cfg.max_candidates,
            char_trigrams=cfg.char_trigrams,
            cache_size=cfg.feature_cache,
        )
        dim = cfg.d_model
        # Weight initialisation is part of the config (init_seed), not of the caller's global
        # RNG, so two workers building the same config hold the same weights before any sync.
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(cfg.init_seed)
            self.text = _TextBag(cfg.hash_buckets, dim, cfg.text_init_std)
            self.element_kind = nn.Embedding(cfg.kind_buckets, dim)
            self.element_proj = nn.Linear(ELEMENT_FEATURES, dim)
            self.candidate_proj = nn.Linear(CANDIDATE_FEATURES, dim)
            self.global_proj = nn.Linear(GLOBAL_FEATURES, dim)
            # One table per history slot (slot k x kind), so order matters without extra maths.
            self.history_embedding = nn.Embedding(max(cfg.history, 1) * (HISTORY_PAD + 1), dim)
            self.word_proj = nn.Linear(WORD_FEATURES, dim)
            self.token_type = nn.Embedding(4, dim)  # summary, element, candidate, word
            self.blocks = nn.ModuleList(
                _EncoderBlock(dim, cfg.heads, cfg.ff_mult * dim) for _ in range(cfg.layers)
            )
            self.norm = nn.LayerNorm(dim)
            self.kind_head = _mlp(dim, dim, len(ACTION_KINDS))
            self.element_head = _mlp(dim, dim, 1)
            self.candidate_head = _mlp(dim, dim, 1)
            self.pointer_query = nn.Linear(dim, dim)
            self.pointer_key = nn.Linear(dim, dim)
            self.value_head = _mlp(dim, dim, 1)
            tdim = cfg.trajectory_value_dim
            self.trajectory_text = _TextBag(cfg.hash_buckets, tdim, cfg.text_init_std)
            self.trajectory_head = _mlp(2 * tdim + ELEMENT_FEATURES, tdim, 1)

    # -- features -----------------------------------------------------------------------------
    @property
    def device(self) -> torch.device:
        return self.element_proj.weight.device

    def featurize(
        self, observations: Sequence[Observation], *, remember: bool = False
    ) -> FeatureBatch:
        """Padded features of ``observations``; reusable across many :meth:`score` calls (a
        learner featurises a replay batch once per update, not once per epoch).

        ``remember`` keeps each encoding in the featuriser's cache (``feature_cache``): the
        learner's calls (:meth:`score_actions`, the critics) see replayed steps again and again, an
        actor's observations are new every time and would only fill it."""
        if not observations:
            raise ValueError("featurize needs at least one observation")
        return self.featurizer(observations, self.device, remember=remember)

    def targets(self, batch: FeatureBatch, actions: Sequence[Action]) -> ActionTargets:
        """Map device actions to the composite space of ``batch``'s observations."""
        check_one_action_each(batch.batch_size, len(actions))
        rows = [
            self._target_of(item, action, self.config.type_needs_focus)
            for item, action in zip(batch.items, actions, strict=True)
        ]
        kinds, elements, candidates, representable = zip(*rows, strict=True)
        device = self.device
        return ActionTargets(
            kinds=torch.tensor(kinds, dtype=torch.long, device=device),
            elements=torch.tensor(elements, dtype=torch.long, device=device),
            candidates=torch.tensor(candidates, dtype=torch.long, device=device),
            representable=torch.tensor(representable, dtype=torch.bool, device=device),
        )

    @staticmethod
    def _target_of(
        item: ObservationFeatures, action: Action, type_needs_focus: bool
    ) -> tuple[int, int, int, bool]:
        kind = kind_of_action(action)
        if kind == HISTORY_OTHER:
            return (0, 0, 0, False)  # INVALID, or a horizontal swipe
        if kind == ActionKind.TAP:
            index = resolve_tap(item.elements, *action.touch_yx)
            if index is None or not item.tap_targets[index]:
                return (0, 0, 0, False)  # a tap on nothing listed, or on a covered element
            return (kind, index, 0, True)
        if kind == ActionKind.TYPE:
            if type_needs_focus and not item.has_focus:
                return (0, 0, 0, False)  # typing where nothing has the focus: not offered
            try:
                return (kind, 0, item.candidates.index(action.text), True)
            except ValueError:
                return (0, 0, 0, False)  # text the instruction offers no candidate for
        return (kind, 0, 0, True)

    # -- network -------------------------------------------------------------------------------
    def _heads(self, batch: FeatureBatch) -> _Heads:
        cfg = self.config
        n_elements = batch.element_tokens.shape[1]
        n_words = batch.word_tokens.shape[1] if cfg.instruction_words else 0
        types = self.token_type.weight
        history_slots = batch.history.shape[1]
        if history_slots:
            offsets = torch.arange(history_slots, device=self.device) * (HISTORY_PAD + 1)
            history = self.history_embedding(batch.history + offsets).sum(dim=1)
        else:
            history = 0.0
        summary = self.global_proj(batch.global_features) + history + types[0]
        if cfg.instruction_bag:
            summary = summary + self.text(batch.instruction_tokens)
        elements = (
            self.text(batch.element_tokens)
            + self.element_kind(batch.element_kinds)
            + self.element_proj(batch.element_features)
            + types[1]
        )
        candidates = (
            self.text(batch.candidate_tokens)
            + self.candidate_proj(batch.candidate_features)
            + types[2]
        )
        parts = [summary[:, None], elements, candidates]
        real = torch.ones_like(batch.element_mask[:, :1])
        masks = [real, batch.element_mask, batch.candidate_mask]
        if n_words:
            words = self.text(batch.word_tokens) + self.word_proj(batch.word_features) + types[3]
            parts.append(words)
            masks.append(batch.word_mask)
        x = torch.cat(parts, dim=1)
        key_mask = torch.cat(masks, dim=1)
        recompute = cfg.recompute_activations and torch.is_grad_enabled()
        for block in self.blocks:
            if recompute:
                x = checkpoint(block, x, key_mask, use_reentrant=False)
            else:
                x = block(x, key_mask)
        x = self.norm(x)
        h_summary, h_elements, h_candidates = (
            x[:, 0],
            x[:, 1 : 1 + n_elements],
            x[:, 1 + n_elements : x.shape[1] - n_words],
        )

        # Pointer logits: a per-item score plus a query-key match with the summary token.
        query = self.pointer_query(h_summary)[:, None, :]
        scale = 1.0 / math.sqrt(h_summary.shape[-1])
        element_logits = self.element_head(h_elements).squeeze(-1) + scale * (
            self.pointer_key(h_elements) * query
        ).sum(-1)
        candidate_logits = self.candidate_head(h_candidates).squeeze(-1) + scale * (
            self.pointer_key(h_candidates) * query
        ).sum(-1)
        if cfg.candidate_prior:
            candidate_logits = candidate_logits + rank_prior(
                candidate_logits.shape[1], cfg.candidate_prior, candidate_logits.device
            )

        element_logp = _masked_log_softmax(element_logits, batch.tap_targets)
        candidate_logp = _masked_log_softmax(candidate_logits, batch.candidate_mask)
        kind_mask = torch.ones(
            batch.batch_size, len(ACTION_KINDS), dtype=torch.bool, device=self.device
        )
        kind_mask[:, ActionKind.TAP] = batch.tap_targets.any(dim=1)
        kind_mask[:, ActionKind.TYPE] = batch.candidate_mask.any(dim=1)
        if cfg.type_needs_focus:
            kind_mask[:, ActionKind.TYPE] &= batch.has_focus
        kind_logits = self.kind_head(h_summary)
        if cfg.focused_type_prior or cfg.empty_field_type_prior:
            type_prior = torch.zeros_like(kind_logits)
            type_prior[:, ActionKind.TYPE] = (
                cfg.focused_type_prior * batch.has_focus
                + cfg.empty_field_type_prior * batch.focus_empty
            )
            kind_logits = kind_logits + type_prior
        kind_logp = _masked_log_softmax(kind_logits, kind_mask)

        # H(pi) = H(k) + p(TAP) H(element | TAP) + p(TYPE) H(candidate | TYPE)
        kind_p = kind_logp.exp()
        kind_entropy = _entropy(kind_logp)
        element_entropy = _entropy(element_logp)
        candidate_entropy = _entropy(candidate_logp)
        entropies = (
            kind_entropy
            + kind_p[:, ActionKind.TAP] * element_entropy
            + kind_p[:, ActionKind.TYPE] * candidate_entropy
        )
        values = self.value_head(h_summary).squeeze(-1)
        nan = kind_entropy.new_tensor(float("nan"))
        head_entropies = {
            "kind": kind_entropy.detach(),
            "tap_element": torch.where(kind_mask[:, ActionKind.TAP], element_entropy, nan).detach(),
            "type_text": torch.where(
                kind_mask[:, ActionKind.TYPE], candidate_entropy, nan
            ).detach(),
        }
        return _Heads(kind_logp, element_logp, candidate_logp, entropies, values, head_entropies)

    @staticmethod
    def _logprobs(heads: _Heads, targets: ActionTargets) -> torch.Tensor:
        """log pi(a|s) = log p(k) + [k = TAP] log p(element) + [k = TYPE] log p(candidate);
        0 where the action is not representable."""
        zero = heads.kind_logp.new_zeros(())
        kinds = targets.kinds
        logp = heads.kind_logp.gather(1, kinds[:, None]).squeeze(1)
        element = heads.element_logp.gather(1, targets.elements[:, None]).squeeze(1)
        candidate = heads.candidate_logp.gather(1, targets.candidates[:, None]).squeeze(1)
        logp = logp + torch.where(kinds == ActionKind.TAP, element, zero)
        logp = logp + torch.where(kinds == ActionKind.TYPE, candidate, zero)
        return torch.where(targets.representable, logp, zero)

    def score(self, batch: FeatureBatch, targets: ActionTargets) -> ActionScores:
        """:meth:`score_actions` on pre-computed features and targets (differentiable)."""
        heads = self._heads(batch)
        return ActionScores(
            logprobs=self._logprobs(heads, targets),
            entropies=heads.entropies,
            values=heads.values,
            representable=targets.representable,
            head_entropies=heads.head_entropies,
        )

    # -- Policy --------------------------------------------------------------------------------
    def score_actions(
        self, observations: Sequence[Observation], actions: Sequence[Action]
    ) -> ActionScores:
        check_one_action_each(len(observations), len(actions))
        groups = self._length_groups(observations)
        parts = [
            self.score(batch, self.targets(batch, [actions[i] for i in rows]))
            for rows, batch in groups.batches
        ]
        return ActionScores(
            logprobs=groups.join([p.logprobs for p in parts]),
            entropies=groups.join([p.entropies for p in parts]),
            values=groups.join([p.values for p in parts]),
            representable=groups.join([p.representable for p in parts]),
            head_entropies={
                head: groups.join([p.head_entropies[head] for p in parts])
                for head in parts[0].head_entropies
            },
        )

    def _length_groups(self, observations: Sequence[Observation]) -> _LengthGroups:
        """The learner's observations as groups of similar token count, each collated alone.

        Why: a batch is padded to its longest observation, and on PhoneSim a replay batch's
        longest is about twice its mean (109 against 53 tokens), so one padded batch spent half
        the encoder's linear work and three quarters of its attention on padding. Sorted by
        length and cut into ``score_groups`` groups of at least 32, each group pads only to its
        own longest. Padding never changes a row's result (masked keys get zero weight), so the
        scores are those of one batch, in the caller's order (:mod:`.length_groups`)."""
        if not observations:
            raise ValueError("featurize needs at least one observation")
        items = [self.featurizer.encode_cached(obs) for obs in observations]
        cut = length_groups(
            [_token_count(item) for item in items],
            self.config.score_groups,
            _MIN_GROUP,
            self.device,
        )
        batches = [(rows, collate([items[i] for i in rows], self.device)) for rows in cut.rows]
        return _LengthGroups(batches, cut)

    def _act(self, observations: Sequence[Observation], choice: Choice) -> PolicyOutput:
        batch = self.featurize(observations)
        heads = self._heads(batch)
        # Every head is chosen for every row (only the kind's argument is used), so a sampling
        # generator advances the same way whatever kinds come up: reproducible batches.
        kinds = choice.pick(heads.kind_logp)
        elements = choice.pick(heads.element_logp)
        candidates = choice.pick(heads.candidate_logp)
        actions = [
            self._action_of(item, int(k), int(e), int(c))
            for item, k, e, c in zip(batch.items, kinds, elements, candidates, strict=True)
        ]
        targets = ActionTargets(
            kinds=kinds,
            elements=elements,
            candidates=candidates,
            representable=torch.ones_like(kinds, dtype=torch.bool),
        )
        return PolicyOutput(
            actions=actions,
            logprobs=self._logprobs(heads, targets),
            entropies=heads.entropies,
            values=heads.values,
        )

    def _action_of(
        self, item: ObservationFeatures, kind: int, element: int, candidate: int
    ) -> Action:
        cfg = self.config
        if kind == ActionKind.TAP:
            return Action.tap(*tap_point(item.elements[element]))
        if kind == ActionKind.SWIPE_UP:  # finger moves up: content scrolls to what is below
            return Action.swipe((cfg.swipe_from_y, cfg.swipe_x), (cfg.swipe_to_y, cfg.swipe_x))
        if kind == ActionKind.SWIPE_DOWN:
            return Action.swipe((cfg.swipe_to_y, cfg.swipe_x), (cfg.swipe_from_y, cfg.swipe_x))
        if kind == ActionKind.TYPE:
            return Action.type_text(item.candidates[candidate])
        return Action(ActionType(ACTION_KINDS[kind]))

    # -- critics -------------------------------------------------------------------------------
    def value(self, observations: Sequence[Observation]) -> torch.Tensor:
        """Step critic V(s), ``[B]``, differentiable."""
        groups = self._length_groups(observations)
        return groups.join([self._heads(batch).values for _, batch in groups.batches])

    def trajectory_value(self, first_observations: Sequence[Observation]) -> torch.Tensor:
        """Trajectory-level value V(instruction, s0), ``[B]``, differentiable: the expected
        success of a whole episode from its first observation, by which DigiRL's curriculum
        ranks tasks (keep the top fraction by R - V). A separate small network from the
        instruction's text, the mean text of s0's elements and their mean geometry/flags; it
        returns an unbounded score, so train it with a logistic or squared loss as the
        algorithm prefers."""
        batch = self.featurize(first_observations, remember=True)
        mask = batch.element_mask[..., None].to(batch.element_features.dtype)
        count = mask.sum(dim=1).clamp(min=1.0)
        element_text = (self.trajectory_text(batch.element_tokens) * mask).sum(dim=1) / count
        element_features = (batch.element_features * mask).sum(dim=1) / count
        inputs = torch.cat(
            [self.trajectory_text(batch.instruction_tokens), element_text, element_features], dim=1
        )
        return self.trajectory_head(inputs).squeeze(-1)

    # -- persistence ---------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        """One file: format tag, policy kind, config, weights version and weights."""
        write_policy_file(self, path, self.state_dict())

    @classmethod
    def load(cls, path: str | Path) -> SmallPolicy:
        data = read_policy_file(cls, path)
        policy = cls(SmallPolicyConfig(**data["config"]))
        policy.load_state_dict(data["state_dict"])
        policy.version = int(data.get("version", 0))
        return policy

    def extra_repr(self) -> str:
        parameters = sum(p.numel() for p in self.parameters())
        return f"version={self.version}, parameters={parameters}"
