"""Multi-process learner updates (torch DDP over gloo) against the single-process learner."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from distrl.algos.aride import aride_loss_fn
from distrl.algos.registry import build_algorithm
from distrl.algos.step_window import StepWindow
from distrl.config.loader import load_config
from distrl.config.schema import ARideConfig, VLMPolicyConfig
from distrl.core.action import Action
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite, suite_instructions
from distrl.policies.vlm import VLMPolicy
from distrl.runtime.ddp import ddp_update, split_windows
from distrl.runtime.learner import Learner
from distrl.runtime.replay_service import ReplayBatch

TINY = VLMPolicyConfig(tiny=True, max_new_tokens=8)
LR, CLIP = 1e-2, 1.0
#: What a run trains the tiny model's tokenizer on (see distrl.runtime.components.build_policy).
INSTRUCTIONS = suite_instructions()


@pytest.fixture(scope="module")
def windows() -> list[StepWindow]:
    """Four windows of unequal length (1-3 steps) with behaviour log-probs and rewards."""
    policy = VLMPolicy(TINY, INSTRUCTIONS)
    env = PhoneSimEnv(seed=4)
    actions = [Action.tap(0.3, 0.5), Action.press_home(), Action.type_text("alarm")]
    out = []
    for index, task in enumerate(load_suite("general", "train")[:4]):
        observations = [env.reset(task)]
        length = 1 + index % 3
        for action in actions[: length - 1]:
            observations.append(env.step(action)[0])
        taken = actions[:length]
        with torch.no_grad():
            behaviour = policy.score_actions(observations, taken).logprobs
        out.append(
            StepWindow(
                trajectory_id=f"t{index}",
                task_id=task.task_id,
                start=0,
                observations=tuple(observations),
                actions=tuple(taken),
                behaviour_logprobs=tuple(float(x) - 0.1 * index for x in behaviour),
                rewards=tuple([-0.01] * (length - 1) + [float(index % 2)]),
                dones=tuple([False] * (length - 1) + [True]),
                policy_versions=(0,) * length,
                bootstrap_observation=None,
                trajectory_success=bool(index % 2),
                episode_length=length,
                first_observation=observations[0],
            )
        )
    return out


def _single_process(windows, config: ARideConfig, accumulation: int) -> dict[str, torch.Tensor]:
    cfg = load_config(None, [])
    cfg.aride = config
    policy = VLMPolicy(TINY, INSTRUCTIONS)
    learner = Learner(
        policy, build_algorithm(cfg), lr=LR, grad_clip=CLIP, accumulation=accumulation
    )
    n = len(windows)
    learner.update(
        ReplayBatch(windows, np.arange(n), np.zeros(n, np.int64), np.ones(n, np.float32))
    )
    return learner.weights()[0]


def _two_processes(windows, config: ARideConfig):
    start = VLMPolicy(TINY, INSTRUCTIONS).trainable_state_dict()
    return ddp_update(
        functools.partial(VLMPolicy, TINY, INSTRUCTIONS),
        {k: v.clone() for k, v in start.items()},
        windows,
        torch.ones(len(windows)),
        functools.partial(aride_loss_fn, config),
        world_size=2,
        lr=LR,
        grad_clip=CLIP,
    )


#: How far two first Adam steps may differ. The step is ``lr * g / (|g| + eps)``, whose slope at
#: g = 0 is ``lr / eps`` = 1e6: a gradient element of eps's size (the tiny model has some) turns
#: the ~1e-10 by which two summation orders differ into ~1e-5 of weight. Elements with larger
#: gradients move by ~lr = 1e-2, so 1e-4 still fails any step that differs in substance.
STEP_TOLERANCE = LR * 1e-2


def _assert_same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    for name in a:
        assert torch.allclose(a[name], b[name], atol=STEP_TOLERANCE, rtol=0), name


def test_split_windows_is_contiguous_and_covers_everything() -> None:
    assert split_windows(5, 2) == [slice(0, 3), slice(3, 5)]
    assert split_windows(2, 4) == [slice(0, 1), slice(1, 2)]


def test_gloo_ddp_update_equals_single_process_update(windows) -> None:
    """With advantage standardisation off (it is per micro-batch), 2 DDP processes take exactly
    the plain full-batch step."""
    plain = ARideConfig(normalize_advantages=False)
    result = _two_processes(windows, plain)
    single = _single_process(windows, plain, accumulation=1)
    _assert_same(result.state, single)
    moved = VLMPolicy(TINY, INSTRUCTIONS).trainable_state_dict()
    assert any(not torch.equal(single[k], moved[k]) for k in single)  # the step did something
    assert result.priorities.shape == (len(windows),)
    assert np.isfinite(result.metrics["loss"])


def test_gradient_accumulation_equals_the_full_batch_step(windows) -> None:
    plain = ARideConfig(normalize_advantages=False)
    _assert_same(
        _single_process(windows, plain, accumulation=3),
        _single_process(windows, plain, accumulation=1),
    )
