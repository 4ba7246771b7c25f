"""The CLI's one boundary: every foreseeable failure is one ``distrl: error:`` line and exit 2;
a bug keeps its traceback; ``--debug`` shows the traceback of a foreseeable one too."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
from pathlib import Path

import pytest
import torch

from distrl.cli import tasks_cmd
from distrl.cli.main import main
from distrl.runtime.run_log import CHECKPOINT, POLICY_CHECKPOINT

TINY_TRAIN = [
    "--updates",
    "1",
    "--devices",
    "1",
    "train.min_replay=1",
    "train.eval_episodes=1",
    "train.final_eval_episodes=1",
    "train.episodes_per_round=1",
    "train.batch_size=2",
]
FAULTS = ["env.phonesim.latency.enabled=true", "env.phonesim.latency.time_scale=0"]


def one_error_line(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[str, str]:
    """Run ``argv``; assert exit 2 and exactly one ``distrl: error:`` line on stderr."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("distrl: error: "), err
    assert "Traceback" not in err
    return lines[0], out


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished one-update training run, with its checkpoint and one trajectory shard."""
    root = tmp_path_factory.mktemp("runs")
    code = main(["train", *TINY_TRAIN, "--run-root", str(root), "--run-name", "base", "--json"])
    assert code == 0
    return root / "base"


def damaged_copy(trained_run: Path, tmp_path: Path, damage: str) -> Path:
    run = tmp_path / damage
    shutil.copytree(trained_run, run)
    checkpoint = run / CHECKPOINT
    shard = sorted((run / "trajectories").glob("*.parquet"))[0]
    if damage == "truncated":
        checkpoint.write_bytes(checkpoint.read_bytes()[:500])
    elif damage == "garbage":
        checkpoint.write_bytes(bytes(range(256)) * 20)
    elif damage == "not-a-mapping":
        torch.save([1, 2, 3], checkpoint)
    elif damage == "missing-keys":
        torch.save({"learner": {}}, checkpoint)
    elif damage == "learner-mismatch":
        state = torch.load(checkpoint, weights_only=True)
        state["learner"] = {"policy": {"nonsense": torch.zeros(1)}}
        torch.save(state, checkpoint)
    elif damage == "empty-shard":
        shard.write_bytes(b"")
    elif damage == "garbage-shard":
        shard.write_bytes(b"PAR1 but not really")
    return run


@pytest.mark.parametrize(
    ("damage", "needle"),
    [
        ("truncated", "damaged or cut short"),
        ("garbage", "not a torch checkpoint"),
        ("not-a-mapping", "is not a distrl run checkpoint (a mapping)"),
        ("missing-keys", "'replay' is missing or of the wrong type"),
        ("learner-mismatch", "does not fit this run"),
        ("empty-shard", "is not a readable Parquet file"),
        ("garbage-shard", "is not a readable Parquet file"),
    ],
)
def test_resume_from_damaged_run_is_one_line(
    trained_run: Path, tmp_path: Path, capsys, damage: str, needle: str
) -> None:
    run = damaged_copy(trained_run, tmp_path, damage)
    line, _ = one_error_line(capsys, "train", "--resume", str(run), *TINY_TRAIN)
    assert needle in line and str(run) in line
    if "shard" in damage:  # the shard is named, with the way out; the checkpoint is not blamed
        assert "shard-000000.parquet" in line and "move it out of" in line
        assert "does not fit" not in line


@pytest.mark.parametrize(
    ("damage", "needle"),
    [
        ("learner-mismatch", "does not fit this run"),
        ("garbage-shard", "is not a readable Parquet file"),
    ],
)
def test_ray_resume_from_damaged_run_is_one_line(
    trained_run: Path, tmp_path: Path, capsys, damage: str, needle: str
) -> None:
    """The Ray runtime restores the state inside its actors; what does not fit is still told in
    the serial runtime's one line (the checkpoint format is the same, so a serial run's
    checkpoint serves)."""
    run = damaged_copy(trained_run, tmp_path, damage)
    ray_args = ["train.runtime=ray", "train.mode=sync", "ray.workers=1", "ray.num_cpus=2"]
    line, _ = one_error_line(capsys, "train", "--resume", str(run), *TINY_TRAIN, *ray_args)
    assert needle in line and str(run) in line
    assert "RayTaskError" not in line and "ActorDiedError" not in line


def test_eval_of_unsafe_or_damaged_policy_is_one_line(
    trained_run: Path, tmp_path: Path, capsys
) -> None:
    code_file = tmp_path / "code.pt"
    torch.save({"format": "distrl.policy/1", "p": pathlib.PurePosixPath("x")}, code_file)
    line, _ = one_error_line(capsys, "eval", "--checkpoint", str(code_file), "--episodes", "1")
    assert "could run code" in line and "weights_only" not in line
    damaged = damaged_copy(trained_run, tmp_path, "garbage")
    (damaged / POLICY_CHECKPOINT).write_bytes(b"\x80\x02garbage")
    line, _ = one_error_line(capsys, "eval", "--checkpoint", str(damaged), "--episodes", "1")
    assert "policy.pt: cannot be read" in line


def test_paths_that_cannot_be_used(trained_run: Path, tmp_path: Path, capsys) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    line, _ = one_error_line(capsys, "play", "--episodes", "1", "--run-root", str(afile))
    assert "is a file, not a folder" in line
    line, _ = one_error_line(capsys, "view", str(trained_run), "--out", str(afile / "view"))
    assert "not a directory" in line and str(afile) in line


@pytest.mark.skipif(os.geteuid() == 0, reason="permission bits do not bind root")
def test_read_only_folders(trained_run: Path, tmp_path: Path, capsys) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    run = damaged_copy(trained_run, tmp_path, "intact")
    (run / "tensorboard").chmod(0o500)
    try:
        line, _ = one_error_line(capsys, "view", str(trained_run), "--out", str(locked / "v"))
        assert "permission denied" in line
        line, _ = one_error_line(capsys, "train", "--resume", str(run), *TINY_TRAIN)
        assert "cannot be written" in line
    finally:
        locked.chmod(0o700)
        (run / "tensorboard").chmod(0o700)


def test_run_name_cannot_leave_the_root(tmp_path: Path, capsys) -> None:
    root = tmp_path / "a" / "runs"
    for name in ("../..", str(tmp_path / "abs")):
        line, _ = one_error_line(capsys, "play", "--run-root", str(root), "--run-name", name)
        assert "'run_name'" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_debug_shows_the_traceback_of_a_foreseeable_failure(capsys) -> None:
    assert main(["tasks", "list", "--split", "validation", "--debug"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and err.splitlines()[-1].startswith("distrl: error: ")
    assert main(["--debug", "tasks", "list", "env.nope=1"]) == 2
    assert "Traceback" in capsys.readouterr().err


def test_a_bug_keeps_its_traceback(monkeypatch) -> None:
    def buggy(args, overrides):
        return 1 // 0

    monkeypatch.setattr(tasks_cmd, "run", buggy)
    with pytest.raises(ZeroDivisionError):
        main(["tasks", "list"])


def test_every_episode_dropped_fails_with_the_cause(tmp_path: Path, capsys) -> None:
    argv = ["play", "--episodes", "3", "--run-root", str(tmp_path), *FAULTS]
    line, out = one_error_line(capsys, *argv, "env.phonesim.latency.crash_prob=1")
    assert "every episode (3) was dropped: DeviceCrashed x3" in line
    assert "episodes 0" in out and "dropped 3: DeviceCrashed x3" in out
    line, out = one_error_line(capsys, *argv, "env.phonesim.latency.crash_prob=1", "--json")
    summary = json.loads(out)
    assert summary["episodes"] == 0 and summary["dropped_episodes"] == 3
    assert summary["drop_causes"]["DeviceCrashed"]["count"] == 3


def test_some_episodes_dropped_are_reported_not_fatal(tmp_path: Path, capsys) -> None:
    argv = ["play", "--suite", "webshop", "--episodes", "20", "--run-root", str(tmp_path)]
    code = main([*argv, *FAULTS, "env.phonesim.latency.crash_prob=0.1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "dropped" in out and "DeviceCrashed" in out


def test_negative_limit_is_refused(capsys) -> None:
    line, _ = one_error_line(capsys, "tasks", "list", "--limit", "-5")
    assert "--limit: -5 is out of range" in line
