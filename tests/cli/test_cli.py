"""The ``distrl`` command line: JSON outputs, run folders, and one-line errors with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from PIL import Image

from distrl.cli.main import main
from distrl.store import TrajectoryStore


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_play_oracle_json_and_run_folder(tmp_path: Path, capsys) -> None:
    code, out, _ = run_cli(
        capsys,
        "play",
        "--suite",
        "general",
        "--policy",
        "oracle",
        "--episodes",
        "6",
        "--json",
        "--run-root",
        str(tmp_path),
        "--save-screenshots",
    )
    assert code == 0
    summary = json.loads(out)
    assert summary["episodes"] == 6 and summary["success_rate"] == 1.0
    assert summary["mean_steps"] > 0
    run_dir = Path(summary["run_dir"])
    assert (run_dir / "config.yaml").exists()
    assert json.loads((run_dir / "summary.json").read_text())["episodes"] == 6
    table = pq.read_table(run_dir / "trajectories")
    kinds = table.column("row_kind").to_pylist()
    assert kinds.count("step") == pytest.approx(summary["mean_steps"] * 6, abs=0.01)
    assert kinds.count("final") == 6
    assert all(png is not None for png in table.column("screenshot_png").to_pylist())
    assert len(set(table.column("trajectory_id").to_pylist())) == 6


def test_play_table_output(tmp_path: Path, capsys) -> None:
    code, out, _ = run_cli(
        capsys, "play", "--policy", "random", "--episodes", "3", "--run-root", str(tmp_path)
    )
    assert code == 0 and "all" in out and "trajectories in" in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["play", "--suite", "shopping"], "env.suite"),
        (["play", "--policy", "clever"], "play.policy"),
        (["play", "env.phonesim.dynamics.popup=true"], "popups"),
        (["play", "--episodes", "0"], "play.episodes"),
        (["play", "play.noise=abc"], "play.noise"),
        (["play", "--preset", "nosuchpreset"], "nosuchpreset"),
        (["play", "--bogus-flag"], "--bogus-flag"),
        (["tasks", "show", "general-train-99999"], "general-train-99999"),
        (["tasks", "show", "whatever"], "SUITE-SPLIT-NNNN"),
        (["tasks", "list", "--split", "validation"], "env.split"),
    ],
)
def test_bad_input_gives_one_line_and_exit_2(capsys, argv: list[str], needle: str) -> None:
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's own usage errors
        code = exit_.code
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("distrl: error: ") and needle in err


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ('{"task_id": "a", "instruction": "x", "suite": "general"\n', "line 1: not valid JSON"),
        ('\n["a list"]\n', "line 2: expected a JSON object"),
        ('{"task_id": "a", "suite": "general"}\n', "missing or empty 'instruction'"),
        (
            '{"task_id": "a", "instruction": "x", "suite": "general",'
            ' "spec": {"template": "nope"}}',
            "spec.template",
        ),
        ("", "holds no tasks"),
    ],
)
def test_malformed_task_file(tmp_path: Path, capsys, content: str, needle: str) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(content)
    code, out, err = run_cli(capsys, "play", "--task-file", str(path), "--run-root", str(tmp_path))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err and "tasks.jsonl" in err


def test_task_file_round_trip_plays(tmp_path: Path, capsys) -> None:
    code, out, _ = run_cli(capsys, "tasks", "list", "--suite", "general", "--limit", "3", "--json")
    tasks = json.loads(out)["tasks"]
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in tasks) + "\n")
    code, out, _ = run_cli(
        capsys,
        "play",
        "--task-file",
        str(path),
        "--episodes",
        "3",
        "--json",
        "--run-root",
        str(tmp_path),
    )
    assert code == 0 and json.loads(out)["success_rate"] == 1.0


def test_tasks_list_show_and_templates(tmp_path: Path, capsys) -> None:
    code, out, _ = run_cli(
        capsys, "tasks", "list", "--suite", "webshop", "--split", "test", "--json"
    )
    listing = json.loads(out)
    assert code == 0 and listing["count"] >= 200
    first = listing["tasks"][0]["task_id"]
    shot = tmp_path / "first.png"
    code, out, _ = run_cli(capsys, "tasks", "show", first, "--screenshot", str(shot), "--json")
    assert code == 0 and json.loads(out)["task_id"] == first
    assert Image.open(shot).size == (360, 720)
    code, out, _ = run_cli(capsys, "tasks", "templates", "--json")
    assert len(json.loads(out)["templates"]) >= 20


def test_bench_env_json(capsys) -> None:
    code, out, _ = run_cli(capsys, "bench", "env", "--steps", "150", "--json")
    figures = json.loads(out)
    assert code == 0 and figures["steps"] == 150 and figures["steps_per_s"] > 0
    assert figures["width"] == 360 and figures["height"] == 720


def test_console_script_is_installed() -> None:
    distrl = Path(sys.executable).parent / "distrl"
    result = subprocess.run(
        [str(distrl), "tasks", "list", "--suite", "general", "--limit", "2", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["tasks"]) == 2


def test_play_drops_episodes_of_crashed_devices_and_stores_only_whole_ones(
    tmp_path: Path, capsys
) -> None:
    faults = [
        "env.phonesim.latency.enabled=true",
        "env.phonesim.latency.time_scale=0",  # model the seconds, do not sleep them
        "env.phonesim.latency.crash_prob=0.1",
        "env.phonesim.latency.hang_prob=0.05",
    ]
    code, out, _ = run_cli(
        capsys,
        "play",
        "--suite",
        "webshop",
        "--episodes",
        "30",
        "--json",
        "--run-root",
        str(tmp_path),
        *faults,
    )
    summary = json.loads(out)
    assert code == 0 and summary["dropped_episodes"] > 0
    assert summary["episodes"] + summary["dropped_episodes"] == 30
    assert summary["success_rate"] == 1.0  # every episode that finished was solved
    stored = TrajectoryStore(Path(summary["run_dir"]) / "trajectories").load()
    assert len(stored) == summary["episodes"]
    assert all(t.success and t.steps[-1].done for t in stored)
