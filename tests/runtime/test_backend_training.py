"""Training end to end on the non-simulated backends: Android (over fake-adb) and MiniWoB++."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from distrl.cli.main import main
from distrl.fakeadb import FakeAdbServer
from distrl.store import TrajectoryStore

SMALL_RUN = [
    "train.devices=4",
    "train.episodes_per_round=4",
    "train.updates_per_round=1",
    "train.min_replay=4",
    "train.batch_size=4",
    "train.eval_episodes=4",
    "train.final_eval_episodes=4",
    "train.warm_start_episodes=4",
    "train.bc_steps=3",
]


def test_aride_trains_on_four_android_devices_over_adb(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Four training devices and four for evaluation (it runs beside in-flight episodes).
    with FakeAdbServer(devices=8, seed=3) as adb:
        args = ["train", "--env", "android", "--adb-port", str(adb.port), "--updates", "3"]
        assert main([*args, "--run-root", str(tmp_path), "--json", *SMALL_RUN]) == 0
        summary = json.loads(capsys.readouterr().out)
        commands = {serial: adb.device(serial).commands for serial in adb.serials}
    assert summary["updates"] == 3 and summary["curve"][-1]["updates"] == 3
    stored = TrajectoryStore(Path(summary["run_dir"]) / "trajectories").load()
    assert len(stored) == summary["episodes"] >= 4
    # Training episodes ran on the first four phones, through adb input commands.
    assert {t.device_id for t in stored} <= {f"phonesim-{i}" for i in range(4)}
    assert all(any(c[0] == "input" for c in commands[f"phonesim-{i}"]) for i in range(4))
    # Evaluation used the other four (set up a task on each), never a training phone mid-episode.
    evaluated = [
        s for s in adb.serials[4:] if any(c[:2] == ["distrl-task", "setup"] for c in commands[s])
    ]
    assert evaluated


def test_aride_trains_on_miniwob_in_chromium(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], chromium: None
) -> None:
    args = ["train", "--env", "miniwob", "--tasks", "click-test,click-button", "--updates", "2"]
    small = [*SMALL_RUN, "train.devices=2", "env.miniwob.screenshots=false"]
    assert main([*args, "--run-root", str(tmp_path), "--json", *small]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["updates"] == 2
    stored = TrajectoryStore(Path(summary["run_dir"]) / "trajectories").load()
    assert len(stored) == summary["episodes"] >= 2
    assert {t.task.spec["task"] for t in stored} <= {"click-test", "click-button"}
    assert all(t.task.backend == "miniwob" for t in stored)
