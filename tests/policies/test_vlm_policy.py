"""The VLM policy on the tiny local model: log-prob agreement, parsing, learning, LoRA-only
weights, checkpoints and configuration (docs/design.md §5)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
import torch

from distrl.algos.aride import aride_loss
from distrl.algos.step_window import StepWindow
from distrl.config.loader import ConfigError, load_config
from distrl.config.schema import ARideConfig, VLMPolicyConfig
from distrl.core import action as action_module
from distrl.core.action import Action
from distrl.core.observation import Observation
from distrl.envs.phonesim.tasks.suites import suite_instructions
from distrl.errors import InputError
from distrl.policies.base import Choice, load_policy
from distrl.policies.length_groups import length_groups
from distrl.policies.vlm import VLMPolicy
from distrl.policies.vlm import policy as policy_module
from distrl.policies.vlm.decoding import Decoding, sample, teacher_force
from distrl.runtime.components import build_policy
from distrl.runtime.learner import Learner

if TYPE_CHECKING:  # the shared episodes come from this folder's conftest.py fixtures
    from conftest import Demo

TINY = VLMPolicyConfig(tiny=True, max_new_tokens=24)
#: What a run trains the tiny model's tokenizer on (see distrl.runtime.components.build_policy).
INSTRUCTIONS = suite_instructions()


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def policy() -> VLMPolicy:
    return VLMPolicy(TINY, INSTRUCTIONS)


def test_act_and_score_actions_agree(policy: VLMPolicy, observations: list[Observation]) -> None:
    out = policy.act(observations, generator=torch.Generator().manual_seed(0))
    assert len(out.actions) == len(observations)
    ev = policy.score_actions(observations, out.actions)
    assert ev.logprobs.requires_grad
    assert torch.allclose(out.logprobs, ev.logprobs.detach(), atol=1e-4, rtol=0)
    assert torch.allclose(out.entropies, ev.entropies.detach(), atol=1e-4, rtol=0)
    assert torch.allclose(out.values, ev.values.detach(), atol=1e-4, rtol=0)
    assert bool(ev.representable.all())
    # Reproducible given the generator's state.
    again = policy.act(observations, generator=torch.Generator().manual_seed(0))
    assert again.actions == out.actions
    assert torch.equal(again.logprobs, out.logprobs)


def test_generated_tokens_rescored_by_teacher_forcing(
    policy: VLMPolicy, observations: list[Observation]
) -> None:
    """The sampled path itself: generate's per-token log-probs summed equal one teacher-forced
    pass over the same tokens (what score_actions computes when the text is canonical)."""
    inputs = policy.prompts.inputs(observations, policy.device)
    for temperature, greedy in ((1.0, False), (0.7, False), (1.0, True)):
        decoding = Decoding(
            temperature,
            max_new_tokens=24,
            eos_token_id=policy.prompts.eos_token_id,
            pad_token_id=policy.prompts.pad_token_id,
            pool=True,
        )
        choice = Choice(greedy, torch.Generator().manual_seed(1))
        sampled = sample(policy.model, inputs, decoding, choice)
        forced = teacher_force(policy.model, inputs, sampled.tokens, decoding)
        assert torch.allclose(sampled.scores.logprobs, forced.logprobs, atol=1e-4, rtol=0)
        assert torch.allclose(sampled.scores.entropies, forced.entropies, atol=1e-4, rtol=0)
        assert torch.allclose(sampled.scores.features, forced.features, atol=1e-4, rtol=0)


def test_canonical_text_is_scored_from_the_generation(
    policy: VLMPolicy, observations: list[Observation], monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the model writes an action's canonical text, act reports generate's own sum (no
    re-scoring), and score_actions reproduces it."""
    wanted = [Action.tap(0.25, 0.5), Action.press_home()] * (len(observations) // 2)
    targets = [policy.prompts.action_ids(a, o) for a, o in zip(wanted, observations, strict=True)]
    real_sample = policy_module.sample

    def forced_sample(model, inputs, decoding, choice, tries=None):
        out = real_sample(model, inputs, decoding, choice, tries)
        scores = teacher_force(model, inputs, targets, decoding)
        return type(out)(targets, scores)

    rescored: list[int] = []
    real_score = policy._score
    monkeypatch.setattr(policy_module, "sample", forced_sample)
    monkeypatch.setattr(policy, "_score", lambda o, a: rescored.append(len(o)) or real_score(o, a))
    with torch.no_grad():
        out = policy.act(observations)
    assert out.actions == wanted
    assert rescored == []
    ev = policy.score_actions(observations, out.actions)
    assert torch.allclose(out.logprobs, ev.logprobs.detach(), atol=1e-4, rtol=0)


def test_action_token_ids_are_cached_and_bounded(
    policy: VLMPolicy, observations: list[Observation], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The action texts' token ids come from a cache that gives what tokenising afresh gives,
    hands out copies (a caller may extend its list), and starts over when full."""
    from distrl.policies.vlm import prompt as prompt_module

    prompts = policy.prompts
    action, observation = Action.type_text("cache me"), observations[0]
    fresh = [
        *prompts.tokenizer.encode(
            prompts.action_text(action, observation), add_special_tokens=False
        ),
        prompts.eos_token_id,
    ]
    first = prompts.action_ids(action, observation)
    first.append(-1)
    assert prompts.action_ids(action, observation) == fresh
    monkeypatch.setattr(prompt_module, "TOKEN_CACHE_SIZE", 2)
    prompts.action_ids(Action.type_text("one"), observation)
    prompts.action_ids(Action.type_text("two"), observation)
    assert len(prompts._token_ids) <= 2
    assert prompts.action_ids(action, observation) == fresh


def test_parser_sees_every_generated_string(
    policy: VLMPolicy, observations: list[Observation], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[object] = []
    real_parse = action_module.parse_action

    def spy(text: object) -> Action:
        seen.append(text)
        return real_parse(text)

    monkeypatch.setattr(policy_module, "parse_action", spy)
    generator = torch.Generator().manual_seed(2)
    total = 0
    for _ in range(3):
        out = policy.act(observations, generator=generator)  # random weights: mostly garbage
        total += len(observations)
        assert all(isinstance(a, Action) for a in out.actions)
    assert len(seen) == total and all(isinstance(s, str) for s in seen)
    assert any(not a.is_valid for a in out.actions)  # and garbage became INVALID, not a crash


DEMO_ACTIONS = [Action.tap(0.25, 0.5), Action.press_home(), Action.complete()] * 2


def test_cloning_log_probs_match_score_actions_without_the_critic(
    policy: VLMPolicy, observations: list[Observation], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``action_logprobs`` (what behaviour cloning reads) is ``score_actions``' log-probs, with
    gradients, and never runs the critic: cloning trains no value, and its pass was 15% of a
    cloning step."""
    expected = policy.score_actions(observations, DEMO_ACTIONS).logprobs.detach()

    def no_critic(*args: object, **kwargs: object) -> torch.Tensor:
        raise AssertionError("the critic ran")

    monkeypatch.setattr(policy.critic, "value", no_critic)
    logprobs, representable = policy.action_logprobs(observations, DEMO_ACTIONS)
    assert logprobs.requires_grad and bool(representable.all())
    assert torch.allclose(logprobs.detach(), expected, atol=1e-5, rtol=0)


def _windows(policy: VLMPolicy, observations: list[Observation]) -> list[StepWindow]:
    """Two 3-step windows of demonstrated actions with rewards, behaviour log-probs from
    ``policy``."""
    with torch.no_grad():
        logprobs = policy.score_actions(observations, DEMO_ACTIONS).logprobs
    actions = DEMO_ACTIONS
    windows = []
    for start in (0, 3):
        rows = range(start, start + 3)
        windows.append(
            StepWindow(
                trajectory_id=f"t{start}",
                task_id="task",
                start=0,
                observations=tuple(observations[i] for i in rows),
                actions=tuple(actions[i] for i in rows),
                behaviour_logprobs=tuple(float(logprobs[i]) for i in rows),
                rewards=(0.0, -0.1, 1.0 if start == 0 else 0.0),
                dones=(False, False, True),
                policy_versions=(0, 0, 0),
                bootstrap_observation=None,
                trajectory_success=start == 0,
                episode_length=3,
                first_observation=observations[start],
            )
        )
    return windows


def test_aride_loss_decreases_on_a_fixed_batch(observations: list[Observation]) -> None:
    policy = VLMPolicy(TINY, INSTRUCTIONS)
    windows = _windows(policy, observations)
    # PPO's clipped surrogate is bounded, so "the loss went down" means the update worked
    # (truncated IS on log pi is unbounded below by design).
    config = ARideConfig(policy_objective="ppo_clip")
    parameters = [p for p in policy.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(parameters, lr=1e-3)
    weights = torch.ones(len(windows))
    losses = []
    for _ in range(8):
        loss = aride_loss(policy, windows, weights, config).total
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < losses[0] - 0.05, losses


def test_lora_only_publishing_round_trips(observations: list[Observation]) -> None:
    from distrl.algos.registry import build_algorithm
    from distrl.config.schema import RunConfig
    from distrl.runtime.replay_service import ReplayBatch

    learner_policy = VLMPolicy(TINY, INSTRUCTIONS)
    learner = Learner(learner_policy, build_algorithm(RunConfig()), lr=1e-2, grad_clip=1.0)
    windows = _windows(learner_policy, observations)
    batch = ReplayBatch(windows, np.arange(2), np.zeros(2, np.int64), np.ones(2, np.float32))
    learner.update(batch)

    state, version = learner.weights()
    names = set(state)
    assert names and all("lora_" in n or n.startswith("critic.") for n in names)
    figures = learner.weights_figures()
    assert figures["published_weights_bytes"] == sum(v.numel() * 4 for v in state.values())
    assert figures["published_weights_bytes"] < figures["policy_parameter_bytes"] / 5

    worker_policy = VLMPolicy(TINY, INSTRUCTIONS)  # its own frozen base, built from the same seed
    before = worker_policy.act(observations[:2], generator=torch.Generator().manual_seed(5))
    worker_policy.load_state_dict(state)
    worker_policy.version = version
    generator = torch.Generator().manual_seed(5)
    learner_out = learner_policy.act(observations, generator=generator)
    generator = torch.Generator().manual_seed(5)
    worker_out = worker_policy.act(observations, generator=generator)
    assert worker_out.actions == learner_out.actions
    assert torch.allclose(worker_out.logprobs, learner_out.logprobs, atol=1e-5, rtol=0)
    assert torch.allclose(worker_out.values, learner_out.values, atol=1e-5, rtol=0)
    assert not torch.allclose(before.values, worker_out.values[:2])  # the update did arrive
    with pytest.raises(RuntimeError, match="missing trainable"):
        worker_policy.load_state_dict({k: v for k, v in list(state.items())[1:]})


def test_checkpoint_round_trip(
    policy: VLMPolicy, observations: list[Observation], tmp_path: Path
) -> None:
    with torch.no_grad():
        for parameter in policy.trainable_state_dict().values():
            parameter.add_(0.01)  # make the adapters non-trivial
    policy.version = 7
    path = tmp_path / "policy.pt"
    policy.save(path)
    assert path.stat().st_size < 1_000_000  # adapters and critic, not the base
    loaded = load_policy(path)
    assert isinstance(loaded, VLMPolicy) and loaded.version == 7
    actions = [Action.tap(0.5, 0.5), Action.type_text("hello")] * (len(observations) // 2)
    a, b = policy.score_actions(observations, actions), loaded.score_actions(observations, actions)
    assert torch.allclose(a.logprobs, b.logprobs, atol=1e-5, rtol=0)
    assert torch.allclose(a.values, b.values, atol=1e-5, rtol=0)


def test_separate_critic_and_trajectory_value(observations: list[Observation]) -> None:
    policy = VLMPolicy(
        VLMPolicyConfig(tiny=True, max_new_tokens=8, critic="separate"), INSTRUCTIONS
    )
    out = policy.act(observations[:2], generator=torch.Generator().manual_seed(0))
    ev = policy.score_actions(observations[:2], out.actions)
    assert torch.allclose(out.values, ev.values.detach(), atol=1e-5)
    assert torch.allclose(out.logprobs, ev.logprobs.detach(), atol=1e-4)
    assert policy.trajectory_value(observations[:2]).shape == (2,)
    assert all(n.startswith("critic.") or "lora_" in n for n in policy.trainable_state_dict())


def test_build_policy_from_config() -> None:
    cfg = load_config(None, ["policy.kind=vlm", "policy.vlm.tiny=true", "policy.vlm.lora_r=4"])
    policy = build_policy(cfg)
    assert isinstance(policy, VLMPolicy) and policy.config.lora_r == 4
    assert policy.uses_screenshots
    with pytest.raises(ConfigError, match="policy.vlm.tiny=true or policy.vlm.path"):
        load_config(None, ["policy.kind=vlm"])


def test_bad_path_is_a_one_line_input_error(tmp_path: Path) -> None:
    for path in (tmp_path / "missing", tmp_path):
        cfg = load_config(None, ["policy.kind=vlm", f"policy.vlm.path={path}"])
        with pytest.raises(InputError) as caught:
            build_policy(cfg)
        message = str(caught.value)
        assert "\n" not in message and f"policy.vlm.path={path}" in message
    (tmp_path / "config.json").write_text("{}")
    cfg = load_config(None, ["policy.kind=vlm", f"policy.vlm.path={tmp_path}"])
    with pytest.raises(InputError, match="cannot load"):
        build_policy(cfg)


def test_bad_target_modules_is_an_input_error() -> None:
    with pytest.raises(InputError, match="target_modules"):
        VLMPolicy(VLMPolicyConfig(tiny=True, target_modules=["no_such_proj"]))


def test_tiny_model_is_the_same_in_every_process() -> None:
    a, b = VLMPolicy(TINY, INSTRUCTIONS), VLMPolicy(TINY, INSTRUCTIONS)
    a_base = dict(a.model.named_parameters())
    for name, parameter in b.model.named_parameters():
        assert torch.equal(parameter, a_base[name]), name
    assert a.prompts.tokenizer.get_vocab() == b.prompts.tokenizer.get_vocab()


def test_the_tiny_model_is_sized_by_its_config(
    policy: VLMPolicy, observations: list[Observation], tmp_path: Path
) -> None:
    default = policy.model.config.get_text_config()  # the module's policy: the default size
    assert (default.hidden_size, default.num_hidden_layers) == (96, 2)
    config = VLMPolicyConfig(tiny=True, tiny_width=128, tiny_layers=3, max_new_tokens=8)
    sized = VLMPolicy(config, INSTRUCTIONS)
    text = sized.model.config.get_text_config()
    assert (text.hidden_size, text.intermediate_size, text.num_hidden_layers) == (128, 256, 3)
    out = sized.act(observations[:2], generator=torch.Generator().manual_seed(0))
    scores = sized.score_actions(observations[:2], out.actions)
    assert torch.allclose(out.logprobs, scores.logprobs.detach(), atol=1e-4)
    # A checkpoint rebuilds the base at its own size.
    sized.save(tmp_path / "policy.pt")
    loaded = load_policy(tmp_path / "policy.pt")
    assert loaded.model.config.get_text_config().num_hidden_layers == 3
    again = loaded.score_actions(observations[:2], out.actions)
    assert torch.allclose(scores.logprobs, again.logprobs, atol=1e-5, rtol=0)


def test_a_tiny_width_heads_cannot_split_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="policy.vlm.tiny_width"):
        load_config(None, ["policy.kind=vlm", "policy.vlm.tiny=true", "policy.vlm.tiny_width=100"])


def test_a_fully_trained_tiny_model_round_trips_with_its_output_layer_tied(
    tmp_path: Path,
) -> None:
    """With ``lora: false`` (the vlm-quick preset) every weight trains, the embedding among
    them; the output layer is that same tensor, before a save and after a load."""
    policy = VLMPolicy(VLMPolicyConfig(tiny=True, lora=False, max_new_tokens=8), INSTRUCTIONS)
    embedding = policy.model.get_input_embeddings().weight
    assert policy.model.get_output_embeddings().weight is embedding
    with torch.no_grad():
        embedding.add_(torch.randn_like(embedding))
    policy.save(tmp_path / "policy.pt")
    loaded = VLMPolicy.load(tmp_path / "policy.pt")
    assert loaded.model.get_output_embeddings().weight is loaded.model.get_input_embeddings().weight
    for (name, mine), (_, theirs) in zip(
        policy.named_parameters(), loaded.named_parameters(), strict=True
    ):
        assert torch.equal(mine, theirs), name


def test_critic_warmup_with_a_separate_critic_leaves_the_cloned_actor_untouched(
    observations: list[Observation],
) -> None:
    """aride.critic_warmup_updates (docs/design.md §7.8): the first updates fit the critic only;
    with policy.vlm.critic=separate nothing the VLM acts with moves until the warm-up ends."""
    from distrl.algos.registry import build_algorithm
    from distrl.config.schema import RunConfig

    policy = VLMPolicy(
        VLMPolicyConfig(tiny=True, max_new_tokens=8, critic="separate"), INSTRUCTIONS
    )
    config = RunConfig.model_validate({"aride": {"critic_warmup_updates": 2}})
    learner = Learner(policy, build_algorithm(config), lr=1e-2, grad_clip=1.0)
    windows = _windows(policy, observations)
    weights = torch.ones(len(windows))

    def actor_and_critic() -> tuple[torch.Tensor, torch.Tensor]:
        with torch.no_grad():
            return (
                policy.score_actions(observations, DEMO_ACTIONS).logprobs,
                policy.value(observations),
            )

    start_logp, start_values = actor_and_critic()
    for _ in range(2):
        step = learner.step(windows, weights)
        assert step.metrics["critic_warmup"] == 1.0
    warm_logp, warm_values = actor_and_critic()
    assert torch.equal(warm_logp, start_logp)
    assert not torch.allclose(warm_values, start_values)

    step = learner.step(windows, weights)  # the warm-up is over: the policy term is back
    assert step.metrics["critic_warmup"] == 0.0
    assert not torch.allclose(actor_and_critic()[0], start_logp)


def test_length_groups_change_padding_not_scores_or_gradients(
    oracle_demos: list[Demo], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The learner scores a batch's prompts in groups of similar length (``score_groups``): every
    row's log-prob, entropy and value and the gradients equal those of one padded batch, in the
    caller's order. The prompts list the screen's elements and the previous action, so the
    longest is more than half again as long as the shortest."""
    demos = oracle_demos[:6]
    observations = [o for d in demos for o in d.observations][:24]
    actions = [a for d in demos for a in d.actions][:24]
    config = VLMPolicyConfig(
        tiny=True, max_new_tokens=24, element_list=True, history=1, admissible_actions=True
    )
    one = VLMPolicy(config.model_copy(update={"score_groups": 1}), INSTRUCTIONS)
    grouped = VLMPolicy(config.model_copy(update={"score_groups": 3}), INSTRUCTIONS)
    grouped.load_state_dict(one.state_dict())
    lengths = one.prompts.text_lengths([one.prompts.chat(o) for o in observations])
    assert max(lengths) > 1.5 * min(lengths)  # the groups pad less than the batch
    assert len(length_groups(lengths, 3, policy_module._MIN_GROUP).rows) == 3
    group_sizes: list[int] = []
    score_group = grouped._score_group

    def counted(observations, actions, texts):  # type: ignore[no-untyped-def]
        group_sizes.append(len(observations))
        return score_group(observations, actions, texts)

    monkeypatch.setattr(grouped, "_score_group", counted)
    results = []
    for policy in (one, grouped):
        scores = policy.score_actions(observations, actions)
        loss = -scores.logprobs.mean() - scores.entropies.mean() + scores.values.pow(2).mean()
        loss.backward()
        grads = [p.grad.clone() for p in policy.parameters() if p.grad is not None]
        results.append((scores, grads))
    # The grouped policy really scored three padded batches, every row once.
    assert len(group_sizes) == 3 and sum(group_sizes) == len(observations)
    (plain, plain_grads), (by_group, group_grads) = results
    for field in ("logprobs", "entropies", "values"):
        assert torch.allclose(getattr(plain, field), getattr(by_group, field), atol=1e-4), field
    assert len(plain_grads) == len(group_grads) > 0
    for a, b in zip(plain_grads, group_grads, strict=True):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-3)
