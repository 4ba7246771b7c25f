"""The built-in policies behind ``policy.kind``, and how any policy kind is built.

``policy.kind`` is resolved through :data:`distrl.plugins.POLICIES`: ``small``, ``vlm`` (built by
:func:`distrl.runtime.components.vlm_policy`: its tiny model's tokenizer is trained on the task
suites' instructions, which a policy does not know), or a
plug-in (``module:attribute`` or an entry point of group ``distrl.policies``): a callable taking
the run config and returning a :class:`~distrl.policies.base.Policy` (a policy class whose
constructor takes the config qualifies). Register a plug-in's class with
:func:`~distrl.policies.base.register_policy` so its checkpoints can be loaded.
"""

from __future__ import annotations

from distrl.config.schema import RunConfig
from distrl.errors import InputError
from distrl.policies.base import Policy


def small_policy(cfg: RunConfig) -> Policy:
    """The pointer network over the element list (CPU)."""
    from distrl.policies.small import SmallPolicy, SmallPolicyConfig

    return SmallPolicy(
        SmallPolicyConfig(
            candidate_prior=cfg.explore.candidate_prior,
            type_needs_focus=cfg.explore.type_needs_focus,
            focused_type_prior=cfg.explore.focused_type_prior,
            empty_field_type_prior=cfg.explore.empty_field_type_prior,
            recompute_activations=cfg.policy.small.recompute_activations,
            score_groups=cfg.policy.small.score_groups,
        )
    )


def make_policy(cfg: RunConfig) -> Policy:
    """The policy ``policy.kind`` names, freshly initialised."""
    from distrl.plugins import POLICIES

    policy = POLICIES.resolve(cfg.policy.kind)(cfg)
    if not isinstance(policy, Policy):
        raise InputError(
            f"policy.kind={cfg.policy.kind}: built a {type(policy).__name__}, which is not a "
            "distrl Policy (act, score_actions, value, trajectory_value, parameters, state_dict, "
            "load_state_dict, save, load, version; see distrl.policies.base)"
        )
    return policy
