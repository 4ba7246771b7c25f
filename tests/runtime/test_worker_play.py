"""An evaluation plays a fixed sample: ``Worker.play(n)`` plays exactly the next ``n`` tasks
drawn, each to its end, whatever the device count and however many episodes a device drops
(issue 19: a score over the first episodes to finish leans to the short ones)."""

from __future__ import annotations

import pytest

from distrl.config.schema import PhoneSimConfig
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.policies.small import SmallPolicy
from distrl.runtime.task_sampler import TaskSampler
from distrl.runtime.worker import Worker


def devices(count: int, crash_prob: float = 0.0) -> list[PhoneSimEnv]:
    latency = {"enabled": crash_prob > 0, "time_scale": 0.0, "crash_prob": crash_prob}
    config = PhoneSimConfig(latency=latency)
    return [PhoneSimEnv(config, seed=i, device_id=f"phonesim-{i}") for i in range(count)]


def first_drawn(count: int) -> list[str]:
    """The task ids a fresh sampler of the test below draws first, in order."""
    sampler = TaskSampler(load_suite("general", "train"), 7)
    return [sampler().task_id for _ in range(count)]


@pytest.mark.parametrize(("device_count", "episodes"), [(3, 7), (4, 2), (1, 3)])
def test_play_scores_exactly_the_tasks_drawn_in_order(device_count: int, episodes: int) -> None:
    worker = Worker(
        devices(device_count),
        SmallPolicy(),
        TaskSampler(load_suite("general", "train"), 7),
        greedy=False,
    )
    played = worker.play(episodes)
    assert [t.task.task_id for t in played] == first_drawn(episodes)
    assert all(t.steps and t.steps[-1].done for t in played)  # each played to its end
    assert worker.stats.episodes == episodes and worker.stats.dropped == 0
    # Nothing is left running: a second call plays the sampler's next tasks from a clean start.
    again = worker.play(2)
    assert [t.task.task_id for t in again] == first_drawn(episodes + 2)[episodes:]


def test_a_dropped_episode_is_played_again_on_its_own_task() -> None:
    worker = Worker(
        devices(3, crash_prob=0.2), SmallPolicy(), TaskSampler(load_suite("general", "train"), 7)
    )
    played = worker.play(12)
    assert worker.stats.dropped > 0  # the fault model did crash some episodes ...
    assert [t.task.task_id for t in played] == first_drawn(12)  # ... the sample is unchanged
    assert len({id(t) for t in played}) == 12


def test_play_refuses_a_worker_with_episodes_in_flight() -> None:
    worker = Worker(devices(2), SmallPolicy(), TaskSampler(load_suite("general", "train"), 7))
    worker.collect(1)  # the other device's episode is still running
    with pytest.raises(RuntimeError, match="episodes in flight"):
        worker.play(1)
