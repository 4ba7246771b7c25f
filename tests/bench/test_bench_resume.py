"""A train bench survives interruption: a tiny real bench (two methods, one seed, seconds a run)
stopped after its first run keeps that run's result, and the same command run again (on the
folder, moved) trains only the other method, from the same kept warm start, then reports both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from distrl.bench import train_bench
from distrl.bench.results import result_path
from distrl.cli.main import main


class Interrupted(Exception):
    """Stands for the bench being stopped (Ctrl-C, a lost machine) between two runs."""


def test_a_rerun_skips_finished_runs_and_reuses_the_warm_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    collected: list[int] = []
    trained: list[str] = []
    collect, train_ray = train_bench.collect_demonstrations, train_bench.train_ray

    def counting(cfg, bench_dir):  # type: ignore[no-untyped-def]
        collected.append(cfg.seed)
        return collect(cfg, bench_dir)

    def stopping_after_one(cfg, **kwargs):  # type: ignore[no-untyped-def]
        if trained:
            raise Interrupted
        trained.append(cfg.run_name)
        return train_ray(cfg, **kwargs)

    monkeypatch.setattr(train_bench, "collect_demonstrations", counting)
    monkeypatch.setattr(train_bench, "train_ray", stopping_after_one)
    results = tmp_path / "bench"
    args = ["bench", "train", "--devices", "2", "--budget-minutes", "0.05", "--seeds", "1"]
    args += ["--methods", "aride_async,digirl_sync", "--results", str(results), "--json"]
    args += ["--run-root", str(tmp_path), "ray.num_cpus=2", "train.eval_every_minutes=0.05"]
    args += ["train.eval_episodes=4", "train.final_eval_episodes=4", "train.min_replay=4"]
    args += ["train.warm_start_episodes=8", "train.bc_steps=5"]
    args += ["env.phonesim.latency.time_scale=0.01"]
    with pytest.raises(Interrupted):
        main(args)
    assert trained == ["seed0-aride_async"]  # the seed's first method (rotation starts there)
    first = result_path(results, "aride_async", 0)
    kept = first.read_text()
    assert not result_path(results, "digirl_sync", 0).exists()
    assert (results / "seed0-warm-start.pt").exists()

    def recording(cfg, **kwargs):  # type: ignore[no-untyped-def]
        trained.append(cfg.run_name)
        return train_ray(cfg, **kwargs)

    # The folder is moved before the rerun (renamed, or copied to another machine): the kept
    # warm start finds its demonstrations inside it, wherever it now is.
    moved = tmp_path / "moved"
    results.rename(moved)
    results, first = moved, result_path(moved, "aride_async", 0)
    args[args.index("--results") + 1] = str(results)
    monkeypatch.setattr(train_bench, "train_ray", recording)
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert trained == ["seed0-aride_async", "seed0-digirl_sync"]  # the finished run skipped
    assert collected == [0]  # the warm start was kept, not made again
    assert first.read_text() == kept
    assert set(summary["methods"]) == {"aride_async", "digirl_sync"}
    assert summary["seeds"] == [0] and summary["paired_seeds"] == [0]
    # Both start from the same kept weights: their first evaluation is the same one.
    firsts = {m["runs"][0]["curve"][0]["success"] for m in summary["methods"].values()}
    assert len(firsts) == 1
    for key in ("time_to_target_ratio", "final_success_ratio"):
        assert set(summary[key]) == {"mean", "ci_low", "ci_high"}
    assert json.loads((results / "bench-train.json").read_text()) == summary
