"""``distrl bench train``: the time-to-target and final-success maths on hand-computed curves,
one tiny end-to-end run (JSON keys, PNG, one warm start shared by every method) and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from distrl.bench import train_bench
from distrl.bench.curves import band_curve, final_level, ratio, seed_band, time_to_target
from distrl.cli.main import main


def _curve(*points: tuple[float, float]) -> list[dict[str, float]]:
    return [{"minutes": m, "success": s} for m, s in points]


def test_time_to_target_interpolates_the_first_crossing() -> None:
    curve = _curve((0.0, 0.1), (0.5, 0.2), (1.0, 0.4), (1.5, 0.1), (2.0, 0.5))
    # First crossing of 0.3 lies between 0.5 min (0.2) and 1.0 min (0.4): halfway, 0.75 min;
    # the later dip and second crossing do not count.
    assert time_to_target(curve, 0.3) == pytest.approx(0.75)
    # Exactly on a point: that point's minute.
    assert time_to_target(curve, 0.4) == pytest.approx(1.0)
    # 0.45 is first reached between 1.5 (0.1) and 2.0 (0.5): 1.5 + 0.35 / 0.4 * 0.5.
    assert time_to_target(curve, 0.45) == pytest.approx(1.5 + 0.4375)


def test_time_to_target_never_reached_and_reached_at_the_start() -> None:
    assert time_to_target(_curve((0.0, 0.1), (1.0, 0.29)), 0.3) is None
    assert time_to_target(_curve((0.02, 0.35), (1.0, 0.1)), 0.3) == pytest.approx(0.02)


def test_ratios_and_final_level() -> None:
    curve = _curve((0.0, 0.1), (1.0, 0.3), (2.0, 0.5), (2.1, 0.4))
    assert final_level(curve, 2) == pytest.approx(0.45)
    assert final_level(curve, 1) == pytest.approx(0.4)
    assert ratio(3.0, 1.0) == 3.0
    assert ratio(None, 1.0) is None and ratio(3.0, None) is None and ratio(3.0, 0.0) is None


def test_seed_band_reads_curves_on_a_common_grid() -> None:
    seed_a = _curve((0.0, 0.0), (1.0, 0.4), (2.0, 0.4))
    seed_b = _curve((0.0, 0.2), (0.5, 0.2), (1.5, 0.6))  # ends first: the band stops at 1.5
    band = seed_band([seed_a, seed_b])
    assert band["minutes"] == [0.0, 0.5, 1.0, 1.5]
    # seed a at 0.5 is 0.2 (interpolated), at 1.5 is 0.4; seed b at 1.0 is 0.4.
    assert band["mean"] == pytest.approx([0.1, 0.2, 0.4, 0.5])
    assert band["min"] == pytest.approx([0.0, 0.2, 0.4, 0.4])
    assert band["max"] == pytest.approx([0.2, 0.2, 0.4, 0.6])
    # The mean curve of a band crosses 0.3 between 0.5 and 1.0 min, halfway.
    assert time_to_target(band_curve(band), 0.3) == pytest.approx(0.75)


def test_bench_train_end_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    collected: list[int] = []
    handed: list[tuple[str, int]] = []  # (algorithm, id of the start weights it was given)
    collect, train_ray = train_bench.collect_demonstrations, train_bench.train_ray

    def counting(cfg, bench_dir):  # type: ignore[no-untyped-def]
        collected.append(cfg.seed)
        return collect(cfg, bench_dir)

    def spying(cfg, demonstrations, start_weights, **kwargs):  # type: ignore[no-untyped-def]
        handed.append((cfg.train.algo, id(start_weights)))
        return train_ray(cfg, demonstrations=demonstrations, start_weights=start_weights, **kwargs)

    monkeypatch.setattr(train_bench, "collect_demonstrations", counting)
    monkeypatch.setattr(train_bench, "train_ray", spying)
    args = ["bench", "train", "--suite", "general", "--devices", "2", "--budget-minutes", "0.1"]
    args += ["--seeds", "1", "--target", "0.2", "--run-root", str(tmp_path), "--run-name", "b"]
    args += ["--json", "ray.num_cpus=2", "train.eval_every_minutes=0.08", "train.eval_episodes=8"]
    args += ["train.final_eval_episodes=8"]
    args += ["train.warm_start_episodes=16", "train.bc_steps=20", "train.min_replay=8"]
    args += ["env.phonesim.latency.time_scale=0.01"]
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert collected == [0]  # one set of demonstrations for the seed, shared by every method
    assert [p.name for p in (tmp_path / "b").glob("*demos*")] == ["seed0-demos"]
    assert sorted(a for a, _ in handed) == ["aride", "digirl", "fbc"]
    assert len({weights for _, weights in handed}) == 1  # one clone, every method starts from it
    methods = summary["methods"]
    assert set(methods) == {"aride_async", "digirl_sync", "fbc_sync"}
    first_points = set()
    for figures in methods.values():
        run = figures["runs"][0]
        assert Path(run["run_dir"]).parent == tmp_path / "b"
        assert (Path(run["run_dir"]) / "summary.json").exists()  # a run folder `distrl view` reads
        # A loaded machine may spend a tiny budget on the first evaluation: no count is asserted.
        assert run["curve"] and run["trajectories"] >= 0
        first = run["curve"][0]
        assert first["updates"] == 0
        first_points.add((first["success"], first["sampled_success"]))
        for key in ("final_success", "best_success", "time_to_target_minutes", "updates"):
            assert key in figures
    assert len(first_points) == 1  # the same warm-started policy, evaluated alike
    assert methods["aride_async"]["mode"] == "async" and methods["digirl_sync"]["mode"] == "sync"
    settings = summary["settings"]
    assert settings["devices"] == 2 and settings["budget_minutes"] == 0.1
    assert settings["time_scale"] == 0.01 and settings["target"] == 0.2
    assert settings["seeds"] == [0]
    expected = ratio(
        methods["aride_async"]["final_success"], methods["digirl_sync"]["final_success"]
    )
    assert summary["final_success_ratio"]["mean"] == expected
    assert "time_to_target_ratio" in summary and summary["time_to_target_note"]
    assert Image.open(summary["plot"]).size[0] > 100
    assert json.loads((tmp_path / "b" / "bench-train.json").read_text()) == summary


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--seeds", "0"], "--seeds must be >= 1"),
        (["--budget-minutes", "-1"], "--budget-minutes must be > 0"),
        (["--devices", "0"], "--devices must be >= 1"),
        (["--target", "1.5"], "--target must be a success rate"),
        (["train.warm_start_episodes=0"], "needs a warm start"),
        (["--budget-minutes", "1", "train.eval_every_minutes=2"], "exceeds the budget"),
        (["--methods", "aride_async,ppo_sync"], "--methods: unknown ppo_sync"),
        (["--methods", "digirl_sync,fbc_sync"], "--methods must include aride_async"),
        (["--methods", "aride_async,aride_async"], "names a method twice"),
        (["--methods", "aride_async,aride_sync"], "--baseline digirl_sync must be one of"),
        (["--baseline", "aride_async"], "--baseline aride_async must be one of"),
    ],
)
def test_bench_train_rejects_bad_arguments(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "train", *flags]) == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1


def test_the_ratios_divide_by_the_chosen_baseline() -> None:
    """``--methods aride_async,aride_sync --baseline aride_sync``: the same algorithm in both
    runtimes, so the ratios are the runtime's share of the gain."""
    from distrl.bench.report import summarise
    from distrl.config.schema import RunConfig

    def run(method: str, curve: list[dict[str, float]]) -> dict:
        points = [{**point, "updates": 0} for point in curve]
        return {"method": method, "seed": 0, "curve": points, "updates": 0, "trajectories": 10}

    fast = _curve((0.0, 0.1), (1.0, 0.5), (2.0, 0.6))  # 0.3 at 0.5 min
    slow = _curve((0.0, 0.1), (2.0, 0.5), (4.0, 0.4))  # 0.3 at 1.0 min
    runs = [run("aride_async", fast), run("aride_sync", slow)]
    summary = summarise(RunConfig(), runs, 0.3, "aride_sync")
    assert summary["baseline"] == "aride_sync"
    assert set(summary["methods"]) == {"aride_async", "aride_sync"}
    assert summary["time_to_target_ratio"]["mean"] == pytest.approx(2.0)
    assert summary["final_success_ratio"]["mean"] == pytest.approx(0.55 / 0.45, abs=1e-3)
    assert summary["time_to_target_ratio_at_least"] == pytest.approx(2.0)  # both reached it

    never = _curve((0.0, 0.1), (1.5, 0.2), (3.0, 0.25))  # stays below 0.3 for 3 minutes
    runs = [run("aride_async", fast), run("aride_sync", never)]
    summary = summarise(RunConfig(), runs, 0.3, "aride_sync")
    assert summary["time_to_target_ratio"]["mean"] is None
    # It would have needed more than its 3 evaluated minutes, against A-RIDE's 0.5.
    assert summary["time_to_target_ratio_at_least"] == pytest.approx(6.0)
    assert "never reached 0.3" in summary["time_to_target_note"]
