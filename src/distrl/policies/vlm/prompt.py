"""Observation -> the VLM's inputs: the AitW-style prompt (instruction, previous actions,
screenshot, and with ``policy.vlm.element_list`` the screen's elements as text) through the
model's own chat template and processor; actions -> target tokens; generated text -> actions.

Why a separate module: ``act`` and ``score_actions`` must feed the model byte-identical prompts,
or the behaviour and target log-probs of one action differ for reasons that have nothing to do
with the weights. Everything that turns an observation into tokens lives here, once.

Screenshots are downscaled here (``screenshot_max_side``) before the processor sees them: a
360x720 PhoneSim screen costs a real VLM hundreds of image tokens, and most processors would
resize it anyway.

Prompts are padded on the left, so every row of a batch ends where generation starts; a target
action is the token ids of its canonical text (:func:`~distrl.core.action.format_action`) followed
by the end-of-sequence token, which is how a generated action ends too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from PIL import Image

from distrl.core.action import Action, format_action
from distrl.core.observation import Observation
from distrl.core.screenshot import rgb_image
from distrl.policies.vlm.elements import ElementReferences

__all__ = ["PromptBuilder", "prompt_text"]

#: How many action texts' token ids :meth:`PromptBuilder.action_ids` keeps (a screen's admissible
#: actions are tokenised at every act and every scored step; beyond this the cache starts over).
TOKEN_CACHE_SIZE = 65_536

#: The smallest screenshot side handed to a processor (vision encoders patch at 14-16 pixels; a
#: 1x1 placeholder screenshot of a replayed observation would make some processors fail).
_MIN_SIDE = 28


def prompt_text(
    observation: Observation, history: int, elements: ElementReferences | None = None
) -> str:
    """The text part of the prompt: the task, the screen's elements (when ``elements`` is
    given), the last ``history`` actions, and the question."""
    lines = [f"Task: {observation.instruction}"]
    if elements is not None:
        lines.extend(elements.prompt_lines(observation))
    previous = observation.previous_actions[-history:] if history else ()
    if previous:
        lines.append("Previous actions:")
        lines.extend(format_action(action) for action in previous)
    else:
        lines.append("Previous actions: none")
    lines.append("Next action:")
    return "\n".join(lines)


def _screenshot_image(screenshot: np.ndarray, max_side: int) -> Image.Image:
    """``screenshot`` as an RGB image whose longest side is at most ``max_side`` (and whose
    shortest is at least a vision patch)."""
    image = rgb_image(screenshot)
    width, height = image.size
    scale = min(1.0, max_side / max(width, height))
    size = (max(_MIN_SIDE, round(width * scale)), max(_MIN_SIDE, round(height * scale)))
    return image if size == image.size else image.resize(size, Image.BILINEAR)


class PromptBuilder:
    """Turns observations into model inputs with ``processor`` (any transformers VLM processor
    with a tokenizer; its chat template is used when it has one)."""

    def __init__(
        self,
        processor: Any,
        *,
        history: int,
        screenshot_max_side: int,
        elements: ElementReferences | None = None,
    ):
        self.processor = processor
        #: The element list and element references (``None``: AitW prompt and actions only).
        self.elements = elements
        self.tokenizer = processor.tokenizer
        self.tokenizer.padding_side = "left"
        self.history = history
        self.screenshot_max_side = screenshot_max_side
        if self.tokenizer.eos_token_id is None:
            raise ValueError("the VLM's tokenizer has no end-of-sequence token to end actions with")
        self.eos_token_id = int(self.tokenizer.eos_token_id)
        pad = self.tokenizer.pad_token_id
        self.pad_token_id = int(pad) if pad is not None else self.eos_token_id
        #: Action text -> its token ids (end-of-sequence included). With admissible actions
        #: every act and every scored step tokenises each of the screen's few dozen action
        #: texts, the same few thousand texts over and over: caching them took a vlm-quick
        #: update from 529 to 491 ms (``distrl bench learner --preset vlm-quick``).
        self._token_ids: dict[str, tuple[int, ...]] = {}

    def chat(self, observation: Observation) -> str:
        """One observation's prompt string, ending where the assistant's action text begins."""
        text = prompt_text(observation, self.history, self.elements)
        messages = [
            {
                "role": "user",
                "content": [
                    {"type": "image"},
                    {"type": "text", "text": text},
                ],
            }
        ]
        if getattr(self.processor, "chat_template", None):
            return self.processor.apply_chat_template(
                messages, add_generation_prompt=True, tokenize=False
            )
        image_token = getattr(self.processor, "image_token", "<image>")
        return f"{image_token}{text}\n"

    def inputs(
        self,
        observations: Sequence[Observation],
        device: torch.device,
        texts: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """The processor's batch (input_ids, attention_mask, pixel values, ...) on ``device``;
        ``texts``: the observations' :meth:`chat` strings when the caller has them already."""
        texts = [self.chat(obs) for obs in observations] if texts is None else list(texts)
        images = [
            [_screenshot_image(obs.pixels(), self.screenshot_max_side)] for obs in observations
        ]
        batch = self.processor(text=texts, images=images, padding=True, return_tensors="pt")
        return {
            key: value.to(device) if isinstance(value, torch.Tensor) else value
            for key, value in batch.items()
        }

    def text_lengths(self, texts: Sequence[str]) -> list[int]:
        """Each :meth:`chat` string's token count before the processor expands its image
        placeholder (the same expansion for every row of a batch of equal-sized screenshots):
        what sorts a batch by length (:mod:`distrl.policies.length_groups`)."""
        return [
            len(ids) for ids in self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        ]

    def action_text(self, action: Action, observation: Observation) -> str:
        """The one canonical text of ``action`` taken on ``observation``: an element reference
        when the prompt lists elements and the action taps one's centre, else its AitW text."""
        if self.elements is not None:
            reference = self.elements.canonical_text(action, observation)
            if reference is not None:
                return reference
        return format_action(action)

    def action_ids(self, action: Action, observation: Observation) -> list[int]:
        """The target tokens of ``action`` on ``observation``: its canonical text, then
        end-of-sequence."""
        text = self.action_text(action, observation)
        ids = self._token_ids.get(text)
        if ids is None:
            if len(self._token_ids) >= TOKEN_CACHE_SIZE:
                self._token_ids.clear()
            ids = (*self.tokenizer.encode(text, add_special_tokens=False), self.eos_token_id)
            self._token_ids[text] = ids
        return list(ids)

    def decode(self, ids: Sequence[int]) -> str:
        """Generated ids (without the end-of-sequence token) as text for the action parser."""
        return self.tokenizer.decode(
            list(ids), skip_special_tokens=True, clean_up_tokenization_spaces=False
        )
