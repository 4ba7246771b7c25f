"""runtime=ray on a real local Ray: async and sync runs, the staleness bound, faults with the
exactly-once store check, and resume after SIGKILL. Every ray.get has a timeout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray

from distrl.cli.main import main
from distrl.config.schema import RunConfig
from distrl.core.trajectory import Trajectory
from distrl.envs.task_sets import task_family
from distrl.runtime.distributed.driver import train_ray
from distrl.runtime.run_log import CHECKPOINT, load_checkpoint
from distrl.store import TrajectoryStore

DEVICES = 4


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    # One Ray for the module (starting one costs seconds); train_ray joins it and kills its
    # actors at the end of each run.
    ray.init(num_cpus=2, resources={"distrl_device": DEVICES}, include_dashboard=False)
    yield
    ray.shutdown()


def _cfg(tmp_path: Path, **train: object) -> RunConfig:
    cfg = RunConfig()
    cfg.run_root = str(tmp_path)
    cfg.train.runtime = "ray"
    cfg.train.devices = DEVICES
    cfg.train.min_replay = 16
    cfg.train.batch_size = 8
    cfg.train.eval_episodes = 4
    cfg.train.final_eval_episodes = 4
    cfg.train.max_updates = 12
    cfg.train.minutes = 5
    cfg.ray.workers = 2
    cfg.ray.flush_seconds = 0.5
    cfg.ray.call_timeout_seconds = 120
    for key, value in train.items():
        setattr(cfg.train, key, value)
    return cfg


def _stored(run_dir: Path) -> list[Trajectory]:
    return TrajectoryStore(run_dir / "trajectories").load()


def _assert_exactly_once(run_dir: Path, episodes: int) -> list[Trajectory]:
    """The store holds every counted trajectory once, each complete."""
    stored = _stored(run_dir)
    assert len(stored) == episodes
    assert len({t.trajectory_id for t in stored}) == len(stored)
    for trajectory in stored:
        dones = [s.done for s in trajectory.steps]
        assert dones[-1] and not any(dones[:-1])
    state = load_checkpoint(run_dir)
    assert state["replay"]["counters"]["trajectories"] == episodes
    return stored


def test_async_run_trains_while_workers_collect(tmp_path: Path) -> None:
    result = train_ray(_cfg(tmp_path, mode="async"))
    summary = result.summary()
    assert summary["updates"] == 12 and summary["mode"] == "async"
    stored = _assert_exactly_once(result.run_dir, result.episodes)
    # Workers picked up newer weights between episodes while they kept collecting.
    versions = {s.policy_version for t in stored for s in t.steps}
    assert len(versions) > 1 and max(versions) > 0
    collection = summary["collection"]
    assert collection["trajectories"] >= 1 and 0 < collection["device_utilisation"] <= 1
    assert len(summary["worker_nodes"]) == 2
    assert [p["updates"] for p in summary["curve"]][-1] == 12
    # Ray pins a 1-CPU actor to one thread; the learner takes every core unless told otherwise.
    assert summary["learner_threads"] == os.cpu_count()


def test_learner_threads_follow_the_config(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, mode="sync", episodes_per_round=4, updates_per_round=1, max_updates=1)
    cfg.ray.learner_threads = 1
    assert train_ray(cfg).summary()["learner_threads"] == 1


def test_sync_rounds_act_with_one_version_each(tmp_path: Path) -> None:
    result = train_ray(_cfg(tmp_path, mode="sync", episodes_per_round=4, updates_per_round=3))
    assert result.updates == 12
    stored = _assert_exactly_once(result.run_dir, result.episodes)
    assert result.episodes % 4 == 0
    # The barrier: every episode of a round acted with the weights broadcast before it.
    for trajectory in stored:
        assert len({s.policy_version for s in trajectory.steps}) == 1
    assert {t.steps[0].policy_version for t in stored} <= {0, 3, 6, 9}


def test_staleness_bound_drops_old_windows(tmp_path: Path) -> None:
    result = train_ray(_cfg(tmp_path, mode="async", max_staleness=0, max_updates=8))
    state = load_checkpoint(result.run_dir)
    assert state["replay"]["counters"]["stale_dropped"] > 0


def test_faults_and_a_killed_worker_lose_nothing_that_counted(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, mode="async", max_updates=None, minutes=0.4)
    latency = cfg.env.phonesim.latency
    latency.enabled, latency.time_scale = True, 0.002
    latency.crash_prob, latency.hang_prob, latency.hang_timeout_seconds = 0.05, 0.05, 5.0
    killed: list[float] = []

    def kill_a_worker_once(fraction: float, metrics: dict[str, float]) -> None:
        if not killed and fraction > 0.3:
            ray.kill(ray.get_actor("distrl-worker-0"), no_restart=False)
            killed.append(fraction)
            _wait_for_a_restart()

    result = train_ray(cfg, on_progress=kill_a_worker_once)
    summary = result.summary()
    collection = summary["collection"]
    # One kill is one restart (lives counted by the board, not failed calls).
    assert killed and summary["restarts"] == 1 and collection["worker_restarts"] == 1
    assert summary["collected"] == summary["stored"] == result.episodes
    assert summary["duplicated"] == 0 and summary["dropped_partial"] > 0
    assert collection["device_crashes"] > 0 and collection["device_hangs"] > 0
    assert collection["dropped_partial_episodes"] > 0
    # The summary says why, as the serial runtime's does: each cause with a device's message.
    assert summary["dropped_episodes"] == summary["dropped_partial"]
    causes = summary["drop_causes"]
    assert set(causes) <= {"DeviceCrashed", "DeviceHung"} and causes
    assert sum(c["count"] for c in causes.values()) == summary["dropped_partial"]
    assert all("device" in c["example"] for c in causes.values())
    stored = _assert_exactly_once(result.run_dir, result.episodes)
    # The restarted worker went back to work (its devices appear after the kill too).
    late = [t for t in stored if t.worker_id == "worker-0"]
    assert late and result.updates > 0


def _wait_for_a_restart(timeout_seconds: float = 120.0) -> None:
    """Hold the driver's progress hook until the killed worker's new life has registered with
    the weights board, so a loaded machine cannot end the run before the restart is counted."""
    (board_name,) = [n for n in ray.util.list_named_actors() if n.startswith("distrl-board-")]
    board = ray.get_actor(board_name)
    deadline = time.monotonic() + timeout_seconds
    while ray.get(board.restarts.remote()) < 1:
        assert time.monotonic() < deadline, "the killed worker never came back"
        time.sleep(0.2)


def test_resume_after_sigkill_of_the_driver(tmp_path: Path) -> None:
    args = [
        sys.executable,
        "-m",
        "distrl.cli.main",
        "train",
        "--runtime",
        "ray",
        "--minutes",
        "5",
        "--run-root",
        str(tmp_path),
        "--run-name",
        "killed",
        f"train.devices={DEVICES}",
        "train.min_replay=16",
        "train.batch_size=8",
        "train.eval_episodes=4",
        "train.final_eval_episodes=4",
        "train.checkpoint_every_minutes=0.05",
        "ray.num_cpus=2",
    ]
    process = subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    run_dir = tmp_path / "killed"
    try:
        # Kill once a checkpoint with updates exists and the store already holds trajectories
        # collected after it (they must still count after the resume).
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if (run_dir / CHECKPOINT).exists():
                state = load_checkpoint(run_dir)
                counted = state["replay"]["counters"]["trajectories"]
                stored = TrajectoryStore(run_dir / "trajectories").count()
                if state["learner"]["updates"] and stored > counted:
                    break
            time.sleep(0.5)
        else:
            pytest.fail("no checkpoint with updates followed by more stored data within 120 s")
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # the driver and the Ray it started
        process.wait(timeout=30)
    before = load_checkpoint(run_dir)
    stored_before = len(_stored(run_dir))
    assert stored_before >= before["replay"]["counters"]["trajectories"]
    target = before["learner"]["updates"] + 5
    code = main(["train", "--resume", str(run_dir), "--updates", str(target), "--json"])
    assert code == 0
    result = json.loads(_last_line(run_dir))
    assert result["updates"] == target
    stored = _assert_exactly_once(run_dir, result["episodes"])
    assert len(stored) >= stored_before  # what was stored before the kill still counts


def _last_line(run_dir: Path) -> str:
    return (run_dir / "summary.json").read_text()


def test_backpressure_keeps_collection_within_the_insert_ratio(tmp_path: Path) -> None:
    ratio = 0.5
    cfg = _cfg(tmp_path, mode="async", max_updates=10, max_inserts_per_sample=ratio)
    result = train_ray(cfg)
    counters = load_checkpoint(result.run_dir)["replay"]["counters"]
    budget = cfg.train.min_replay + ratio * counters["windows_sampled"]
    # Workers hold off once over budget; what was already on the devices may still land (at most
    # one episode per device, a few windows each).
    assert counters["windows_added"] <= budget + DEVICES * 5
    assert counters["windows_sampled"] >= 10 * cfg.train.batch_size * 0.5


def test_curriculum_and_success_replay_in_an_async_run(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, mode="async")
    cfg.curriculum.enabled, cfg.curriculum.window = True, 1000
    cfg.success_replay.share = 0.25
    summary = train_ray(cfg).summary()
    run_dir = Path(summary["run_dir"])
    stored = _assert_exactly_once(run_dir, summary["episodes"])
    # The loop learnt from the episodes the replay took, in the order they were stored (those
    # that arrived after its last look are not in yet).
    held = load_checkpoint(run_dir)["curriculum"]
    seen = sum(len(outcomes) for outcomes in held.values())
    assert 0 < seen <= len(stored)
    expected: dict[str, list[int]] = {family: [] for family in held}
    for trajectory in stored[:seen]:
        expected[task_family(trajectory.task)].append(int(trajectory.success))
    assert held == expected
    table = summary["curriculum"]
    assert sum(row["weight"] for row in table.values()) == pytest.approx(1.0, abs=1e-3)
    replayed = summary["success_replay"]
    assert replayed["success_stored"] <= sum(t.success for t in stored)
    assert 0.0 <= replayed["success_share"] < 1.0
