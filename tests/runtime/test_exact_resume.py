"""Exact resume: checkpoints written as one unit, the sampler's state kept, the episode count
equal to the store's distinct trajectories after kills, and ``--updates N`` meaning N updates.

The resume test runs the serial and the Ray runtime through the same assertions: both are the
same loop (:mod:`distrl.runtime.training`) over different parts."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch

from distrl.algos.registry import build_algorithm
from distrl.cli.main import main
from distrl.config.schema import RunConfig
from distrl.core.trajectory import Trajectory
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.policies.base import read_checkpoint
from distrl.policies.small import SmallPolicy, SmallPolicyConfig
from distrl.runtime.allocator import active_allocator
from distrl.runtime.checkpoint import (
    CHECKPOINT_LINK,
    POLICY_CHECKPOINT,
    current_checkpoint,
    load_checkpoint,
    save_checkpoint,
    write_steps,
)
from distrl.runtime.distributed.driver import train_ray
from distrl.runtime.replay_service import ReplayService
from distrl.runtime.serial import train
from distrl.runtime.worker import Worker
from distrl.store import TrajectoryStore

DEVICES = 2


def _policy(version: int) -> SmallPolicy:
    policy = SmallPolicy(SmallPolicyConfig())
    policy.version = version
    return policy


def _state(version: int) -> dict[str, object]:
    """A run state shaped as every runtime writes it, naming the learner's ``version``."""
    return {
        "learner": {"version": version},
        "replay": {},
        "curve": [],
        "elapsed": 0.0,
        "episodes": 0,
    }


def _pair(run_dir: Path) -> tuple[int, int]:
    """(the version the run state names, the version of the policy ``distrl eval`` reads)."""
    state = load_checkpoint(run_dir)
    return int(state["learner"]["version"]), int(
        read_checkpoint(run_dir / POLICY_CHECKPOINT)["version"]
    )


def test_a_checkpoint_write_stopped_after_any_step_leaves_a_matching_pair(tmp_path: Path) -> None:
    first = tmp_path / "first"
    save_checkpoint(first, _state(1), _policy(1))
    assert _pair(first) == (1, 1)
    steps = write_steps(first, _state(2), _policy(2))
    for stop_after in range(len(steps) + 1):
        run_dir = tmp_path / f"killed-after-{stop_after}"
        shutil.copytree(first, run_dir, symlinks=True)
        # The steps are bound to ``first``; rebuild them for this copy (same folder names).
        for _, step in write_steps(run_dir, _state(2), _policy(2))[:stop_after]:
            step()
        switched = stop_after >= [name for name, _ in steps].index("switch") + 1
        assert _pair(run_dir) == ((2, 2) if switched else (1, 1)), stop_after
        # The next write after a kill succeeds and cleans up what the kill left.
        save_checkpoint(run_dir, _state(3), _policy(3))
        assert _pair(run_dir) == (3, 3)
        assert len(list((run_dir / "checkpoints.d").iterdir())) <= 2


def test_a_run_folder_of_the_old_layout_moves_to_the_new_one(tmp_path: Path) -> None:
    old = tmp_path / CHECKPOINT_LINK
    old.mkdir()
    torch.save(_state(4), old / "latest.pt")
    _policy(4).save(old / "policy.pt")
    assert _pair(tmp_path) == (4, 4)
    save_checkpoint(tmp_path, _state(5), _policy(5))
    assert (tmp_path / CHECKPOINT_LINK).is_symlink() and _pair(tmp_path) == (5, 5)
    # A kill between moving the old folder and linking: the newest complete checkpoint counts.
    (tmp_path / CHECKPOINT_LINK).unlink()
    assert current_checkpoint(tmp_path) is not None
    assert load_checkpoint(tmp_path)["learner"]["version"] == 5


def _collected(episodes: int) -> list[Trajectory]:
    tasks = load_suite("general", "train")
    rng = np.random.default_rng(3)
    worker = Worker(
        [PhoneSimEnv(seed=20 + i) for i in range(2)],
        SmallPolicy(SmallPolicyConfig()),
        lambda: tasks[int(rng.integers(len(tasks)))],
        seed=3,
    )
    return worker.collect(episodes)


def _replay() -> ReplayService:
    return ReplayService(
        build_algorithm(RunConfig()),  # A-RIDE: prioritized replay
        window=4,
        capacity=500,
        max_staleness=50,
        keep_screenshots=False,
    )


def test_the_samplers_priorities_and_beta_progress_survive_a_resume() -> None:
    trajectories = _collected(6)
    replay = _replay()
    replay.ingest(trajectories)
    for _ in range(3):
        batch = replay.sample(8, learner_version=0)
        assert batch is not None
        replay.update_priorities(batch.slots, batch.generations, np.linspace(0.1, 5.0, 8))
    state = replay.state_dict()
    # Rebuilt from the store in another order: the windows land in other slots.
    resumed = _replay()
    resumed.restore(state, list(reversed(trajectories)), learner_version=0)

    def priorities(service: ReplayService) -> dict[tuple[str, int], float]:
        storage, sampler = service.buffer.storage, service.buffer.sampler
        leaves = sampler.state_dict()["stored_priorities"]
        return {(storage[s].trajectory_id, storage[s].start): leaves[s] for s in storage.slots()}

    assert priorities(resumed) == priorities(replay)
    assert len(set(priorities(replay).values())) > 2  # the write-backs made them differ
    assert resumed.buffer.sampler.num_samples == replay.buffer.sampler.num_samples == 3  # type: ignore[attr-defined]


