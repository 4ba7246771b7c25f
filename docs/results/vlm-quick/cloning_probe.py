"""Probe (issue 19): how well does the tiny VLM learn to copy while cloning, and what helps?

The tiny VLM memorises the train split's names instead of copying them from the instruction
(docs/results.md, "The tiny VLM"). This probe clones the vlm-quick warm start's demonstrations
with half of the steps' copied words swapped (``train.bc_copy_augmentation=0.5``), where the
only way to fit a swapped step is to copy, and prints the cloning loss every 100 steps and the
time a step takes, for a model of a given size (``--width``, ``--layers``: the config's
``policy.vlm.tiny_width`` and ``tiny_layers``) and optionally after copy pretraining.

Copy pretraining (``--copy-pretraining-steps``) is the usual stand-in for what a pretrained
language model brings: Adam steps (lr 0.001) on ``<s> w1..wn <s> w1..wn`` (n from 4 to 16
random single-token words, batches of 32, loss on the copy only), the task on which small
transformers form copying attention heads. One torch thread, the vlm-quick preset's cloning
settings (batch 16, lr 0.003). From the repository root:

    .venv/bin/distrl collect-demos --preset vlm-quick --episodes 400 --noise 0.1 --seed 0 \\
        --run-root /tmp/probe --run-name demos
    probe=docs/results/vlm-quick/cloning_probe.py
    .venv/bin/python $probe /tmp/probe/demos --cloning-steps 1000
    .venv/bin/python $probe /tmp/probe/demos --cloning-steps 1000 --copy-pretraining-steps 1500
    .venv/bin/python $probe /tmp/probe/demos --cloning-steps 1000 --width 192 --layers 4
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from distrl.algos.bc import behaviour_clone
from distrl.algos.copy_augmentation import CopySwap, word_pool
from distrl.config.loader import load_config
from distrl.runtime.components import build_policy
from distrl.runtime.warm_start import load_demonstrations

_WORD = re.compile(r" [^\W\d_]{2,}")


def _curve(name: str, losses: list[float]) -> None:
    for start in range(0, len(losses), 100):
        mean = np.mean(losses[start : start + 100])
        print(f"{name} steps {start + 1}-{start + 100}: loss {mean:.2f}")


def _copy_words(tokenizer: Any) -> np.ndarray:
    special = set(tokenizer.all_special_ids)
    return np.asarray(
        [
            token
            for token in range(len(tokenizer))
            if token not in special and _WORD.fullmatch(tokenizer.decode([token]))
        ]
    )


def main(args: argparse.Namespace) -> None:
    torch.set_num_threads(1)
    overrides = [f"policy.vlm.tiny_width={args.width}", f"policy.vlm.tiny_layers={args.layers}"]
    policy = build_policy(load_config("vlm-quick", overrides))
    model, tokenizer = policy.model, policy.prompts.tokenizer
    parameters = sum(p.numel() for p in model.parameters())
    print(f"width {args.width}, {args.layers} layers: {parameters:,} parameters")
    words = _copy_words(tokenizer)
    print(f"{len(words)} single-token words")
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    rng = np.random.default_rng(0)
    marker = tokenizer.bos_token_id
    losses, started = [], time.monotonic()
    for _ in range(args.copy_pretraining_steps):
        count = int(rng.integers(4, 17))
        drawn = torch.as_tensor(rng.choice(words, size=(32, count)))
        ids = torch.cat([torch.full((32, 1), marker), drawn, torch.full((32, 1), marker), drawn], 1)
        logits = model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits
        copy = logits[:, count + 1 : -1]  # position p predicts token p + 1: the copy's tokens
        loss = F.cross_entropy(copy.reshape(-1, copy.shape[-1]), drawn.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    if losses:
        _curve("copy pretraining", losses)
        print(f"copy pretraining took {time.monotonic() - started:.0f} s")
    demonstrations = load_demonstrations(args.demos)
    swap = CopySwap(word_pool(s.observation for t in demonstrations for s in t.steps), 0.5)
    started = time.monotonic()
    losses = behaviour_clone(
        policy,
        demonstrations,
        steps=args.cloning_steps,
        batch_size=16,
        lr=0.003,
        seed=1,
        augment=swap,
    )
    _curve("cloning, swap 0.5", losses)
    elapsed = time.monotonic() - started
    print(f"cloning took {elapsed:.0f} s ({elapsed / max(1, len(losses)):.3f} s a step)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("demos", type=Path, help="a distrl collect-demos run folder")
    parser.add_argument("--cloning-steps", type=int, default=1000)
    parser.add_argument("--copy-pretraining-steps", type=int, default=0)
    parser.add_argument("--width", type=int, default=96, help="policy.vlm.tiny_width")
    parser.add_argument("--layers", type=int, default=2, help="policy.vlm.tiny_layers")
    main(parser.parse_args())
