"""``distrl bench collect`` end to end on a local Ray: both modes on the same devices, the
scaling curve and its PNG, and figures that add up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from distrl.cli.main import main


def test_bench_collect_both_modes_and_scaling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plot = tmp_path / "scaling.png"
    args = ["bench", "collect", "--devices", "4", "--mode", "both", "--minutes", "0.2"]
    args += ["--time-scale", "0.02", "--scaling", "2,4", "--plot", str(plot)]
    args += ["--run-root", str(tmp_path), "--json", "ray.num_cpus=2"]
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    modes = summary["modes"]
    assert set(modes) == {"async", "sync"}
    for figures in modes.values():
        assert figures["devices"] == 4 and figures["trajectories"] > 0
        assert 0 < figures["device_utilisation"] <= 1
        # trajectories per modelled hour = trajectories / (real seconds / time scale) * 3600
        expected = figures["trajectories"] / (figures["real_seconds"] / 0.02) * 3600
        assert figures["trajectories_per_hour"] == pytest.approx(expected, rel=0.02)
    ratio = modes["async"]["trajectories_per_hour"] / modes["sync"]["trajectories_per_hour"]
    assert summary["async_over_sync"] == pytest.approx(ratio, rel=1e-2)
    # The barrier leaves sync devices idle: its utilisation is below async's.
    assert modes["sync"]["device_utilisation"] < modes["async"]["device_utilisation"]
    assert [p["devices"] for p in summary["scaling"]] == [2, 4]
    assert summary["scaling"][0]["efficiency"] == 1.0
    assert Image.open(plot).size[0] > 100


def test_bench_collect_rejects_bad_scaling(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "collect", "--scaling", "8,x"]) == 2
    assert "--scaling must be comma-separated" in capsys.readouterr().err
