"""Policies: map observations to actions and score actions they did not choose.

``Policy`` is the base class workers and learners use; ``SmallPolicy`` is the CPU default (a pointer
network over the element list). Load any saved policy with :func:`load_policy`.
"""

from distrl.policies.base import (
    POLICY_REGISTRY,
    ActionScores,
    Policy,
    PolicyCheckpointError,
    PolicyOutput,
    load_policy,
    register_policy,
)
from distrl.policies.candidates import extract_candidates
from distrl.policies.small import SmallPolicy, SmallPolicyConfig

__all__ = [
    "POLICY_REGISTRY",
    "ActionScores",
    "Policy",
    "PolicyCheckpointError",
    "PolicyOutput",
    "SmallPolicy",
    "SmallPolicyConfig",
    "extract_candidates",
    "load_policy",
    "register_policy",
]
