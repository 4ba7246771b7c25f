"""A policy defined outside distrl: the small pointer network, narrower and shallower.

Train it with ``policy.kind=compact_policy:make_policy`` (this folder on ``PYTHONPATH``). A
plug-in policy is any :class:`distrl.policies.base.Policy`; subclassing the small policy keeps
this example short, and :func:`~distrl.policies.base.register_policy` makes its checkpoints
loadable by ``distrl eval`` once this module is imported.
"""

from __future__ import annotations

from distrl.config.schema import RunConfig
from distrl.policies.base import register_policy
from distrl.policies.small import SmallPolicy, SmallPolicyConfig


@register_policy("example-compact")
class CompactPolicy(SmallPolicy):
    """One 32-wide transformer layer: a few thousand weights, fast on any CPU."""


def make_policy(cfg: RunConfig) -> CompactPolicy:
    """What ``policy.kind`` names: a callable from the run config to a fresh policy."""
    return CompactPolicy(SmallPolicyConfig(d_model=32, layers=1, heads=2, hash_buckets=512))
