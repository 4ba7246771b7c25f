"""The concurrent worker: devices at their own pace, faults, hangs, sync quotas, backpressure."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
import torch

from distrl.config.schema import LatencyConfig, PhoneSimConfig
from distrl.core.action import Action
from distrl.core.faults import DeviceFault
from distrl.core.observation import Observation
from distrl.core.task import Task
from distrl.core.trajectory import Trajectory
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.policies.small import SmallPolicy, SmallPolicyConfig
from distrl.runtime.async_worker import AsyncWorker
from distrl.runtime.task_sampler import TaskSampler

TASKS = load_suite("general", "train")


def _latency(**overrides: Any) -> PhoneSimConfig:
    latency = LatencyConfig(enabled=True, time_scale=0.002, **overrides)
    return PhoneSimConfig(latency=latency)


def _worker(make_device, devices: int = 4, **kwargs: Any) -> AsyncWorker:  # noqa: ANN001
    return AsyncWorker(
        make_device,
        devices,
        SmallPolicy(SmallPolicyConfig()),
        TaskSampler(TASKS, 0),
        seed=0,
        **kwargs,
    )


def _is_complete(trajectory: Trajectory) -> bool:
    dones = [s.done for s in trajectory.steps]
    return bool(dones) and dones[-1] and not any(dones[:-1])


def test_runs_exactly_the_quota_and_steps_carry_behaviour_logprobs() -> None:
    config = _latency()
    worker = _worker(lambda i, n: PhoneSimEnv(config, seed=i * 10 + n, device_id=f"d{i}"))
    finished: list[Trajectory] = []
    assert worker.run(finished.append, max_episodes=9) == 9
    assert len(finished) == 9 and all(_is_complete(t) for t in finished)
    # Devices finish their episodes at their own pace, not in lockstep.
    assert len({t.device_id for t in finished}) == 4
    assert all(not (s.episode or s.call) for s in worker.slots)  # quota met: all idle
    steps = [s for t in finished for s in t.steps]
    scores = worker.policy.score_actions([s.observation for s in steps], [s.action for s in steps])
    recorded = torch.tensor([s.behaviour_logprob for s in steps])
    assert torch.allclose(scores.logprobs.detach(), recorded, atol=1e-5)
    assert worker.stats.busy_seconds > 0
    worker.close()


def test_device_faults_drop_partial_episodes_and_restart_the_device() -> None:
    config = _latency(crash_prob=0.08, hang_prob=0.04, hang_timeout_seconds=1.0)
    worker = _worker(lambda i, n: PhoneSimEnv(config, seed=i * 10 + n, device_id=f"d{i}"))
    finished: list[Trajectory] = []
    worker.run(finished.append, max_episodes=30)
    stats = worker.stats
    assert len(finished) == stats.episodes == 30
    assert stats.crashes > 0 and stats.hangs > 0 and stats.dropped > 0
    assert all(_is_complete(t) for t in finished)  # no partial episode is handed out
    # Every dropped episode has its cause, with the device's own message.
    drops = worker.take_drops()
    assert drops.count == stats.dropped == sum(drops.causes.values())
    assert set(drops.causes) <= {"DeviceCrashed", "DeviceHung"}
    assert all("device d" in drops.examples[cause] for cause in drops.causes)
    assert worker.take_drops().count == 0  # taken once
    worker.close()


class _StuckDevice:
    """A device whose n-th step never returns on its own (an adb call that hangs)."""

    def __init__(self, inner: PhoneSimEnv, stuck_at_step: int | None):
        self.inner, self.stuck_at_step = inner, stuck_at_step
        self.device_id = inner.device_id
        self.released = threading.Event()
        self.steps = 0
        self.closed = False

    def reset(self, task: Task) -> Observation:
        return self.inner.reset(task)

    def step(self, action: Action) -> tuple[Observation, float, bool, dict[str, Any]]:
        self.steps += 1
        if self.steps == self.stuck_at_step:
            self.released.wait(timeout=30)
            raise DeviceFault("released by the test")
        return self.inner.step(action)

    def close(self) -> None:
        self.closed = True


def test_a_step_past_the_timeout_replaces_the_device() -> None:
    made: list[_StuckDevice] = []

    def make_device(index: int, incarnation: int) -> _StuckDevice:
        stuck = 2 if (index, incarnation) == (0, 0) else None
        device = _StuckDevice(PhoneSimEnv(seed=index * 10 + incarnation), stuck)
        made.append(device)
        return device

    worker = _worker(make_device, devices=2, step_timeout_seconds=0.3)
    finished: list[Trajectory] = []
    started = time.monotonic()
    worker.run(finished.append, max_episodes=6)
    assert time.monotonic() - started < 20  # the hung call did not hold the worker
    assert worker.stats.hangs == 1 and worker.stats.replaced == 1 and worker.stats.dropped == 1
    drops = worker.take_drops()
    assert drops.causes == {"DeviceHung": 1}
    assert "did not answer a step" in drops.examples["DeviceHung"]
    assert len(made) == 3 and worker.slots[0].device is made[2]
    made[0].released.set()  # let the abandoned call end; the old device is then closed
    deadline = time.monotonic() + 5
    while not made[0].closed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert made[0].closed
    assert len(finished) == 6 and all(_is_complete(t) for t in finished)
    worker.close()


def test_no_episode_starts_while_backpressure_holds() -> None:
    worker = _worker(lambda i, n: PhoneSimEnv(seed=i), devices=3)
    allowed = {"n": 2}

    def may_start() -> bool:
        if allowed["n"] == 0:
            return False
        allowed["n"] -= 1
        return True

    finished: list[Trajectory] = []
    deadline = time.monotonic() + 120.0  # only a hung test reaches it
    idle_since: list[float] = []

    def should_stop() -> bool:
        # Stop half a second after both allowed episodes finished: time enough for a device to
        # start a third episode if the worker ignored ``may_start``. Counting from the finish,
        # not from the start of the run, keeps this independent of the machine's load.
        if len(finished) >= 2 and not idle_since:
            idle_since.append(time.monotonic())
        return (
            time.monotonic() > deadline
            or bool(idle_since)
            and (time.monotonic() - idle_since[0] > 0.5)
        )

    worker.run(finished.append, may_start=may_start, should_stop=should_stop)
    assert len(finished) == 2  # two starts allowed, then the devices stayed idle
    assert all(slot.episode is None for slot in worker.slots)  # and none started a third
    worker.close()


def test_a_device_that_never_resets_is_replaced_then_reported() -> None:
    class DeadDevice:
        device_id = "dead"

        def reset(self, task: Task) -> Observation:
            raise DeviceFault("emulator does not boot")

        def step(self, action: Action) -> Any:
            raise AssertionError("never reached")

        def close(self) -> None:
            pass

    worker = _worker(lambda i, n: DeadDevice(), devices=1)
    with pytest.raises(DeviceFault, match="backend down"):
        worker.run(lambda t: None, max_episodes=1)
    worker.close()
