"""Dynamic batching without Ray: requests from many threads run as one policy batch, each caller
gets exactly its own rows, and a batched row acts exactly as it would alone (greedy, and sampled
from the same seeds), for the small policy and the tiny VLM (docs/design.md §2.1)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import pytest
import torch

from distrl.config.schema import VLMPolicyConfig
from distrl.core.action import Action
from distrl.core.observation import Observation
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite, suite_instructions
from distrl.policies.base import Policy, PolicyOutput
from distrl.policies.small import SmallPolicy, SmallPolicyConfig
from distrl.runtime.inference.batcher import ActRequest, DynamicBatcher


@pytest.fixture(scope="module")
def observations() -> list[Observation]:
    """Screens of different sizes (element counts differ, so a batch pads rows)."""
    env = PhoneSimEnv(seed=4)
    out = []
    for task in load_suite("general", "train")[:4] + load_suite("webshop", "train")[:2]:
        obs = env.reset(task)
        out.append(obs)
        obs, _, _, _ = env.step(Action.press_home())
        out.append(obs)
    return out


def _requests(observations: list[Observation]) -> list[list[Observation]]:
    """Callers with 1, 2, 3 and 4 observations each."""
    cuts, start, out = (1, 2, 3, 4), 0, []
    for size in cuts:
        out.append(observations[start : start + size])
        start += size
    return out


def _seeds(caller: int, size: int) -> list[int]:
    generator = torch.Generator().manual_seed(1000 + caller)
    return [int(s) for s in torch.randint(0, 2**62, (size,), generator=generator)]


def _run_together(
    policy: Policy, requests: list[list[Observation]], greedy: bool
) -> tuple[list[PolicyOutput], DynamicBatcher]:
    """Submit every request before the batch may start, so all of them share it."""
    batcher = DynamicBatcher(
        lambda obs, g, seeds: policy.act(obs, greedy=g, seeds=seeds),
        max_batch_size=sum(map(len, requests)),
        max_wait_ms=60_000,
    )
    submitted = [
        batcher.submit(ActRequest(obs, greedy, None if greedy else _seeds(i, len(obs))))
        for i, obs in enumerate(requests)
    ]
    outputs = [r.reply.result(timeout=120) for r in submitted]
    batcher.close()
    return outputs, batcher


def _assert_batched_equals_alone(policy: Policy, observations: list[Observation]) -> None:
    requests = _requests(observations)
    for greedy in (True, False):
        outputs, batcher = _run_together(policy, requests, greedy)
        assert batcher.batches == 1 and batcher.rows == sum(map(len, requests))
        for caller, (obs, together) in enumerate(zip(requests, outputs, strict=True)):
            alone = policy.act(
                obs, greedy=greedy, seeds=None if greedy else _seeds(caller, len(obs))
            )
            assert together.actions == alone.actions
            assert len(together.actions) == len(obs)
            assert torch.allclose(together.logprobs, alone.logprobs, atol=1e-4, rtol=0)
            assert torch.allclose(together.entropies, alone.entropies, atol=1e-4, rtol=0)
            assert torch.allclose(together.values, alone.values, atol=1e-4, rtol=0)
            assert together.version == alone.version == policy.version


def test_small_policy_batched_rows_act_as_alone(observations: list[Observation]) -> None:
    policy = SmallPolicy(SmallPolicyConfig())
    policy.version = 7
    _assert_batched_equals_alone(policy, observations)


def test_tiny_vlm_batched_rows_act_as_alone(observations: list[Observation]) -> None:
    pytest.importorskip("transformers")
    pytest.importorskip("peft")
    from distrl.policies.vlm import VLMPolicy

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        policy = VLMPolicy(VLMPolicyConfig(tiny=True, max_new_tokens=24), suite_instructions())
        _assert_batched_equals_alone(policy, observations[:10])
    finally:
        torch.set_num_threads(threads)


def test_per_row_seeds_make_a_row_independent_of_its_batch(
    observations: list[Observation],
) -> None:
    """The same row and seed act the same in any company, and different seeds explore."""
    policy = SmallPolicy(SmallPolicyConfig())
    row = observations[3]
    alone = policy.act([row], seeds=[11])
    among = policy.act([observations[0], row, observations[7]], seeds=[5, 11, 6])
    assert among.actions[1] == alone.actions[0]
    assert torch.allclose(among.logprobs[1], alone.logprobs[0], atol=1e-5)
    draws = {str(policy.act([row], seeds=[seed]).actions[0]) for seed in range(40)}
    assert len(draws) > 1
    with pytest.raises(ValueError, match="seeds"):
        policy.act([row, row], seeds=[1])


class _RecordingRunner:
    """A batch runner that records the batch sizes it saw and answers with NOOP-like rows."""

    def __init__(self, gate: threading.Event | None = None):
        self.sizes: list[int] = []
        #: While unset, the first batch holds the batching thread (as a long forward pass
        #: would), so every later request queues behind it.
        self.gate = gate

    def __call__(
        self, observations: Sequence[Observation], greedy: bool, seeds: Sequence[int] | None
    ) -> PolicyOutput:
        self.sizes.append(len(observations))
        if self.gate is not None:
            assert self.gate.wait(timeout=30), "the test never opened the gate"
        rows = len(observations)
        marks = torch.tensor([float(seeds[i]) if seeds else -1.0 for i in range(rows)])
        return PolicyOutput([Action.press_back()] * rows, marks, marks, marks, version=3)


def test_a_full_batch_starts_without_waiting(observations: list[Observation]) -> None:
    runner = _RecordingRunner()
    batcher = DynamicBatcher(runner, max_batch_size=4, max_wait_ms=60_000)
    started = time.monotonic()
    replies = [batcher.submit(ActRequest(observations[:2], False, [i, i + 100])) for i in (1, 2)]
    outputs = [r.reply.result(timeout=10) for r in replies]
    batcher.close()
    assert time.monotonic() - started < 5  # did not wait for the 60 s deadline
    assert runner.sizes == [4]
    # Each caller got its own rows back, in order, with the version that acted.
    assert [o.logprobs.tolist() for o in outputs] == [[1.0, 101.0], [2.0, 102.0]]
    assert {o.version for o in outputs} == {3}


def test_a_lone_request_runs_after_max_wait(observations: list[Observation]) -> None:
    runner = _RecordingRunner()
    batcher = DynamicBatcher(runner, max_batch_size=64, max_wait_ms=50)
    started = time.monotonic()
    output = batcher.act(observations[:1], greedy=True, seeds=None, timeout=10)
    waited = time.monotonic() - started
    batcher.close()
    assert 0.04 <= waited < 5 and runner.sizes == [1] and len(output.actions) == 1


def test_many_threads_share_batches_and_never_mix_rows(observations: list[Observation]) -> None:
    gate = threading.Event()
    runner = _RecordingRunner(gate)
    batcher = DynamicBatcher(runner, max_batch_size=8, max_wait_ms=5)
    submitted = threading.Barrier(25)  # 24 callers and this thread
    results: dict[int, list[float]] = {}

    def caller(index: int) -> None:
        seeds = [index * 10 + k for k in range(1 + index % 3)]
        request = batcher.submit(ActRequest(observations[: len(seeds)], False, seeds))
        submitted.wait(timeout=30)
        results[index] = request.reply.result(timeout=30).logprobs.tolist()

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(24)]
    for thread in threads:
        thread.start()
    submitted.wait(timeout=30)  # every request is queued (at most one batch holds the gate)
    gate.set()
    for thread in threads:
        thread.join(timeout=60)
    batcher.close()
    assert results == {i: [float(i * 10 + k) for k in range(1 + i % 3)] for i in range(24)}
    # 48 rows: the batch that held the gate, then full batches of up to 8 rows.
    assert sum(runner.sizes) == 48 and max(runner.sizes) <= 8
    assert len(runner.sizes) <= 1 + 48 // 6  # requests did share batches


def test_greedy_and_sampled_requests_run_in_separate_batches(
    observations: list[Observation],
) -> None:
    runner = _RecordingRunner()
    batcher = DynamicBatcher(runner, max_batch_size=3, max_wait_ms=60_000)
    sampled = batcher.submit(ActRequest(observations[:1], False, [9]))
    greedy = batcher.submit(ActRequest(observations[:1], True, None))
    more = batcher.submit(ActRequest(observations[:2], False, [1, 2]))
    assert sampled.reply.result(timeout=10).logprobs.tolist() == [9.0]
    assert more.reply.result(timeout=10).logprobs.tolist() == [1.0, 2.0]
    batcher.close()  # the lone greedy request never filled a batch: it fails, it does not hang
    with pytest.raises(RuntimeError, match="closed"):
        greedy.reply.result(timeout=10)
    assert runner.sizes == [3]


def test_a_failing_batch_fails_each_of_its_callers(observations: list[Observation]) -> None:
    def broken(*_: object) -> PolicyOutput:
        raise RuntimeError("CUDA out of memory")

    batcher = DynamicBatcher(broken, max_batch_size=1, max_wait_ms=0)
    with pytest.raises(RuntimeError, match="out of memory"):
        batcher.act(observations[:1], greedy=True, seeds=None, timeout=10)
    batcher.close()


def test_bad_requests_are_refused(observations: list[Observation]) -> None:
    with pytest.raises(ValueError, match="seed per observation"):
        ActRequest(observations[:2], False, [1])
    with pytest.raises(ValueError, match="at least one"):
        ActRequest([], True, None)
