"""``distrl train`` outside a terminal: progress lines while it runs, and the same scalars to
TensorBoard and (when configured) Weights & Biases."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from distrl.cli.main import main

TINY = [
    "--devices",
    "2",
    "train.min_replay=1",
    "train.eval_episodes=2",
    "train.episodes_per_round=2",
    "train.batch_size=2",
    "train.warm_start_episodes=2",
    "train.bc_steps=2",
]


def test_train_into_a_log_file_writes_progress_while_it_runs(
    tmp_path: Path, child_env: dict[str, str]
) -> None:
    log = tmp_path / "log"
    argv = ["train", "--minutes", "5", "--run-root", str(tmp_path), *TINY]
    with log.open("w") as stderr:
        child = subprocess.Popen(
            [sys.executable, "-m", "distrl.cli.main", *argv, "--progress-seconds", "0.1"],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            env=child_env,
        )
        try:
            deadline = time.monotonic() + 240
            while "training " not in log.read_text() and time.monotonic() < deadline:
                assert child.poll() is None, log.read_text()  # still running, not yet done
                time.sleep(0.2)
            assert child.poll() is None  # the lines came while it ran (a 5-minute budget)
        finally:
            child.terminate()
            child.wait(timeout=60)
    lines = log.read_text().splitlines()
    for phase in ("warm start: cloning 2", "collection: aride on 2 devices", "evaluation at"):
        assert any(phase in line for line in lines), lines
    assert all(line[:4].isdigit() for line in lines if "distrl." in line)  # timestamped


def test_every_phase_is_logged_once_it_happens(tmp_path: Path, capsys) -> None:
    assert main(["train", "--updates", "2", "--run-root", str(tmp_path), *TINY, "--json"]) == 0
    out, err = capsys.readouterr()
    json.loads(out)
    for phase in ("warm start done", "collection:", "evaluation at", "checkpoint: update 2"):
        assert phase in err, err
    assert "distrl: error" not in err


class FakeWandbRun:
    """The part of ``wandb.sdk.wandb_run.Run`` distrl uses, recording what it is given."""

    def __init__(self, **settings: Any):
        self.settings = settings
        self.metrics: dict[str, dict[str, Any]] = {}
        self.records: list[dict[str, Any]] = []
        self.finished = False

    def define_metric(self, name: str, step_metric: str | None = None, **_: Any) -> None:
        self.metrics[name] = {"step_metric": step_metric}

    def log(self, data: dict[str, Any], step: int | None = None, commit: bool | None = None):
        assert not self.finished and step is None  # steps travel as the "update" metric
        self.records.append(dict(data))

    def finish(self, exit_code: int | None = None) -> None:
        self.finished = True


def fake_wandb() -> types.ModuleType:
    module = types.ModuleType("wandb")
    module.runs = []  # type: ignore[attr-defined]

    def init(**settings: Any) -> FakeWandbRun:
        assert set(settings) <= {"project", "entity", "name", "dir", "config", "mode"}
        run = FakeWandbRun(**settings)
        module.runs.append(run)  # type: ignore[attr-defined]
        return run

    module.init = init  # type: ignore[attr-defined]
    return module


def test_wandb_receives_the_tensorboard_scalars(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    wandb = fake_wandb()
    monkeypatch.setitem(sys.modules, "wandb", wandb)
    argv = ["train", "--updates", "2", "--run-root", str(tmp_path), *TINY, "--json"]
    assert main([*argv, "log.wandb=true", "log.wandb_mode=offline"]) == 0
    run_dir = Path(json.loads(capsys.readouterr().out)["run_dir"])
    (run,) = wandb.runs  # type: ignore[attr-defined]
    assert run.finished and run.settings["mode"] == "offline"
    assert run.settings["config"]["train"]["max_updates"] == 2
    assert run.metrics["*"]["step_metric"] == "update"
    sent: dict[str, list[tuple[int, float]]] = {}
    for record in run.records:
        ((tag, value),) = [(k, v) for k, v in record.items() if k != "update"]
        sent.setdefault(tag, []).append((record["update"], value))
    events = EventAccumulator(str(run_dir / "tensorboard"))
    events.Reload()
    written = {
        tag: [(e.step, pytest.approx(e.value)) for e in events.Scalars(tag)]
        for tag in events.Tags()["scalars"]
    }
    assert {"eval/success_greedy", "learner/loss", "collect/trajectories"} <= set(sent)
    assert sent == written


def test_wandb_without_the_extra_is_one_line(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "wandb", None)  # not installed
    assert main(["train", "--updates", "1", "--run-root", str(tmp_path), "log.wandb=true"]) == 2
    err = capsys.readouterr().err
    needed = "log.wandb=true needs the 'wandb' extra: pip install 'distrl[wandb]'"
    assert err == f"distrl: error: {needed}\n"
    assert not list(tmp_path.iterdir())  # failed before making a run folder
