"""The VLM policy's critics: V(s) for A-RIDE and V(instruction, s0) for DigiRL's curriculum.

Two kinds (``policy.vlm.critic``):

* ``head``: small MLPs on the VLM's last hidden layer, mean-pooled over the prompt tokens. No extra
  forward pass (the features come out of the pass that scores or samples the action) and the
  critic sees the screenshot through the VLM; its loss also trains the shared LoRA adapters.
* ``separate``: an independent small network over the element list and the instruction (the small
  policy's encoder). It shares nothing with the actor, so critic regression cannot disturb the
  VLM, and its cost does not grow with the VLM; it needs backends that report elements.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from distrl.core.observation import Observation
from distrl.policies.small import SmallPolicy, SmallPolicyConfig

__all__ = ["PooledValueHeads", "SeparateCritic"]


def _head(dim: int, width: int) -> nn.Sequential:
    # The LayerNorm makes the head indifferent to the scale of a particular model's features.
    return nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, width), nn.GELU(), nn.Linear(width, 1))


class PooledValueHeads(nn.Module):
    """V(s) and V(instruction, s0) from pooled VLM features ``[B, H]`` (float32)."""

    def __init__(self, hidden_size: int, width: int = 128):
        super().__init__()
        self.step = _head(hidden_size, width)
        self.trajectory = _head(hidden_size, width)

    def value(self, features: torch.Tensor) -> torch.Tensor:
        return self.step(features.float()).squeeze(-1)

    def trajectory_value(self, features: torch.Tensor) -> torch.Tensor:
        return self.trajectory(features.float()).squeeze(-1)


class SeparateCritic(nn.Module):
    """V(s) and V(instruction, s0) from a small network of their own (no VLM features)."""

    def __init__(self, seed: int):
        super().__init__()
        self.network = SmallPolicy(
            SmallPolicyConfig(d_model=64, heads=4, layers=1, hash_buckets=2048, init_seed=seed)
        )
        # Only the encoder and the two value heads are the critic; the action heads stay
        # frozen (and out of the published weights).
        for name, parameter in self.network.named_parameters():
            if name.startswith(("kind_head", "element_head", "candidate_head", "pointer_")):
                parameter.requires_grad_(False)

    def value(self, observations: Sequence[Observation]) -> torch.Tensor:
        return self.network.value(observations)

    def trajectory_value(self, observations: Sequence[Observation]) -> torch.Tensor:
        return self.network.trajectory_value(observations)
