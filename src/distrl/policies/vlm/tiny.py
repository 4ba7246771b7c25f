"""A tiny vision-language model built here, offline: random weights, a tokenizer trained now.

Why: every piece of the VLM policy (prompting, generation, teacher forcing, LoRA, weight
publishing, DDP) must run in tests and on a 2-core CPU without downloading a checkpoint. The tiny
model has the architecture of SmolVLM / Idefics3 (a SigLIP-style vision encoder, a pixel-shuffle
connector and a Llama decoder), so it goes through exactly the transformers code paths a real
Idefics3 or SmolVLM checkpoint does, only with a few hundred thousand parameters.

The tokenizer is a byte-level BPE trained in-process on canonical AitW action texts and on the
texts its caller passes (a run passes its task suites' instructions: the policy package knows no
task suite). It splits text the way the tokenizers of real LLMs do, at word boundaries with the
leading space kept, so a word is the same token in the instruction, in the element list and in
a typed text; a model that learns from scratch can then match "Clock" in "Open Clock" to the
element that reads "Clock" by one token, where a BPE over whole lines had merged "Open " into
one token and spelled the name as "C", "lo", "ck". Action texts are the exception: their fixed
parts (``Action Decision: "action_type": "PRESS_BACK", ...``, the text before a tap's
coordinates or before a typed text, and the caller's own action forms, e.g. element
references) are kept whole and each becomes one token, so an action is a few tokens, not forty.
Both the tokenizer and the weights are pure functions of the seed and those texts: every process
of a run (learner, workers, driver) builds the same base, so only the trainable tensors (LoRA,
critic) ever need to travel.

>>> model, processor = build_tiny_vlm(seed=0, texts=("open the clock app",))
>>> 100_000 < sum(p.numel() for p in model.parameters()) < 2_000_000
True
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import torch
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import (
    GenerationConfig,
    Idefics3Config,
    Idefics3ForConditionalGeneration,
    Idefics3Processor,
    PreTrainedTokenizerFast,
)

from distrl.core.action import Action, format_action
from distrl.policies.vlm.subwords import add_subword_vectors

try:  # transformers >= 5 names the torchvision-free image processor explicitly
    from transformers import Idefics3ImageProcessorPil as _ImageProcessor
except ImportError:  # pragma: no cover - older transformers
    from transformers import Idefics3ImageProcessor as _ImageProcessor

__all__ = [
    "TINY_IMAGE_SIDE",
    "TINY_LAYERS",
    "TINY_WIDTH",
    "action_fragments",
    "build_tiny_vlm",
    "special_token_ids",
    "tiny_tokenizer",
]

#: The language model's default size: 96 wide, 2 layers (0.45M parameters with the built-in
#: suites' tokenizer; ``policy.vlm.tiny_width`` and ``tiny_layers`` choose another).
TINY_WIDTH = 96
TINY_LAYERS = 2
#: Attention heads of the language model (half as many key-value heads); a head's size,
#: width / heads, must be even for the rotary position embedding.
_HEADS = 4
#: Side of the square image the tiny vision encoder sees (8x8 patches of 8 pixels).
TINY_IMAGE_SIDE = 64
_PATCH = 8
_SCALE_FACTOR = 2
#: Image tokens per screenshot: (64 / 8)^2 patches, pixel-shuffled by 2 in each direction.
_IMAGE_SEQ_LEN = (TINY_IMAGE_SIDE // _PATCH) ** 2 // _SCALE_FACTOR**2
#: A ceiling, not a size: on the built-in suites' instructions BPE runs out of pairs to merge
#: at about 2,600 tokens, with every word of them (about 920) one token and every action
#: fragment one token; at 2,048 a quarter of the words, "Clock" among them, stayed split.
_VOCAB_SIZE = 3072
#: Prose splits into words with their leading space, single digits, runs of other marks and
#: whitespace (GPT-2's pattern, but one token a digit: merged digit runs took 600 of the 2,048
#: tokens for coordinates, and a number in an instruction is copied digit by digit anyway).
_WORD_PATTERN = r" ?\p{L}+| ?\p{N}| ?[^\s\p{L}\p{N}]+|\s+"
#: Stands for the typed text in a probe TYPE action (cut out of its fixed parts).
_TYPED_PROBE = "\u2063"
_SPECIAL_TOKENS = (
    "<pad>",
    "<s>",
    "</s>",
    "<unk>",
    "<fake_token_around_image>",
    "<image>",
    "<end_of_utterance>",
    "<global-img>",
)
#: One user turn with the screenshot first, then the assistant's reply (the action text).
_CHAT_TEMPLATE = (
    "{% for message in messages %}{{ message['role'] | capitalize }}:"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<image>{% else %}{{ part['text'] }}{% endif %}"
    "{% endfor %}<end_of_utterance>\n{% endfor %}"
    "{% if add_generation_prompt %}Assistant:{% endif %}"
)


def _sample_actions(rng: np.random.Generator, words: list[str], count: int) -> list[Action]:
    """Actions of every type with random coordinates and texts: the tokenizer's action corpus."""
    actions: list[Action] = []
    for _ in range(count):
        kind = rng.integers(8)
        if kind < 3:
            y, x = rng.random(2)
            actions.append(Action.tap(float(y), float(x)))
        elif kind == 3:
            y0, y1, x = rng.random(3)
            actions.append(Action.swipe((float(y0), float(x)), (float(y1), float(x))))
        elif kind == 4:
            n = int(rng.integers(1, 4))
            actions.append(Action.type_text(" ".join(rng.choice(words, size=n))))
        else:
            actions.append(
                [
                    Action.press_back(),
                    Action.press_home(),
                    Action.press_enter(),
                    Action.complete(),
                    Action.impossible(),
                ][int(rng.integers(5))]
            )
    return actions


