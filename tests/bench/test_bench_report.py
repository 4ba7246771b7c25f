"""``distrl bench report``: merging synthetic result files into curves, ratios with intervals,
diagnostics and the machine's load; a results folder refuses another setting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from distrl.bench.report import report
from distrl.bench.results import claim_folder, is_done, load_results, save_result
from distrl.cli.main import main
from distrl.config.loader import load_config
from distrl.errors import InputError

TARGET = 0.3


def _record(method: str, seed: int, reach: float, final: float) -> dict:
    """A run that rises linearly from 0.1 to 0.5 at ``2 * reach`` minutes (so it crosses 0.3 at
    ``reach``) and ends with a final evaluation of ``final``."""
    curve = [
        {"minutes": 0.0, "success": 0.1, "success_se": 0.04, "updates": 0},
        {"minutes": 2 * reach, "success": 0.5, "success_se": 0.07, "updates": 10},
        {"minutes": 4.0, "success": final, "success_se": 0.03, "updates": 20, "final": True},
    ]
    diagnostics = {"approx_kl": {"mean": 0.01 * (seed + 1), "last": 0.02, "max": 0.05 * seed}}
    return {
        "method": method,
        "seed": seed,
        "curve": curve,
        "updates": 20,
        "trajectories": 100 + seed,
        "device_utilisation": 0.9,
        "diagnostics": diagnostics,
        "wall_seconds": 250.0,
        "load_start": [1.0 + seed, 1.0, 1.0],
        "load_end": [2.0, 2.0, 2.0],
        "run_dir": f"seed{seed}-{method}",
    }


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    base = load_config("quick")
    claim_folder(tmp_path, base, {"target": TARGET, "baseline": "digirl_sync"})
    for seed, final in enumerate((0.6, 0.5, 0.7)):
        save_result(tmp_path, _record("aride_async", seed, reach=0.5, final=final))
        save_result(tmp_path, _record("digirl_sync", seed, reach=1.5, final=0.5))
    return tmp_path


def test_report_merges_seeds_into_curves_and_ratios_with_intervals(folder: Path) -> None:
    summary = report(folder)
    assert summary["seeds"] == [0, 1, 2] and summary["paired_seeds"] == [0, 1, 2]
    assert set(summary["methods"]) == {"aride_async", "digirl_sync"}
    # Every seed's baseline needs three times as long: so does every resample.
    assert summary["time_to_target_ratio"] == {"mean": 3.0, "ci_low": 3.0, "ci_high": 3.0}
    # Finals 0.6, 0.5, 0.7 over 0.5 each: 1.2; the extreme resamples (all 0.5, all 0.7, each
    # 1/27 > 2.5% likely) bound the interval at 1.0 and 1.4.
    assert summary["final_success_ratio"] == {"mean": 1.2, "ci_low": 1.0, "ci_high": 1.4}
    ours = summary["methods"]["aride_async"]
    assert ours["final_success"] == 0.6 and ours["final_success_ci"]["mean"] == 0.6
    assert ours["time_to_target_minutes"] == pytest.approx(0.5)
    band = ours["curve"]
    assert band["minutes"] == [0.0, 1.0, 4.0]
    assert all(
        lo <= m <= hi
        for lo, m, hi in zip(band["ci_low"], band["mean"], band["ci_high"], strict=True)
    )
    assert band["se"][0] == pytest.approx((3 * 0.04**2) ** 0.5 / 3, abs=1e-4)
    # Diagnostics: the mean over seeds of each run's mean and last, the largest max.
    assert ours["diagnostics"]["approx_kl"] == {"mean": 0.02, "last": 0.02, "max": 0.1}
    assert [run["final_success_se"] for run in ours["runs"]] == [0.03, 0.03, 0.03]
    loads = summary["machine"]["runs"]
    assert len(loads) == 6 and loads[0]["load_start"] == [1.0, 1.0, 1.0]
    assert summary["settings"]["target"] == TARGET
    assert Image.open(summary["plot"]).size[0] > 100
    assert json.loads((folder / "bench-train.json").read_text()) == summary


def test_report_command_and_a_different_target(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "report", str(folder), "--json", "--target", "0.45"]) == 0
    summary = json.loads(capsys.readouterr().out)
    # 0.45 is crossed at 7/8 of the rise: 0.875 and 2.625 minutes.
    assert summary["time_to_target_ratio"]["mean"] == pytest.approx(3.0)
    assert summary["settings"]["target"] == 0.45
    assert main(["bench", "report", str(folder)]) == 0
    assert "final_success_ratio (A-RIDE async over DigiRL, sync): 1.2" in capsys.readouterr().out


def test_partial_results_report_what_is_paired(folder: Path) -> None:
    (folder / "results" / "seed2-digirl_sync.json").unlink()  # the bench was stopped there
    assert not is_done(folder, "digirl_sync", 2) and is_done(folder, "aride_async", 2)
    summary = report(folder)
    assert summary["paired_seeds"] == [0, 1]
    assert summary["methods"]["aride_async"]["seeds"] == [0, 1, 2]
    assert summary["final_success_ratio"]["mean"] == pytest.approx(1.1)  # (0.6 + 0.5) / 2 / 0.5


def test_a_folder_refuses_another_setting_and_bad_files(folder: Path) -> None:
    other = load_config("quick", ["train.batch_size=32"])
    with pytest.raises(InputError, match="another setting \\(train.batch_size differs\\)"):
        claim_folder(folder, other, {"target": TARGET, "baseline": "digirl_sync"})
    claim_folder(folder, load_config("quick", ["seed=7"]), {})  # the seed is not the setting
    (folder / "results" / "seed0-fbc_sync.json").write_text("{not json")
    with pytest.raises(InputError, match="seed0-fbc_sync.json: not a readable bench result"):
        list(load_results(folder))


def test_the_bench_command_refuses_another_setting_in_one_line(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["bench", "train", "--results", str(folder), "--budget-minutes", "1"]
    assert main([*args, "train.eval_every_minutes=0.5"]) == 2
    error = capsys.readouterr().err
    assert "holds runs made with another setting" in error and error.count("\n") == 1


def test_report_of_a_folder_that_is_not_a_bench_says_so_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "report", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert "not a bench train results folder" in error and error.count("\n") == 1
    assert main(["bench", "report", str(tmp_path / "missing")]) == 2
    assert "is not a folder" in capsys.readouterr().err
