"""``distrl bench inference``: real Ray actors and forward passes on both sides, figures that
add up, the service's batches spanning workers, and one-line errors for bad arguments."""

from __future__ import annotations

import json

import pytest

from distrl.bench.inference_bench import bench_config, bench_inference
from distrl.cli.main import main
from distrl.config.schema import RunConfig


def test_bench_inference_measures_both_sides(capsys: pytest.CaptureFixture[str]) -> None:
    cfg = RunConfig()
    cfg.ray.num_cpus = 2
    summary = bench_inference(cfg, [4], ["small"], devices_per_worker=2, seconds=0.5)
    figures = summary["policies"]["small"]
    (row,) = figures["rows"]
    assert row["devices"] == 4 and figures["service_device"] in ("cpu", "cuda")
    for side in ("per_worker", "service"):
        measured = row[side]
        assert measured["actions_per_s"] > 0 and measured["act_calls"] >= 2
        assert 0 < measured["act_ms_p50"] <= measured["act_ms_p95"]
    # Two workers of 2 devices: a service batch holds one request (2 rows) or both (4 rows).
    assert 2 <= row["service"]["mean_batch_size"] <= 4
    expected = row["service"]["actions_per_s"] / row["per_worker"]["actions_per_s"]
    assert row["speedup"] == pytest.approx(expected, abs=0.01)
    assert summary["speedup"] == {"small": row["speedup"]}
    json.dumps(summary)  # what --json prints


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--devices", "0"], "--devices must be comma-separated device counts >= 1"),
        (["--devices", "8,x"], "--devices must be comma-separated device counts"),
        (["--seconds", "0"], "--seconds must be > 0"),
        (["--devices-per-worker", "0"], "--devices-per-worker must be > 0"),
    ],
)
def test_bench_inference_rejects_bad_arguments(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["bench", "inference", "--policy", "small", *args, "--json"]) == 2
    assert message in capsys.readouterr().err


def test_bench_config_picks_the_tiny_vlm_or_the_small_policy() -> None:
    vlm = bench_config(RunConfig(), "vlm").policy
    assert vlm.kind == "vlm" and vlm.vlm.tiny and vlm.vlm.path is None
    assert bench_config(RunConfig(), "small").policy.kind == "small"