def action_fragments(extra: Sequence[str] = ()) -> list[str]:
    """The fixed parts of action texts, longest first: each action type's canonical text cut
    where it varies (a tap's or swipe's coordinates, a typed text), plus ``extra`` (the caller's
    own action forms). Derived from :func:`~distrl.core.action.format_action`, so they follow
    its format.

    >>> format_action(Action.press_back()) in action_fragments()  # no variable part: whole
    True
    >>> action_fragments()[-1]  # the quote that closes a typed text
    '"'
    """
    probes = [
        Action.press_back(),
        Action.press_home(),
        Action.press_enter(),
        Action.complete(),
        Action.impossible(),
        Action.type_text(_TYPED_PROBE),
        Action.tap(0.25, 0.75),
    ]
    fragments: set[str] = set(extra)
    for probe in probes:
        # Cut at the typed text and, for a tap, at its coordinates' digits and signs.
        cut = r"[-\d.]*\d" if probe.is_tap else re.escape(_TYPED_PROBE)
        fragments.update(part for part in re.split(cut, format_action(probe)) if part)
    return sorted(fragments, key=lambda fragment: (-len(fragment), fragment))


def _pre_tokenizer(fragments: Sequence[str]) -> pre_tokenizers.PreTokenizer:
    """Action fragments whole, prose at word boundaries (see the module docstring), then bytes
    mapped to the byte-level alphabet."""
    alternatives = [re.escape(fragment) for fragment in fragments] + [_WORD_PATTERN]
    return pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex("|".join(alternatives)), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )


