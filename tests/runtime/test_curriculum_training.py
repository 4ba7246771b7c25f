"""The task curriculum and success replay through a short serial run: logged, summarised,
checkpointed, deterministic given the seed, and restored on resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from distrl.cli.main import main
from distrl.core.trajectory import Trajectory
from distrl.envs.task_sets import task_family
from distrl.store import TrajectoryStore

RUN = [
    "--json",
    "train.devices=2",
    "train.episodes_per_round=2",
    "train.updates_per_round=1",
    "train.min_replay=4",
    "train.batch_size=4",
    "train.eval_episodes=4",
    "train.final_eval_episodes=4",
    "train.warm_start_episodes=4",
    "train.bc_steps=3",
    "curriculum.enabled=true",
    "curriculum.window=50",
    "success_replay.share=0.25",
]


def _windows(stored: list[Trajectory], window: int = 50) -> dict[str, list[int]]:
    """Per family, its last ``window`` outcomes in store order (what the curriculum holds)."""
    outcomes: dict[str, list[int]] = {}
    for trajectory in stored:
        outcomes.setdefault(task_family(trajectory.task), []).append(int(trajectory.success))
    return {family: values[-window:] for family, values in outcomes.items()}


def _train(root: Path, capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["train", "--run-root", str(root), "--minutes", "30", *RUN, *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_serial_run_curriculum_and_success_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _train(tmp_path / "a", capsys, "--updates", "3")
    run_dir = Path(first["run_dir"])
    stored = TrajectoryStore(run_dir / "trajectories").load()
    state = torch.load(run_dir / "checkpoints" / "latest.pt", weights_only=True)
    # Every finished train episode reached the curriculum, in the order it was stored.
    held = {family: outcomes for family, outcomes in state["curriculum"].items() if outcomes}
    assert held == _windows(stored)
    table = first["curriculum"]
    assert sum(row["episodes"] for row in table.values()) == len(stored)
    assert sum(row["weight"] for row in table.values()) == pytest.approx(1.0, abs=1e-3)
    successes = sum(t.success for t in stored)
    assert first["success_replay"]["success_stored"] == successes
    assert 0.0 <= first["success_replay"]["success_share"] < 1.0
    events = EventAccumulator(str(run_dir / "tensorboard"))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {f"curriculum/weight/{family}" for family in table} <= tags
    assert {"replay/success_stored", "replay/success_share", "replay/success_tasks"} <= tags

    # The same seed draws the same tasks and ends with the same curriculum.
    again = _train(tmp_path / "b", capsys, "--updates", "3")
    replayed = TrajectoryStore(Path(again["run_dir"]) / "trajectories").load()
    assert [t.task.task_id for t in replayed] == [t.task.task_id for t in stored]
    assert again["curriculum"] == table

    # A resumed run continues the curriculum it checkpointed (windows over the whole store).
    second = _train(tmp_path / "a", capsys, "--resume", str(run_dir), "--updates", "6")
    stored = TrajectoryStore(run_dir / "trajectories").load()
    assert second["episodes"] == len(stored) > first["episodes"]
    state = torch.load(run_dir / "checkpoints" / "latest.pt", weights_only=True)
    held = {family: outcomes for family, outcomes in state["curriculum"].items() if outcomes}
    assert held == _windows(stored)
    assert second["success_replay"]["success_stored"] == sum(t.success for t in stored)
