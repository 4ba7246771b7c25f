"""The small policy can fit oracle demonstrations by behaviour cloning (the capacity check behind
warm starts): a few hundred Adam steps on five episodes drive the NLL near zero, and the greedy
policy then replays those episodes on the simulator, action for action, to success."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import torch

from distrl.core.task import Task
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.policies.small import SmallPolicy, SmallPolicyConfig

if TYPE_CHECKING:
    from conftest import Demo

BC_STEPS = 400
NLL_THRESHOLD = 0.05


def test_small_policy_overfits_a_handful_of_oracle_demos(
    run_oracle: Callable[[Task, int], Demo],
) -> None:
    general, webshop = load_suite("general", "train"), load_suite("webshop", "train")
    # Five episodes over different templates: settings/app tasks, typing, web shopping.
    tasks = [general[0], general[5], general[7], webshop[1], webshop[4]]
    demos: list[Demo] = [run_oracle(task, env_seed=40 + i) for i, task in enumerate(tasks)]
    assert all(d.success for d in demos)
    observations = [o for d in demos for o in d.observations]
    actions = [a for d in demos for a in d.actions]

    torch.manual_seed(0)
    policy = SmallPolicy(SmallPolicyConfig())
    batch = policy.featurize(observations)  # featurise once, reuse every step
    targets = policy.targets(batch, actions)
    assert bool(targets.representable.all())
    optimizer = torch.optim.Adam(policy.parameters(), lr=3e-3)
    initial_nll = float(-policy.score(batch, targets).logprobs.mean().detach())
    for _ in range(BC_STEPS):
        nll = -policy.score(batch, targets).logprobs.mean()
        optimizer.zero_grad()
        nll.backward()
        optimizer.step()
    final_nll = float(-policy.score(batch, targets).logprobs.mean().detach())
    assert final_nll < NLL_THRESHOLD < initial_nll, (initial_nll, final_nll)

    # Teacher-forced: on every demo state, the greedy action is the oracle's composite action.
    greedy = policy.targets(batch, policy.act(observations, greedy=True).actions)
    for field in ("kinds", "elements", "candidates"):
        assert torch.equal(getattr(greedy, field), getattr(targets, field)), field

    # Closed loop: the same env seeds rebuild the same phones; the greedy policy succeeds.
    for demo in demos:
        env = PhoneSimEnv(seed=demo.env_seed)
        obs = env.reset(demo.task)
        done, reward, steps = False, 0.0, 0
        while not done:
            obs, reward, done, _ = env.step(policy.act([obs], greedy=True).actions[0])
            steps += 1
        assert reward == 1.0, demo.task.instruction
        assert steps <= len(demo.actions) + 2
