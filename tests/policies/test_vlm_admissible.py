"""Admissible-action decoding of the VLM policy (policy.vlm.admissible_actions): it writes only a
screen's admissible texts, its log-probs are a distribution over them that acting and scoring
agree on, and an action outside the set is still scored (docs/design.md §5)."""

from __future__ import annotations

import pytest
import torch

from distrl.config.loader import ConfigError, load_config
from distrl.config.schema import VLMPolicyConfig
from distrl.core.action import Action
from distrl.core.observation import Observation
from distrl.envs.phonesim.tasks.suites import suite_instructions
from distrl.policies.vlm import VLMPolicy
from distrl.policies.vlm.admissible import TokenTrie, admissible_actions, admissible_mask

ADMISSIBLE = VLMPolicyConfig(
    tiny=True,
    max_new_tokens=40,
    element_list=True,
    element_reference="name",
    history=0,
    admissible_actions=True,
)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def policy() -> VLMPolicy:
    return VLMPolicy(ADMISSIBLE, suite_instructions())


def _admissible_ids(policy: VLMPolicy, obs: Observation) -> set[tuple[int, ...]]:
    texts = (policy.prompts.action_ids(a, obs) for a in admissible_actions(obs, 50))
    return {tuple(ids) for ids in texts if len(ids) <= policy.config.max_new_tokens}


def test_the_mask_admits_each_step_of_a_text_the_trie_holds() -> None:
    trie = TokenTrie([[5, 6, 0], [5, 7, 0], [8, 0]])
    mask = admissible_mask(trie, [5, 7, 0], vocabulary=10, device=torch.device("cpu"))
    assert [torch.nonzero(row == 0).flatten().tolist() for row in mask] == [[5, 8], [6, 7], [0]]


def test_it_writes_only_admissible_texts_and_act_and_score_agree(
    policy: VLMPolicy, observations: list[Observation]
) -> None:
    for seed in range(3):
        out = policy.act(observations, generator=torch.Generator().manual_seed(seed))
        for action, obs in zip(out.actions, observations, strict=True):
            assert action.is_valid
            assert tuple(policy.prompts.action_ids(action, obs)) in _admissible_ids(policy, obs)
        scored = policy.score_actions(observations, out.actions)
        assert torch.allclose(out.logprobs, scored.logprobs.detach(), atol=1e-4, rtol=0)
        assert torch.allclose(out.entropies, scored.entropies.detach(), atol=1e-4, rtol=0)
    # Per-row seeds (an inference service's batches) and greedy choices keep to the set.
    seeds = list(range(len(observations)))
    for chosen in (policy.act(observations, seeds=seeds), policy.act(observations, greedy=True)):
        for action, obs in zip(chosen.actions, observations, strict=True):
            assert tuple(policy.prompts.action_ids(action, obs)) in _admissible_ids(policy, obs)


def test_the_admissible_texts_probabilities_sum_to_one(
    policy: VLMPolicy, observations: list[Observation]
) -> None:
    obs = observations[0]
    by_ids = {tuple(policy.prompts.action_ids(a, obs)): a for a in admissible_actions(obs, 50)}
    actions = [a for ids, a in by_ids.items() if len(ids) <= policy.config.max_new_tokens]
    assert any(a.action_type.value == "TYPE" for a in actions) and len(actions) > 10
    with torch.no_grad():
        scores = policy.score_actions([obs] * len(actions), actions)
    assert float(torch.logsumexp(scores.logprobs, dim=0)) == pytest.approx(0.0, abs=1e-4)


def test_an_action_outside_the_set_is_scored_over_the_set_and_itself(
    policy: VLMPolicy, observations: list[Observation]
) -> None:
    obs = observations[0]
    odd = Action.swipe((0.9, 0.3), (0.1, 0.3))  # a demonstration's exact swipe, say
    assert tuple(policy.prompts.action_ids(odd, obs)) not in _admissible_ids(policy, obs)
    scores = policy.score_actions([obs], [odd])
    logprob = scores.logprobs.detach()
    assert bool(torch.isfinite(logprob).all()) and float(logprob[0]) < 0
    scores.logprobs.sum().backward()  # cloning learns from it
    assert any(p.grad is not None for p in policy.parameters() if p.requires_grad)
    policy.zero_grad()


def test_admissible_actions_need_the_element_list() -> None:
    with pytest.raises(ConfigError, match="element_list"):
        load_config(
            None, ["policy.kind=vlm", "policy.vlm.tiny=true", "policy.vlm.admissible_actions=true"]
        )