@pytest.mark.parametrize("runtime", ["serial", "ray"])
def test_a_checkpoint_resumes_the_same_way_in_both_runtimes(
    runtime: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    tiny_run: Callable[[Path, str, int], RunConfig],
) -> None:
    if runtime == "ray":
        request.getfixturevalue("local_ray")
    run = train if runtime == "serial" else train_ray
    # Three updates, two per round: the second round must stop at one (exactly N updates).
    first = run(tiny_run(tmp_path, runtime, 3))
    run_dir = first.run_dir
    assert first.updates == 3 and load_checkpoint(run_dir)["learner"]["updates"] == 3
    assert _pair(run_dir) == (3, 3)
    before = load_checkpoint(run_dir)
    assert before["replay"]["sampler"]["num_samples"] > 0
    second = run(tiny_run(tmp_path, runtime, 5), resume=run_dir)
    assert second.run_dir == run_dir and second.updates == 5
    assert [p["updates"] for p in second.curve] == [0, 3, 5]
    state = load_checkpoint(run_dir)
    assert state["resumes"] == 1 and state["elapsed"] > before["elapsed"]
    assert state["learner"]["updates"] == 5 and _pair(run_dir) == (5, 5)
    # The sampler went on from where it was (its draws since the resume add to the old ones).
    assert state["replay"]["sampler"]["num_samples"] > before["replay"]["sampler"]["num_samples"]
    ids = TrajectoryStore(run_dir / "trajectories").trajectory_ids()
    assert second.episodes == len(set(ids)) == len(ids) > first.episodes
    assert state["replay"]["counters"]["trajectories"] == second.episodes
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["collected"] == summary["stored"] == second.episodes
    assert summary["duplicated"] == 0 and summary["runtime"] == runtime
    # Per family, over both sessions: every stored episode once, successes among them.
    families = summary["episodes_by_family"].values()
    assert sum(family["episodes"] for family in families) == second.episodes
    assert all(0 <= family["successes"] <= family["episodes"] for family in families)
    assert summary["allocator"] == active_allocator()  # it moves the learner's speed


def test_updates_n_on_the_command_line_makes_exactly_n_updates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rounds = ["train.updates_per_round=2", "train.devices=2", "train.episodes_per_round=2"]
    fast = ["train.min_replay=4", "train.batch_size=4", "train.eval_episodes=2"]
    fast += ["train.final_eval_episodes=2"]
    args = ["train", "--updates", "3", "--run-root", str(tmp_path), "--json", *rounds, *fast]
    assert main([*args, "train.warm_start_episodes=0"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["updates"] == 3 and summary["curve"][-1]["updates"] == 3
    assert load_checkpoint(Path(summary["run_dir"]))["learner"]["updates"] == 3


def _start(run_root: Path, *extra: str) -> subprocess.Popen[bytes]:
    args = [
        sys.executable,
        "-m",
        "distrl.cli.main",
        "train",
        *extra,
        f"train.devices={DEVICES}",
        "train.episodes_per_round=2",
        "train.min_replay=4",
        "train.batch_size=4",
        "train.eval_episodes=2",
        "train.final_eval_episodes=2",
        "train.warm_start_episodes=0",
        "train.checkpoint_every_minutes=0.02",
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=run_root
    )


def _kill_after_a_checkpoint_with_later_data(
    process: subprocess.Popen[bytes], run_dir: Path, after_elapsed: float
) -> float:
    """SIGKILL ``process`` once it wrote a checkpoint past ``after_elapsed`` seconds of run time
    and stored trajectories after it; returns that checkpoint's elapsed time."""
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline:
            if current_checkpoint(run_dir) is not None:
                state = load_checkpoint(run_dir)
                counted = state["replay"]["counters"]["trajectories"]
                stored = TrajectoryStore(run_dir / "trajectories").count()
                if state["elapsed"] > after_elapsed and stored > counted:
                    return float(state["elapsed"])
            time.sleep(0.3)
        pytest.fail("no checkpoint followed by more stored data within 240 s")
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)


def test_killed_twice_then_resumed_reports_every_stored_trajectory(tmp_path: Path) -> None:
    run_dir = tmp_path / "killed"
    common = ["--run-root", str(tmp_path)]
    first = _start(tmp_path, "--minutes", "10", "--run-name", "killed", *common)
    elapsed = _kill_after_a_checkpoint_with_later_data(first, run_dir, 0.0)
    second = _start(tmp_path, "--resume", str(run_dir), "--minutes", "10")
    _kill_after_a_checkpoint_with_later_data(second, run_dir, elapsed)
    state = load_checkpoint(run_dir)
    target = int(state["learner"]["updates"]) + 2
    assert main(["train", "--resume", str(run_dir), "--updates", str(target), "--json"]) == 0
    summary = json.loads((run_dir / "summary.json").read_text())
    ids = TrajectoryStore(run_dir / "trajectories").trajectory_ids()
    assert summary["updates"] == target
    assert summary["episodes"] == len(set(ids)) == len(ids)
    assert load_checkpoint(run_dir)["resumes"] == 2
