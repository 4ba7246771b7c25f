"""``policy.vlm.path``: a transformers VLM folder saved to disk by the test loads and trains.

No hub access: each model is built here from a config, with a tokenizer trained in-process by the
``tokenizers`` library (the tiny VLM's) and a processor assembled from its classes, then saved
with ``save_pretrained``. Two architectures (LLaVA: CLIP vision tower and a projector; Idefics3:
SigLIP and a pixel-shuffle connector) show the loader is not tied to one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import (
    CLIPImageProcessorPil,
    LlavaConfig,
    LlavaForConditionalGeneration,
    LlavaProcessor,
)

from distrl.algos.step_window import StepWindow
from distrl.config.loader import load_config
from distrl.core.action import Action
from distrl.core.observation import Observation
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.errors import InputError
from distrl.policies.vlm import VLMPolicy
from distrl.policies.vlm.tiny import build_tiny_vlm, special_token_ids, tiny_tokenizer
from distrl.runtime.components import build_learner, build_policy
from distrl.runtime.replay_service import ReplayBatch

_TEXTS = tuple(task.instruction for task in load_suite("general", "train")[:20])


def _save_llava(folder: Path) -> None:
    """A two-layer LLaVA (CLIP vision tower, MLP projector, Llama decoder), ~100k parameters."""
    tokenizer = tiny_tokenizer(0, _TEXTS)
    image_processor = CLIPImageProcessorPil(
        size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
    )
    # 32x32 pixels in 8x8 patches: 16 image tokens (the CLS feature is dropped, "default").
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=8,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
    )
    ids = special_token_ids(tokenizer)
    config = LlavaConfig(
        vision_config={
            "model_type": "clip_vision_model",
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "image_size": 32,
            "patch_size": 8,
        },
        text_config={
            "model_type": "llama",
            "vocab_size": len(tokenizer),
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "max_position_embeddings": 1024,
            **ids,
        },
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    torch.manual_seed(0)
    LlavaForConditionalGeneration(config).save_pretrained(folder)
    processor.save_pretrained(folder)


def _save_idefics3(folder: Path) -> None:
    """The tiny Idefics3 (SmolVLM architecture) that ``policy.vlm.tiny`` builds, as a folder."""
    model, processor = build_tiny_vlm(0, _TEXTS)
    model.save_pretrained(folder)
    processor.save_pretrained(folder)


@pytest.fixture(scope="module")
def observations() -> list[Observation]:
    env = PhoneSimEnv(seed=1)
    first = env.reset(load_suite("general", "train")[0])
    second, _, _, _ = env.step(Action.press_home())
    return [first, second]


def _window(
    observations: list[Observation], actions: list[Action], logprobs: list[float]
) -> StepWindow:
    """One finished two-step episode of ``actions``, scored ``logprobs`` by the behaviour."""
    return StepWindow(
        trajectory_id="t0",
        task_id="task",
        start=0,
        observations=tuple(observations),
        actions=tuple(actions),
        behaviour_logprobs=tuple(logprobs),
        rewards=(0.0, 1.0),
        dones=(False, True),
        policy_versions=(0, 0),
        bootstrap_observation=None,
        trajectory_success=True,
        episode_length=2,
        first_observation=observations[0],
    )


@pytest.mark.parametrize("save", [_save_llava, _save_idefics3], ids=["llava", "idefics3"])
def test_saved_checkpoint_acts_and_trains(
    save: Callable[[Path], None], observations: list[Observation], tmp_path: Path
) -> None:
    save(tmp_path)
    cfg = load_config(
        None,
        [
            "policy.kind=vlm",
            f"policy.vlm.path={tmp_path}",
            "policy.vlm.max_new_tokens=8",
            "policy.vlm.lora_r=4",
            "train.lr=0.01",
        ],
    )
    policy = build_policy(cfg)
    assert isinstance(policy, VLMPolicy) and policy.uses_screenshots
    trainable = policy.trainable_state_dict()
    assert trainable and all("lora_" in n or n.startswith("critic.") for n in trainable)

    out = policy.act(observations, generator=torch.Generator().manual_seed(0))
    assert len(out.actions) == 2 and torch.isfinite(out.logprobs).all()
    scores = policy.score_actions(observations, out.actions)
    assert torch.allclose(out.logprobs, scores.logprobs.detach(), atol=1e-4, rtol=0)

    actions = [Action.tap(0.25, 0.5), Action.complete()]
    with torch.no_grad():
        before = policy.score_actions(observations, actions).logprobs.clone()
    lora_before = {n: t.clone() for n, t in trainable.items() if "lora_B" in n}
    window = _window(observations, actions, before.tolist())
    learner = build_learner(cfg, policy)
    batch = ReplayBatch([window], np.arange(1), np.zeros(1, np.int64), np.ones(1, np.float32))
    learner.update(batch)
    lora_after = policy.trainable_state_dict()
    assert any(not torch.equal(lora_after[n], t) for n, t in lora_before.items())
    with torch.no_grad():
        after = policy.score_actions(observations, actions).logprobs
    assert not torch.allclose(before, after)  # the update reached the model's outputs


def test_broken_checkpoint_is_one_input_error_line(tmp_path: Path) -> None:
    _save_llava(tmp_path)
    (tmp_path / "model.safetensors").write_bytes(b"not a safetensors file")
    cfg = load_config(None, ["policy.kind=vlm", f"policy.vlm.path={tmp_path}"])
    with pytest.raises(InputError) as caught:
        build_policy(cfg)
    message = str(caught.value)
    assert "\n" not in message and f"policy.vlm.path={tmp_path}" in message
    assert "cannot load" in message
