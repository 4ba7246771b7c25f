"""``distrl bench miniwob``: the default task set runs in the backend, task sets resolve, the
JSON of a real (tiny) run has the documented shape, and several seeds average per method."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from distrl.bench.methods import EXPLORATION_METHODS_BY_NAME
from distrl.bench.miniwob_bench import TASK_SETS, BenchRun, _by_method, bench_config, resolve_tasks
from distrl.cli.main import main
from distrl.config.schema import ExploreConfig, MiniWoBConfig
from distrl.envs.miniwob import MiniWoBEnv, miniwob_tasks
from distrl.errors import InputError


def test_the_default_set_has_twenty_tasks_and_each_loads_with_an_instruction(
    chromium: None,
) -> None:
    names = TASK_SETS["default"]
    assert len(names) >= 20 and len(set(names)) == len(names)
    config = MiniWoBConfig(tasks=list(names), screenshots=False)
    env = MiniWoBEnv(config, seed=0, device_id="miniwob-bench-test")
    try:
        for task in miniwob_tasks(config, "test"):
            observation = env.reset(task)
            assert observation.instruction.strip(), task.task_id
            assert any(e.clickable for e in observation.elements), task.task_id
    finally:
        env.close()


def test_task_sets_and_names_resolve_and_bad_ones_fail_in_one_line() -> None:
    assert resolve_tasks("typing") == TASK_SETS["typing"]
    assert resolve_tasks(" click-test, enter-text ") == ("click-test", "enter-text")
    for bad in ("click-tset", "click-test,click-test", " , "):
        with pytest.raises(InputError):
            resolve_tasks(bad)


def test_a_bench_run_is_from_scratch_and_its_seed_wins_over_the_overrides() -> None:
    cfg = bench_config(("click-test", "enter-text"), 2.0, 7, ["seed=3", "train.devices=1"])
    assert cfg.train.warm_start_episodes == 0 and cfg.train.demos is None
    assert cfg.train.demo_fraction == 0 and cfg.train.minutes == 2.0
    assert cfg.env.miniwob.tasks == ["click-test", "enter-text"] and cfg.env.backend == "miniwob"
    assert cfg.seed == 7 and cfg.train.devices == 1


def test_the_bench_switches_every_mechanism_on_and_one_override_turns_one_off() -> None:
    cfg = bench_config(("enter-text",), 1.0, 0)
    assert cfg.curriculum.enabled and cfg.curriculum.unsolved_score == 0.5
    assert cfg.success_replay.share == 0.1 and cfg.env.miniwob.horizon == 10
    assert cfg.explore.candidate_prior == 2.0 and cfg.explore.novelty_bonus == 0.2
    assert cfg.explore.type_needs_focus and cfg.explore.empty_field_type_prior == 2.0
    # "none" switches every exploration mechanism off; the curriculum and replay stay.
    bare = bench_config(("enter-text",), 1.0, 0, EXPLORATION_METHODS_BY_NAME["none"].overrides)
    assert bare.explore == ExploreConfig() and bare.curriculum.enabled
    # "both" is the two original mechanisms alone, as it was before the bench switched the
    # focus mechanisms on (so older commands measure what they did).
    both = bench_config(("enter-text",), 1.0, 0, EXPLORATION_METHODS_BY_NAME["both"].overrides)
    assert both.explore == ExploreConfig(candidate_prior=2.0, novelty_bonus=0.2)
    # The user's override wins over the bench's setting.
    short = bench_config(("enter-text",), 1.0, 0, ["env.miniwob.horizon=6"])
    assert short.env.miniwob.horizon == 6


def test_several_seeds_average_per_method() -> None:
    def run(method: str, seed: int, click: float, enter: float) -> BenchRun:
        per_task = {"click-test": click, "enter-text": enter}
        return BenchRun(method, seed, per_task, 1.0, 10, 20, 2.0, "runs/x", train_episodes={})

    runs = [run("none", 0, 1.0, 0.0), run("none", 1, 0.5, 0.0), run("both", 0, 1.0, 0.5)]
    by_method = _by_method(runs)
    # none: seed means 0.5 and 0.25 -> 0.375; per task (1.0 + 0.5) / 2 = 0.75 and 0.
    assert by_method["none"] == {
        "mean_success": 0.375,
        "min_success": 0.25,
        "max_success": 0.5,
        "per_task": {"click-test": 0.75, "enter-text": 0.0},
        "seeds": [0, 1],
    }
    assert by_method["both"]["mean_success"] == 0.75


def test_bench_miniwob_json_on_a_tiny_real_run(
    chromium: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["bench", "miniwob", "--tasks", "click-test,focus-text", "--minutes", "0.05"]
    args += ["--episodes", "2", "--seed", "4", "--run-root", str(tmp_path), "--json"]
    args += ["train.devices=1", "train.min_replay=1", "train.batch_size=2"]
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert set(summary["per_task"]) == {"click-test", "focus-text"}
    assert all(0.0 <= rate <= 1.0 for rate in summary["per_task"].values())
    mean = sum(summary["per_task"].values()) / 2
    assert summary["mean_success"] == pytest.approx(mean, abs=1e-4)
    assert summary["seed"] == 4 and summary["method"] == "default"
    assert summary["test_episodes_per_task"] == 2 and summary["budget_minutes"] == 0.05
    assert isinstance(summary["updates"], int) and summary["minutes"] >= 0
    assert summary["command"].startswith("distrl ") and Path(summary["run_dir"]).is_dir()
    # Every stored training episode is counted under its task, none twice.
    drawn = summary["train_episodes"]
    assert set(drawn) <= {"click-test", "focus-text"}
    assert sum(task["episodes"] for task in drawn.values()) == summary["episodes"]
    assert all(0 <= task["successes"] <= task["episodes"] for task in drawn.values())
