"""A worker whose K devices run concurrently, each at its own pace (the async runtime's worker).

Real devices are latency-bound: a step is seconds of waiting for the screen to settle, a reset
tens of seconds. So each device gets its own thread for reset/step calls, and the worker's loop
only does what needs the policy: whenever some devices are waiting for an action, it acts for all
of them in one batch. A device whose episode ends starts the next one at once (if ``may_start``
allows: that is where backpressure and a sync round's fixed share come in).

Faults: a :class:`~distrl.core.faults.DeviceFault` from a reset or step drops the partial
episode (counted) and the next reset restarts the device. A call that does not return within
``step_timeout_seconds`` is a hang the device cannot report itself: the worker abandons the
device (its thread is left to finish or die), builds a replacement with ``make_device`` and drops
the episode. An :class:`~distrl.core.faults.InferenceUnavailable` (the inference service stayed
down) drops the episodes that waited for that action. A partial episode is never handed out.

Utilisation is measured, not assumed: ``busy_seconds`` is the time devices spent inside reset or
step calls; everything else (waiting for the policy, for a free slot in a sync round) is idle.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

import torch

from distrl.core.action import Action
from distrl.core.faults import DeviceFault, DeviceHung, InferenceUnavailable
from distrl.core.task import Task
from distrl.core.trajectory import Trajectory
from distrl.envs.protocol import DeviceEnv
from distrl.runtime.acting import ActingWorker, ActionSource
from distrl.runtime.drops import DropLog
from distrl.runtime.episode import EpisodeInProgress

#: A device that fails this many resets in a row is replaced by a fresh one.
MAX_RESET_ATTEMPTS = 5
#: Replacements in a row without one good reset: the backend is down, not one device.
MAX_REPLACEMENTS = 3


@dataclass
class CollectStats:
    episodes: int = 0
    steps: int = 0
    #: Partial episodes lost to device faults (crash, hang, timeout), never handed out; their
    #: causes are in :attr:`AsyncWorker.drops`.
    dropped: int = 0
    crashes: int = 0
    hangs: int = 0
    #: Devices rebuilt after a timeout or repeated reset failures.
    replaced: int = 0
    busy_seconds: float = 0.0

    def merge(self, other: CollectStats) -> None:
        for name, value in vars(other).items():
            setattr(self, name, getattr(self, name) + value)


@dataclass
class _Call:
    kind: str  # "reset" or "step"
    started: float
    task: Task | None = None
    action: Action | None = None
    logprob: float = 0.0
    entropy: float = 0.0
    version: int = 0


@dataclass
class _Slot:
    device: DeviceEnv
    executor: ThreadPoolExecutor
    incarnation: int = 0
    episode: EpisodeInProgress | None = None
    call: Future[Any] | None = None
    call_info: _Call | None = None
    reset_failures: int = 0
    replacements_in_a_row: int = 0
    waiting_for_action: bool = False
    device_id: str = field(default="")


class AsyncWorker(ActingWorker):
    """Runs episodes on ``num_devices`` devices built by ``make_device(index, incarnation)``."""

    def __init__(
        self,
        make_device: Callable[[int, int], DeviceEnv],
        num_devices: int,
        policy: ActionSource,
        next_task: Callable[[], Task],
        *,
        worker_id: str = "worker-0",
        seed: int = 0,
        greedy: bool = False,
        step_timeout_seconds: float = 300.0,
    ):
        if num_devices < 1:
            raise ValueError("a worker needs at least one device")
        super().__init__(policy, next_task, worker_id=worker_id, seed=seed, greedy=greedy)
        self.make_device = make_device
        self.step_timeout_seconds = step_timeout_seconds
        self.stats = CollectStats()
        #: Why episodes were dropped, since the last :meth:`take_drops`.
        self.drops = DropLog()
        self.slots = [self._new_slot(i, 0) for i in range(num_devices)]

    def _new_slot(self, index: int, incarnation: int) -> _Slot:
        device = self.make_device(index, incarnation)
        executor = ThreadPoolExecutor(1, thread_name_prefix=f"{self.worker_id}-dev{index}")
        device_id = str(getattr(device, "device_id", f"device-{index}"))
        return _Slot(device, executor, incarnation, device_id=device_id)

    def take_drops(self) -> DropLog:
        """The drops since the last call (their causes travel with a period's figures)."""
        drops, self.drops = self.drops, DropLog()
        return drops

    # -- the loop ----------------------------------------------------------------------------------
    def run(
        self,
        on_finished: Callable[[Trajectory], None],
        *,
        max_episodes: int | None = None,
        may_start: Callable[[], bool] = lambda: True,
        should_stop: Callable[[], bool] = lambda: False,
        poll_seconds: float = 0.05,
    ) -> int:
        """Run until ``max_episodes`` episodes finished (a sync round: devices that are done with
        their share stay idle) or ``should_stop()``. Episodes in flight at a stop are kept and
        continue on the next call. Returns the number of episodes finished by this call."""
        finished = 0
        while True:
            in_flight = sum(1 for s in self.slots if s.episode is not None or s.call is not None)
            quota_left = max_episodes is None or finished + in_flight < max_episodes
            stopping = should_stop()
            if not stopping and quota_left:
                for index, slot in enumerate(self.slots):
                    if slot.call is None and slot.episode is None:
                        if max_episodes is not None and finished + in_flight >= max_episodes:
                            break
                        if not may_start():
                            break
                        self._submit_reset(index)
                        in_flight += 1
            self._act_for_waiting_devices()
            calls = {s.call: i for i, s in enumerate(self.slots) if s.call is not None}
            if max_episodes is not None and finished >= max_episodes:
                return finished
            if stopping or (not calls and not quota_left):
                return finished
            if not calls:  # backpressure: nothing running and nothing may start yet
                time.sleep(poll_seconds)
                continue
            done, _ = wait(list(calls), timeout=poll_seconds, return_when=FIRST_COMPLETED)
            for future in done:
                finished += self._complete(calls[future], on_finished)
            self._replace_timed_out_devices()

    def _submit_reset(self, index: int) -> None:
        slot = self.slots[index]
        task = self.next_task()
        slot.call_info = _Call("reset", time.monotonic(), task=task)
        slot.call = slot.executor.submit(slot.device.reset, task)

    def _act_for_waiting_devices(self) -> None:
        waiting = [i for i, s in enumerate(self.slots) if s.waiting_for_action]
        if not waiting:
            return
        observations = []
        for i in waiting:
            episode = self.slots[i].episode
            assert episode is not None
            observations.append(episode.observation)
        try:
            with torch.no_grad():
                output = self.act(observations)
        except InferenceUnavailable as fault:
            self._drop_waiting(waiting, fault)
            return
        for k, index in enumerate(waiting):
            slot = self.slots[index]
            action = output.actions[k]
            slot.waiting_for_action = False
            slot.call_info = _Call(
                "step",
                time.monotonic(),
                action=action,
                logprob=float(output.logprobs[k]),
                entropy=float(output.entropies[k]),
                version=output.version,
            )
            slot.call = slot.executor.submit(slot.device.step, action)

    def _drop_waiting(self, waiting: list[int], fault: InferenceUnavailable) -> None:
        """No action came for these devices' steps: drop their episodes (never recorded with a
        guessed action or version); each device's next reset starts afresh."""
        for index in waiting:
            slot = self.slots[index]
            slot.episode = None
            slot.waiting_for_action = False
            self.stats.dropped += 1
            self.drops.record(fault)

    def _complete(self, index: int, on_finished: Callable[[Trajectory], None]) -> int:
        """Book a finished reset/step call; returns 1 if it ended an episode."""
        slot = self.slots[index]
        future, info = slot.call, slot.call_info
        assert future is not None and info is not None
        slot.call, slot.call_info = None, None
        self.stats.busy_seconds += time.monotonic() - info.started
        try:
            result = future.result()
        except DeviceFault as fault:
            self._on_fault(index, info, fault)
            return 0
        if info.kind == "reset":
            assert info.task is not None
            slot.episode = EpisodeInProgress(info.task, result)
            slot.reset_failures = 0
            slot.replacements_in_a_row = 0
            slot.waiting_for_action = True
            return 0
        episode = slot.episode
        assert episode is not None and info.action is not None
        self.stats.steps += 1
        done = episode.record(
            info.action,
            result,
            logprob=info.logprob,
            entropy=info.entropy,
            policy_version=info.version,
        )
        if not done:
            slot.waiting_for_action = True
            return 0
        slot.episode = None
        self.stats.episodes += 1
        on_finished(episode.finish(self.worker_id, slot.device_id))
        return 1

    def _on_fault(self, index: int, info: _Call, fault: DeviceFault) -> None:
        slot = self.slots[index]
        if isinstance(fault, DeviceHung):
            self.stats.hangs += 1
        else:
            self.stats.crashes += 1
        if info.kind == "step":
            self.stats.dropped += 1
            self.drops.record(fault)
            slot.episode = None
            slot.waiting_for_action = False
            return
        slot.reset_failures += 1  # the next reset is the restart; replace a device that won't
        if slot.reset_failures >= MAX_RESET_ATTEMPTS:
            self._replace(index)

    def _replace_timed_out_devices(self) -> None:
        now = time.monotonic()
        for index, slot in enumerate(self.slots):
            info = slot.call_info
            if info is None or now - info.started < self.step_timeout_seconds:
                continue
            self.stats.hangs += 1
            self.stats.busy_seconds += now - info.started
            if slot.episode is not None:
                self.stats.dropped += 1
                self.drops.record(
                    DeviceHung(
                        f"{self.worker_id}: {slot.device_id} did not answer a {info.kind} "
                        f"within {self.step_timeout_seconds:g} s; the device was replaced"
                    )
                )
            self._replace(index)

    def _replace(self, index: int) -> None:
        """Abandon device ``index`` (closing it after whatever call it is stuck in) and build a
        fresh one in its slot."""
        old = self.slots[index]
        if old.replacements_in_a_row >= MAX_REPLACEMENTS:
            raise DeviceFault(
                f"{self.worker_id}: device {index} still fails after {MAX_REPLACEMENTS} "
                "replacements; is the device backend down?"
            )
        old.executor.submit(old.device.close)
        old.executor.shutdown(wait=False)
        slot = self._new_slot(index, old.incarnation + 1)
        slot.replacements_in_a_row = old.replacements_in_a_row + 1
        self.slots[index] = slot
        self.stats.replaced += 1

    def close(self) -> None:
        """Close every device (after its current call) and stop the device threads."""
        for slot in self.slots:
            slot.executor.submit(slot.device.close)
            slot.executor.shutdown(wait=False)
