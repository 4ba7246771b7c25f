"""A worker: K devices driven by one local copy of the policy, producing finished trajectories.

The serial runtime steps the K devices in lockstep so the policy acts on a batch of K observations
at once (one forward pass instead of K). Each step is tagged with the behaviour policy's log-prob,
entropy and weights version, which the learner needs for importance ratios and staleness. A device
that crashes or hangs is restarted by its next reset; its partial episode is dropped and counted,
never returned.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from distrl.core.faults import DeviceFault
from distrl.core.task import Task
from distrl.core.trajectory import Trajectory
from distrl.envs.protocol import DeviceEnv
from distrl.errors import AllEpisodesDropped, one_line
from distrl.policies.base import Policy
from distrl.runtime.acting import ActingWorker
from distrl.runtime.drops import DropLog
from distrl.runtime.episode import EpisodeInProgress

MAX_RESET_ATTEMPTS = 5
#: Dropped episodes in a row, with none finishing between them, after which the worker gives up:
#: the devices (or the judge) are not coming back, and collecting on would loop forever. Even a
#: device that drops nine episodes in ten passes this with probability below 1e-4.
MAX_DROPS_IN_A_ROW = 100


@dataclass
class WorkerStats:
    episodes: int = 0
    steps: int = 0
    drops: DropLog = field(default_factory=DropLog)

    @property
    def dropped(self) -> int:
        return self.drops.count


class Worker(ActingWorker):
    """Runs episodes on ``devices`` with ``policy``; ``next_task`` picks each episode's task."""

    def __init__(
        self,
        devices: Sequence[DeviceEnv],
        policy: Policy,
        next_task: Callable[[], Task],
        *,
        worker_id: str = "worker-0",
        seed: int = 0,
        greedy: bool = False,
    ):
        if not devices:
            raise ValueError("a worker needs at least one device")
        super().__init__(policy, next_task, worker_id=worker_id, seed=seed, greedy=greedy)
        self.devices = list(devices)
        self.stats = WorkerStats()
        self._drops_in_a_row = 0
        self._episodes: list[EpisodeInProgress | None] = [None] * len(self.devices)

    def close(self) -> None:
        """Close every device (a browser or an adb connection must not outlive its worker)."""
        for device in self.devices:
            device.close()

    def _start(self, index: int, task: Task | None = None) -> None:
        """Reset device ``index`` for ``task`` (by default the next task drawn)."""
        task = self.next_task() if task is None else task
        last: DeviceFault | None = None
        for _ in range(MAX_RESET_ATTEMPTS):
            try:
                observation = self.devices[index].reset(task)
            except DeviceFault as fault:
                last = fault
                continue  # a reset is also the restart: try again
            self._episodes[index] = EpisodeInProgress(task, observation)
            return
        raise DeviceFault(
            f"device {index} of {self.worker_id} failed {MAX_RESET_ATTEMPTS} resets in a row "
            f"(last: {type(last).__name__}: {one_line(str(last), 200)})"
        )

    def collect(self, num_episodes: int) -> list[Trajectory]:
        """Step all devices until at least ``num_episodes`` episodes have finished (devices that
        finish in the same round all count); return the finished ones. Episodes still running
        go on at the next call: over a run, no episode is lost to where a call stopped."""
        finished: list[Trajectory] = []
        for index, episode in enumerate(self._episodes):
            if episode is None:
                self._start(index)
        while len(finished) < num_episodes:
            for index, trajectory in self._step_round():
                if trajectory is not None:
                    finished.append(trajectory)
                self._start(index)
        return finished

    def play(self, num_episodes: int) -> list[Trajectory]:
        """Play exactly the next ``num_episodes`` tasks drawn, each to its end, and return them
        in the order their tasks were drawn; an episode a device drops is played again, same
        task, so the sample stays the one drawn.

        Why not :meth:`collect` for evaluation: its first ``n`` finished episodes lean to the
        short ones (a success often ends early, a failure runs to the step limit), and an
        evaluation's worker is discarded with the rest in flight, so a success rate over them
        reads high, and by how much depends on the policy. A score needs a fixed sample."""
        if any(episode is not None for episode in self._episodes):
            raise RuntimeError(f"{self.worker_id} has episodes in flight; play() needs none")
        tasks: list[Task] = []
        slots: list[int | None] = [None] * len(self.devices)  # the task each device plays
        played: list[Trajectory | None] = [None] * num_episodes

        def take_next(index: int) -> None:
            if len(tasks) < num_episodes:
                tasks.append(self.next_task())
                slots[index] = len(tasks) - 1
                self._start(index, tasks[-1])

        for index in range(len(self.devices)):
            take_next(index)
        remaining = num_episodes
        while remaining:
            for index, trajectory in self._step_round():
                slot = slots[index]
                assert slot is not None
                if trajectory is None:  # dropped: the same task again
                    self._start(index, tasks[slot])
                    continue
                played[slot] = trajectory
                remaining -= 1
                slots[index] = None
                take_next(index)
        return [trajectory for trajectory in played if trajectory is not None]

    def _step_round(self) -> list[tuple[int, Trajectory | None]]:
        """One step of every device with an episode in flight, acted as one batch. Returns each
        device whose episode ended, with the finished trajectory (``None``: the device failed
        and the episode was dropped); those devices are left without an episode."""
        running = [(index, e) for index, e in enumerate(self._episodes) if e is not None]
        with torch.no_grad():
            output = self.act([episode.observation for _, episode in running])
        ended: list[tuple[int, Trajectory | None]] = []
        for position, (index, episode) in enumerate(running):
            action = output.actions[position]
            try:
                result = self.devices[index].step(action)
            except DeviceFault as fault:
                self._drop(fault)
                self._episodes[index] = None
                ended.append((index, None))
                continue
            self.stats.steps += 1
            done = episode.record(
                action,
                result,
                logprob=float(output.logprobs[position]),
                entropy=float(output.entropies[position]),
                policy_version=self.policy.version,
            )
            if done:
                self._episodes[index] = None
                ended.append((index, self._finish(episode, index)))
        return ended

    def _drop(self, fault: DeviceFault) -> None:
        self.stats.drops.record(fault)
        self._drops_in_a_row += 1
        if self._drops_in_a_row >= MAX_DROPS_IN_A_ROW:
            raise AllEpisodesDropped(
                f"{self._drops_in_a_row} episodes in a row were dropped on {self.worker_id}, "
                f"none finished: {self.stats.drops.describe()}; fix the devices or the judge "
                "and run again"
            )

    def _finish(self, episode: EpisodeInProgress, index: int) -> Trajectory:
        self.stats.episodes += 1
        self._drops_in_a_row = 0
        device_id = getattr(self.devices[index], "device_id", f"device-{index}")
        return episode.finish(self.worker_id, device_id)
