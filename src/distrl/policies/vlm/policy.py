"""The VLM policy: a transformers vision-language model that writes AitW action text.

``act`` builds the prompt (instruction, previous actions, screenshot; :mod:`.prompt`), samples the
action text with temperature (:func:`.decoding.sample`), and hands every generated string to
:func:`~distrl.core.action.parse_action`, which never raises: text that does not parse becomes an
``INVALID`` action that the reward penalises.

What an action's log-prob is. The replay stores actions, not strings, so the learner can only
score an action through its canonical text (:func:`~distrl.core.action.format_action`) followed
by end-of-sequence; the policy's probability of an action is taken to be the probability of that
token sequence. When the model generated exactly the canonical tokens of what it chose (the
normal case once it writes canonical text, e.g. after the behaviour-cloning warm start),
``act`` reports the sum of the generated tokens' log-probs, and ``score_actions`` recomputes that
number by teacher forcing. When it did not (other spacing, an unparsable string, no end token
within ``max_new_tokens``), ``act`` scores the canonical text of what the parser made of it, so
behaviour and target log-probs always describe the same event and the importance ratios stay
unbiased. For the same reason every action is ``representable``: a demonstration's action is
scored by its canonical text like any other.

Entropy is the sum of per-token entropies along the scored sequence (see :mod:`.decoding`).
Only LoRA adapters and the critic train (:mod:`.lora`, :mod:`.critic`); ``state_dict`` is those
tensors only, so checkpoints, the learner's published weights and the workers' copies never hold
the frozen base, which every process builds (tiny) or loads (path) itself.

>>> import numpy as np
>>> from distrl.config.schema import VLMPolicyConfig
>>> from distrl.core.observation import Observation
>>> policy = VLMPolicy(VLMPolicyConfig(tiny=True, max_new_tokens=8))
>>> obs = Observation(np.zeros((64, 32, 3), np.uint8), "Open the Clock app")
>>> out = policy.act([obs], generator=torch.Generator().manual_seed(0))
>>> ev = policy.score_actions([obs], out.actions)
>>> bool(torch.allclose(out.logprobs, ev.logprobs.detach(), atol=1e-4)), bool(ev.representable[0])
(True, True)
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from torch.nn.modules.module import _IncompatibleKeys

from distrl.config.schema import VLMPolicyConfig
from distrl.core.action import Action, parse_action
from distrl.core.observation import Observation
from distrl.policies.base import (
    ActionScores,
    Choice,
    Policy,
    PolicyCheckpointError,
    PolicyOutput,
    check_one_action_each,
    read_policy_file,
    register_policy,
    write_policy_file,
)
from distrl.policies.length_groups import length_groups
from distrl.policies.unseen_words import UNKNOWN_WORD, UnseenWords
from distrl.policies.vlm.admissible import TokenTrie, admissible_actions
from distrl.policies.vlm.backbone import load_backbone, resolve_device
from distrl.policies.vlm.critic import PooledValueHeads, SeparateCritic
from distrl.policies.vlm.decoding import (
    Decoding,
    SequenceScores,
    prompt_features,
    sample,
    teacher_force,
)
from distrl.policies.vlm.elements import ElementReferences
from distrl.policies.vlm.lora import add_lora, state_bytes
from distrl.policies.vlm.placeholders import Placeholders, placeholder_words
from distrl.policies.vlm.prompt import PromptBuilder

__all__ = ["VLMPolicy"]

#: The fewest prompts a length group holds: a forward and backward pass costs milliseconds of call
#: overhead, which smaller groups would not win back (a cloning batch of 16 prompts scored
#: fastest as 4 groups of 4, a learner batch of 27-52 the same in groups of at least 4 or 8).
_MIN_GROUP = 4


@contextlib.contextmanager
def _torch_threads(count: int | None) -> Iterator[None]:
    """Run the block with ``count`` torch threads (``None``: unchanged)."""
    before = torch.get_num_threads()
    if count is None or count == before:
        yield
        return
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


@register_policy("vlm")
class VLMPolicy(Policy):
    """A vision-language model policy with LoRA and a step critic; a
    :class:`~distrl.policies.base.Policy`."""

    #: The model reads the screenshot: replay and workers keep pixels for it.
    uses_screenshots = True

    def __init__(self, config: VLMPolicyConfig | None = None, tokenizer_texts: Sequence[str] = ()):
        super().__init__()
        self.config = config if config is not None else VLMPolicyConfig(tiny=True)
        #: What a tiny model's tokenizer is trained on (saved with the policy: see ``save``).
        self.tokenizer_texts = tuple(tokenizer_texts)
        self.version = 0
        cfg = self.config
        device = resolve_device(cfg)
        elements = (
            ElementReferences(cfg.element_list_max, cfg.element_reference, cfg.element_match_marks)
            if cfg.element_list
            else None
        )
        action_forms = elements.tokenizer_fragments() if elements is not None else []
        if cfg.name_placeholders:  # with and without a space before: one token in prose too
            action_forms += [
                f"{space}{word}"
                for word in placeholder_words(cfg.text_placeholders, cfg.site_placeholders)
                for space in ("", " ")
            ]
        base, processor = load_backbone(cfg, device, self.tokenizer_texts, action_forms)
        #: Masks the instruction words the tokenizer was not trained on (None: off).
        self.unseen_words = (
            UnseenWords(self.tokenizer_texts, placeholder_words(texts=True, sites=True))
            if cfg.mask_unseen_words
            else None
        )
        if self.unseen_words is not None and processor.tokenizer.unk_token != UNKNOWN_WORD:
            raise ValueError(  # the tiny tokenizer's is; a mismatch would mask into letters
                f"mask_unseen_words writes {UNKNOWN_WORD}, but the tokenizer's unknown token "
                f"is {processor.tokenizer.unk_token!r}"
            )
        self.model = add_lora(base, cfg)
        self.prompts = PromptBuilder(
            processor,
            history=cfg.history,
            screenshot_max_side=cfg.screenshot_max_side,
            elements=elements,
        )
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(cfg.seed + 1)
            if cfg.critic == "head":
                hidden = base.config.get_text_config().hidden_size
                self.critic: PooledValueHeads | SeparateCritic = PooledValueHeads(hidden)
            else:
                self.critic = SeparateCritic(cfg.seed + 1)
        self.critic.to(device)
        # Eval mode throughout (no dropout): act and score_actions must compute the same function.
        self.eval()

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def _pooled_critic(self) -> bool:
        return isinstance(self.critic, PooledValueHeads)

    @property
    def _decoding(self) -> Decoding:
        """How this policy samples and scores text (read from the config at each call)."""
        return Decoding(
            self.config.temperature,
            self.config.max_new_tokens,
            self.prompts.eos_token_id,
            self.prompts.pad_token_id,
            pool=self._pooled_critic,
        )

    def _threads(self) -> contextlib.AbstractContextManager[None]:
        """The torch thread count for this policy's forward passes (CPU only)."""
        count = self.config.cpu_threads
        if count is None and self.config.tiny:
            count = 1
        return _torch_threads(count if self.device.type == "cpu" else None)

    # -- Policy --------------------------------------------------------------------------------
    def _act(self, observations: Sequence[Observation], choice: Choice) -> PolicyOutput:
        if not observations:
            raise ValueError("act needs at least one observation")
        actions: list[Action] = []
        parts: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []
        with self._threads():
            size = self.config.max_batch_size
            for start, chunk in zip(
                range(0, len(observations), size), _chunks(observations, size), strict=True
            ):
                rows = choice.row_generators
                chunk_choice = (
                    choice
                    if rows is None
                    else choice._replace(row_generators=rows[start : start + len(chunk)])
                )
                chunk_actions, logprobs, entropies, values = self._act_chunk(chunk, chunk_choice)
                actions.extend(chunk_actions)
                parts.append((logprobs, entropies, values))
        logprobs, entropies, values = (torch.cat(p).float().cpu() for p in zip(*parts, strict=True))
        return PolicyOutput(actions, logprobs, entropies, values)

    def _seen(
        self, observations: Sequence[Observation]
    ) -> tuple[Sequence[Observation], list[Placeholders] | None]:
        """The observations as the model reads them and, with ``name_placeholders``, each one's
        names, dictated texts and web addresses (:mod:`.placeholders`; None: the model reads
        them as they are). With ``mask_unseen_words`` the instruction's unseen words are then
        masked (:mod:`distrl.policies.unseen_words`; placeholders first, so a held-out name is
        a Name1, not an unknown word)."""
        names = None
        if self.config.name_placeholders:
            texts, sites = self.config.text_placeholders, self.config.site_placeholders
            names = [Placeholders.of(obs.instruction, texts, sites) for obs in observations]
            observations = [n.observation(o) for n, o in zip(names, observations, strict=True)]
        if self.unseen_words is not None:
            observations = [self.unseen_words.observation(obs) for obs in observations]
        return observations, names

    def _act_chunk(
        self, observations: Sequence[Observation], choice: Choice
    ) -> tuple[list[Action], torch.Tensor, torch.Tensor, torch.Tensor]:
        seen, names = self._seen(observations)
        actions, logprobs, entropies, values = self._act_seen(seen, choice, observations)
        if names is not None:  # the device types the names, not their placeholders
            actions = [n.shown_action(a) for n, a in zip(names, actions, strict=True)]
        return actions, logprobs, entropies, values

    def _act_seen(
        self,
        observations: Sequence[Observation],
        choice: Choice,
        originals: Sequence[Observation],
    ) -> tuple[list[Action], torch.Tensor, torch.Tensor, torch.Tensor]:
        """:meth:`_act_chunk` on the model's view of the observations; the separate critic
        reads the ``originals`` (it has its own features and needs no placeholders)."""
        prompts = self.prompts
        inputs = prompts.inputs(observations, self.device)
        sampled = sample(self.model, inputs, self._decoding, choice, self._tries(observations))
        # Every generated string goes to the parser (which never raises).
        texts = [
            prompts.decode(t[:-1] if t and t[-1] == prompts.eos_token_id else t)
            for t in sampled.tokens
        ]
        actions = [self._parse(text, obs) for text, obs in zip(texts, observations, strict=True)]
        canonical = [
            prompts.action_ids(action, obs)
            for action, obs in zip(actions, observations, strict=True)
        ]
        logprobs = sampled.scores.logprobs.clone()
        entropies = sampled.scores.entropies.clone()
        pairs = zip(sampled.tokens, canonical, strict=True)
        rescore = [i for i, (got, want) in enumerate(pairs) if got != want]
        if rescore:
            again = self._score_seen(
                [observations[i] for i in rescore], [actions[i] for i in rescore]
            )
            logprobs[rescore] = again.logprobs.to(logprobs.dtype)
            entropies[rescore] = again.entropies.to(entropies.dtype)
        if self._pooled_critic:
            assert sampled.scores.features is not None
            values = self.critic.value(sampled.scores.features)
        else:
            values = self.critic.value(originals)
        return actions, logprobs, entropies, values

    def _parse(self, text: str, observation: Observation) -> Action:
        """A generated string as an action: an element reference when the prompt lists elements
        and the text is one, else whatever the AitW parser (which never raises) makes of it."""
        if self.prompts.elements is not None:
            tapped = self.prompts.elements.parse(text, observation)
            if tapped is not None:
                return tapped
        return parse_action(text)

    def _score(
        self, observations: Sequence[Observation], actions: Sequence[Action]
    ) -> SequenceScores:
        """Teacher-forced scores of the canonical text of ``actions`` (differentiable)."""
        seen, names = self._seen(observations)
        if names is not None:
            actions = [n.hidden_action(a) for n, a in zip(names, actions, strict=True)]
        return self._score_seen(seen, actions)

    def _score_seen(
        self, observations: Sequence[Observation], actions: Sequence[Action]
    ) -> SequenceScores:
        """:meth:`_score` on the model's view of observations and actions, in groups of
        similar prompt length (``score_groups``; :mod:`distrl.policies.length_groups`)."""
        texts = [self.prompts.chat(obs) for obs in observations]
        cut = length_groups(
            self.prompts.text_lengths(texts), self.config.score_groups, _MIN_GROUP, self.device
        )
        parts = [
            self._score_group(
                [observations[i] for i in rows],
                [actions[i] for i in rows],
                [texts[i] for i in rows],
            )
            for rows in cut.rows
        ]
        pooled = [part.features for part in parts if part.features is not None]
        return SequenceScores(
            cut.join([part.logprobs for part in parts]),
            cut.join([part.entropies for part in parts]),
            cut.join(pooled) if len(pooled) == len(parts) else None,
        )

    def _score_group(
        self, observations: Sequence[Observation], actions: Sequence[Action], texts: list[str]
    ) -> SequenceScores:
        """One length group of :meth:`_score_seen` as one padded batch."""
        inputs = self.prompts.inputs(observations, self.device, texts)
        targets = [
            self.prompts.action_ids(action, obs)
            for action, obs in zip(actions, observations, strict=True)
        ]
        tries = self._tries(observations)
        if tries is not None:  # an action outside the set is scored over the set and itself
            for trie, target in zip(tries, targets, strict=True):
                trie.add(target)
        return teacher_force(self.model, inputs, targets, self._decoding, tries)

    def _tries(self, observations: Sequence[Observation]) -> list[TokenTrie] | None:
        """Each observation's admissible action texts as token ids (``admissible_actions``;
        None: free text), those longer than ``max_new_tokens`` left out so that a generated
        text always ends in time."""
        cfg = self.config
        if not cfg.admissible_actions:
            return None
        return [
            TokenTrie(
                ids
                for ids in (
                    self.prompts.action_ids(action, obs)
                    for action in admissible_actions(obs, cfg.element_list_max)
                )
                if len(ids) <= cfg.max_new_tokens
            )
            for obs in observations
        ]

    def _scored_chunks(
        self, observations: Sequence[Observation], actions: Sequence[Action]
    ) -> Iterator[tuple[Sequence[Observation], SequenceScores]]:
        """Teacher-forced scores in chunks of at most ``max_batch_size`` rows, each with its
        observations (what a critic reads)."""
        check_one_action_each(len(observations), len(actions))
        if not observations:
            raise ValueError("score_actions needs at least one observation")
        size = self.config.max_batch_size
        for obs_chunk, action_chunk in zip(
            _chunks(observations, size), _chunks(actions, size), strict=True
        ):
            with self._threads():
                scores = self._score(obs_chunk, action_chunk)
            yield obs_chunk, scores

    def score_actions(
        self, observations: Sequence[Observation], actions: Sequence[Action]
    ) -> ActionScores:
        logprobs, entropies, values = [], [], []
        for obs_chunk, scores in self._scored_chunks(observations, actions):
            logprobs.append(scores.logprobs)
            entropies.append(scores.entropies)
            if self._pooled_critic:
                assert scores.features is not None
                values.append(self.critic.value(scores.features))
            else:
                values.append(self.critic.value(obs_chunk))
        return ActionScores(
            logprobs=torch.cat(logprobs).float(),
            entropies=torch.cat(entropies).float(),
            values=torch.cat(values).float(),
            representable=torch.ones(len(actions), dtype=torch.bool, device=self.device),
        )

    def action_logprobs(
        self, observations: Sequence[Observation], actions: Sequence[Action]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`score_actions`' log-probs without the critic (cloning trains no value)."""
        logprobs = [scores.logprobs for _, scores in self._scored_chunks(observations, actions)]
        representable = torch.ones(len(actions), dtype=torch.bool, device=self.device)
        return torch.cat(logprobs).float(), representable

    def _features(self, observations: Sequence[Observation]) -> torch.Tensor:
        observations, _ = self._seen(observations)
        with self._threads():
            parts = [
                prompt_features(self.model, self.prompts.inputs(chunk, self.device))
                for chunk in _chunks(observations, self.config.max_batch_size)
            ]
        return torch.cat(parts)

    def value(self, observations: Sequence[Observation]) -> torch.Tensor:
        """Step critic V(s), ``[B]`` (differentiable when gradients are enabled)."""
        if self._pooled_critic:
            return self.critic.value(self._features(observations)).float()
        return self.critic.value(observations).float()

    def trajectory_value(self, first_observations: Sequence[Observation]) -> torch.Tensor:
        """Instruction-level value V(instruction, s0) as a logit, ``[B]`` (DigiRL's
        curriculum)."""
        if self._pooled_critic:
            features = self._features(first_observations)
            return self.critic.trajectory_value(features).float()
        return self.critic.trajectory_value(first_observations).float()

    # -- weights -------------------------------------------------------------------------------
    def trainable_state_dict(self) -> dict[str, torch.Tensor]:
        """The tensors training changes (LoRA adapters and critic): what the learner publishes
        to workers and what checkpoints hold. The frozen base is never among them."""
        return OrderedDict(
            (name, parameter.detach())
            for name, parameter in self.named_parameters()
            if parameter.requires_grad
        )

    def state_dict(self, *args: Any, **kwargs: Any) -> dict[str, torch.Tensor]:  # type: ignore[override]
        """Same as :meth:`trainable_state_dict`: the policy's state is what training changes;
        the base is part of its config (tiny seed or path)."""
        del args, kwargs
        return self.trainable_state_dict()

    def load_state_dict(  # type: ignore[override]
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> _IncompatibleKeys:
        """Load trainable tensors (a full state dict is accepted too). ``strict``: every
        trainable tensor must be present and every key must name a tensor of the policy."""
        trainable = set(self.trainable_state_dict())
        known = {name for name, _ in self.named_parameters()}
        known |= {name for name, _ in self.named_buffers()}
        missing = sorted(trainable - set(state_dict))
        unexpected = sorted(set(state_dict) - known)
        if strict and (missing or unexpected):
            raise RuntimeError(
                f"VLMPolicy.load_state_dict: missing trainable tensors {missing[:5]}, "
                f"unexpected keys {unexpected[:5]} (is the checkpoint from another LoRA or "
                "critic configuration?)"
            )
        super().load_state_dict(state_dict, strict=False, assign=assign)
        return _IncompatibleKeys(missing, unexpected)

    def weights_bytes(self) -> int:
        """Bytes of one weights publication (:meth:`trainable_state_dict`)."""
        return state_bytes(self.trainable_state_dict())

    # -- persistence ---------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        """One file: format tag, kind, config (which base: tiny seed or path), version, the
        trainable tensors and the tiny tokenizer's texts. The base itself is not copied: load
        rebuilds or reloads it."""
        write_policy_file(
            self,
            path,
            self.trainable_state_dict(),
            tokenizer_texts=list(self.tokenizer_texts),
        )

    @classmethod
    def load(cls, path: str | Path) -> VLMPolicy:
        data = read_policy_file(cls, path)
        policy = cls(VLMPolicyConfig(**data["config"]), data.get("tokenizer_texts", ()))
        try:
            policy.load_state_dict(data["state_dict"])
        except RuntimeError as error:
            raise PolicyCheckpointError(f"policy checkpoint {path}: {error}") from None
        policy.version = int(data.get("version", 0))
        return policy

    def extra_repr(self) -> str:
        total = sum(p.numel() for p in self.parameters())
        trainable = sum(p.numel() for p in self.parameters() if p.requires_grad)
        return f"version={self.version}, parameters={total}, trainable={trainable}"
