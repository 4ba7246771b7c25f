"""Dropped episodes are counted by cause, and a worker whose episodes all fail stops."""

from __future__ import annotations

from pathlib import Path

import pytest

from distrl.config.schema import PhoneSimConfig
from distrl.core.faults import DeviceCrashed, DeviceHung
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.errors import AllEpisodesDropped
from distrl.policies.small import SmallPolicy
from distrl.runtime.drops import DropLog, check_some_completed
from distrl.runtime.evaluation import TaskSampler
from distrl.runtime.worker import MAX_DROPS_IN_A_ROW, Worker


def test_drop_log_counts_by_cause_most_frequent_first() -> None:
    log = DropLog()
    log.record(DeviceHung("device 1 hung"))
    log.record(DeviceCrashed("device 0 crashed\n(log follows)"))
    log.record(DeviceCrashed("device 2 crashed"))
    assert log.count == 3
    assert log.summary() == {
        "dropped_episodes": 3,
        "drop_causes": {
            "DeviceCrashed": {"count": 2, "example": "device 2 crashed"},
            "DeviceHung": {"count": 1, "example": "device 1 hung"},
        },
    }
    assert log.describe() == "DeviceCrashed x2 (device 2 crashed); DeviceHung x1 (device 1 hung)"


def test_all_dropped_is_a_failure_some_dropped_is_not(tmp_path: Path) -> None:
    log = DropLog()
    check_some_completed(0, log, tmp_path)  # nothing run, nothing dropped: not a failure
    log.record(DeviceCrashed("gone"))
    check_some_completed(5, log, tmp_path)
    with pytest.raises(AllEpisodesDropped, match=r"every episode \(1\) was dropped: DeviceCrashed"):
        check_some_completed(0, log, tmp_path)


def crashing_devices(count: int) -> list[PhoneSimEnv]:
    """Real PhoneSim devices whose fault model crashes every step."""
    latency = {"enabled": True, "time_scale": 0.0, "crash_prob": 1.0}
    config = PhoneSimConfig(latency=latency)
    return [PhoneSimEnv(config, seed=i, device_id=f"phonesim-{i}") for i in range(count)]


def test_worker_gives_up_when_no_episode_can_finish() -> None:
    tasks = load_suite("general", "train")[:4]
    worker = Worker(crashing_devices(2), SmallPolicy(), TaskSampler(tasks, 0))
    with pytest.raises(AllEpisodesDropped) as caught:
        worker.collect(1)
    assert f"{MAX_DROPS_IN_A_ROW} episodes in a row were dropped" in str(caught.value)
    assert "DeviceCrashed" in str(caught.value)
    assert worker.stats.dropped == MAX_DROPS_IN_A_ROW and worker.stats.episodes == 0
