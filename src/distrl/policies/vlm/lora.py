"""LoRA adapters through peft: which weights train, and the tensors that travel to workers.

Why LoRA: a worker that acts with a 2B-parameter VLM cannot receive 4 GB of weights after every
learner update. With low-rank adapters on the attention projections only the adapters train
(well under 1% of the weights), every process loads the frozen base once, and a weight update
is a few MB. ``lora=false`` trains every weight instead (small models, or when memory allows).
"""

from __future__ import annotations

import warnings
from typing import Any

import torch
from peft import LoraConfig, get_peft_model
from torch import nn

from distrl.config.schema import VLMPolicyConfig
from distrl.errors import InputError

__all__ = ["add_lora", "state_bytes"]


def add_lora(model: nn.Module, config: VLMPolicyConfig) -> nn.Module:
    """``model`` with the LoRA adapters ``config`` asks for (rank ``lora_r``, ``lora_alpha``,
    ``lora_dropout``) on ``target_modules`` (module name suffixes) and everything else frozen;
    or, with ``lora=False``, ``model`` with every weight trainable.

    The adapters' initialisation (A random, B zero: the adapted model starts equal to the base)
    is seeded by ``config.seed``, so every process adds the same adapters before any weights are
    synchronised."""
    if not config.lora:
        for parameter in model.parameters():
            parameter.requires_grad_(True)
        return model
    targets = list(config.target_modules)
    lora = LoraConfig(
        r=config.lora_r,
        lora_alpha=config.lora_alpha,
        lora_dropout=config.lora_dropout,
        target_modules=targets,
        bias="none",
    )
    with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
        # peft asks transformers a deprecated question; the warning is theirs, not the user's.
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*")
        torch.manual_seed(config.seed)
        try:
            adapted: Any = get_peft_model(model, lora)
        except ValueError as error:  # peft: "Target modules {...} not found in the base model"
            raise InputError(
                f"policy.vlm.target_modules={targets}: no such modules in the model "
                f"({str(error).splitlines()[0]}); name e.g. q_proj, v_proj"
            ) from None
    return adapted


def state_bytes(state: dict[str, torch.Tensor]) -> int:
    """Bytes of the tensors in ``state`` (what publishing it costs)."""
    return sum(t.numel() * t.element_size() for t in state.values())