@lru_cache(maxsize=4)
def _trained_tokenizer(seed: int, texts: tuple[str, ...], extra: tuple[str, ...]) -> str:
    """The tokenizer trained on ``texts``, sampled action texts and the action fragments (with
    the caller's ``extra`` ones), as JSON (cached per process; each caller gets its own copy).
    Typed texts in the action corpus are drawn from the words of ``texts`` (single letters when
    there are none)."""
    words = sorted({w for text in texts for w in text.split()}) or list(string.ascii_lowercase)
    rng = np.random.default_rng(seed)
    fragments = action_fragments(extra)
    corpus = list(texts) + [format_action(a) for a in _sample_actions(rng, words, 3000)]
    # Each fragment appears as often as a sampled action type, so BPE merges every one of them
    # into a single token.
    corpus += fragments * (3000 // 8)
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = _pre_tokenizer(fragments)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=_VOCAB_SIZE,
        special_tokens=list(_SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(corpus, trainer)
    return tokenizer.to_str()


def tiny_tokenizer(
    seed: int = 0, texts: Sequence[str] = (), action_forms: Sequence[str] = ()
) -> PreTrainedTokenizerFast:
    """The in-process trained byte-level BPE (on ``texts``, AitW action texts and the fixed
    parts of the caller's further ``action_forms``, e.g. the text before an element reference's
    index) as a transformers tokenizer (left padding, so that a batch's prompts all end where
    generation starts)."""
    trained = _trained_tokenizer(seed, tuple(texts), tuple(action_forms))
    return PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(trained),
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        padding_side="left",
        clean_up_tokenization_spaces=False,
    )


def special_token_ids(tokenizer: PreTrainedTokenizerFast) -> dict[str, int]:
    """The padding, start and end token ids a model config built for ``tokenizer`` needs."""
    return {
        "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
    }


def build_tiny_vlm(
    seed: int = 0,
    texts: Sequence[str] = (),
    action_forms: Sequence[str] = (),
    *,
    width: int = TINY_WIDTH,
    layers: int = TINY_LAYERS,
    subword_buckets: int = 0,
) -> tuple[Idefics3ForConditionalGeneration, Idefics3Processor]:
    """The tiny Idefics3-architecture model (random weights from ``seed``) and its processor,
    whose tokenizer is trained on ``texts`` and ``action_forms`` (see :func:`tiny_tokenizer`).

    ``width`` and ``layers`` size the language model (4 attention heads, 2 key-value heads, an
    MLP twice as wide); the vision encoder stays as small as it is, since the element list, not
    the pixels, carries what the policy reads. ``subword_buckets`` > 0 adds character n-gram
    vectors to the token vectors (:mod:`.subwords`)."""
    if width % (2 * _HEADS) or width <= 0 or layers <= 0:
        raise ValueError(
            f"a tiny model needs a width that is a positive multiple of {2 * _HEADS} (got "
            f"{width}) and at least one layer (got {layers})"
        )
    tokenizer = tiny_tokenizer(seed, texts, action_forms)
    image_processor = _ImageProcessor(
        do_image_splitting=False,
        size={"longest_edge": TINY_IMAGE_SIDE},
        max_image_size={"longest_edge": TINY_IMAGE_SIDE},
    )
    processor = Idefics3Processor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        image_seq_len=_IMAGE_SEQ_LEN,
        chat_template=_CHAT_TEMPLATE,
    )
    ids = special_token_ids(tokenizer)
    config = Idefics3Config(
        vision_config={
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "image_size": TINY_IMAGE_SIDE,
            "patch_size": _PATCH,
        },
        text_config={
            "model_type": "llama",
            "vocab_size": len(tokenizer),
            "hidden_size": width,
            "intermediate_size": 2 * width,
            "num_hidden_layers": layers,
            "num_attention_heads": _HEADS,
            "num_key_value_heads": _HEADS // 2,
            "max_position_embeddings": 1024,
            **ids,
        },
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
        scale_factor=_SCALE_FACTOR,
        pad_token_id=tokenizer.pad_token_id,
        # The output layer is the embedding, as in GPT-2 and the small Llamas: writing a token
        # the prompt holds (a name, a typed text) then reuses the vector that read it, and the
        # vocabulary costs its parameters once (0.45M parameters in all, not 0.69M).
        tie_word_embeddings=True,
    )
    # The weights are a function of the seed alone (not of the caller's RNG state), so every
    # process that builds the tiny base holds the same one.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Idefics3ForConditionalGeneration(config)
        if subword_buckets:
            texts_by_id = [
                tokenizer.convert_tokens_to_string([token])
                for token in tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
            ]
            add_subword_vectors(model, texts_by_id, subword_buckets)
    model.generation_config = GenerationConfig(**ids)
    return model.eval(), processor
