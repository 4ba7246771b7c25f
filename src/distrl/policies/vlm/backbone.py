"""Where the VLM comes from: the tiny local model, or any transformers checkpoint on disk.

Pointing distrl at a real model: download it once with the Hugging Face tools on a machine with
network access (``huggingface-cli download Qwen/Qwen2-VL-2B-Instruct --local-dir models/qwen2vl``),
then train with ``distrl train --policy vlm --vlm models/qwen2vl`` (or ``policy.kind=vlm
policy.vlm.path=models/qwen2vl``). The folder must hold the model's config and weights and its
processor files (tokenizer, image processor, chat template). Loading never touches the network
(``local_files_only``), so a typo fails at once instead of trying the Hub.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from transformers import AutoModelForImageTextToText, AutoProcessor, GenerationConfig

from distrl.config.schema import VLMPolicyConfig
from distrl.errors import InputError
from distrl.policies.vlm.tiny import build_tiny_vlm

__all__ = ["VLMLoadError", "load_backbone", "resolve_device", "resolve_dtype"]


class VLMLoadError(InputError):
    """A ``policy.vlm.path`` that does not hold a loadable vision-language model."""


def resolve_device(config: VLMPolicyConfig) -> torch.device:
    if config.device == "cuda" or (config.device == "auto" and torch.cuda.is_available()):
        return torch.device("cuda")
    return torch.device("cpu")


def resolve_dtype(config: VLMPolicyConfig, device: torch.device) -> torch.dtype:
    """bfloat16 where it is fast and safe (CUDA), float32 on CPU (and for exact tests)."""
    if config.dtype == "bfloat16" or (config.dtype == "auto" and device.type == "cuda"):
        return torch.bfloat16
    return torch.float32


def _first_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"


def _from_path(path: str, dtype: torch.dtype) -> tuple[Any, Any]:
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise VLMLoadError(
            f"policy.vlm.path={path}: no such folder (download the model first, or use "
            "policy.vlm.tiny=true)"
        )
    if not (folder / "config.json").is_file():
        raise VLMLoadError(
            f"policy.vlm.path={path}: no config.json there (not a transformers model folder)"
        )
    try:
        processor = AutoProcessor.from_pretrained(folder, local_files_only=True)
        model = AutoModelForImageTextToText.from_pretrained(
            folder, dtype=dtype, local_files_only=True
        )
    # SafetensorError: a truncated or corrupt weights file; ImportError: a processor that needs
    # a package this environment lacks (e.g. torchvision).
    except (
        OSError,
        ValueError,
        KeyError,
        TypeError,
        RuntimeError,
        ImportError,
        SafetensorError,
    ) as error:
        raise VLMLoadError(
            f"policy.vlm.path={path}: cannot load a vision-language model and processor "
            f"({_first_line(error)})"
        ) from None
    if not hasattr(processor, "tokenizer"):
        raise VLMLoadError(f"policy.vlm.path={path}: the processor has no tokenizer")
    tokenizer = processor.tokenizer
    # Only the token ids survive from the checkpoint's generation defaults: its top-k, top-p or
    # repetition penalty would make sampling differ from the distribution the log-probs describe.
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id
        if tokenizer.pad_token_id is not None
        else tokenizer.eos_token_id,
    )
    return model, processor


def load_backbone(
    config: VLMPolicyConfig,
    device: torch.device,
    tokenizer_texts: Sequence[str] = (),
    action_forms: Sequence[str] = (),
) -> tuple[Any, Any]:
    """(model, processor) for ``config``, the model in eval mode on ``device`` in its dtype; a
    tiny model's tokenizer is trained on ``tokenizer_texts`` and keeps the fixed parts of the
    policy's own ``action_forms`` whole."""
    dtype = resolve_dtype(config, device)
    if config.tiny:
        model, processor = build_tiny_vlm(
            config.seed,
            tokenizer_texts,
            action_forms,
            width=config.tiny_width,
            layers=config.tiny_layers,
            subword_buckets=config.tiny_subword_buckets,
        )
        model = model.to(dtype)
    elif config.path is not None:
        model, processor = _from_path(config.path, dtype)
    else:
        raise VLMLoadError("policy.kind=vlm needs policy.vlm.tiny=true or policy.vlm.path=FOLDER")
    return model.to(device).eval(), processor
