"""Bootstrap intervals over seeds against hand computations on fixed numbers."""

from __future__ import annotations

import numpy as np
import pytest

from distrl.bench.curves import seed_band
from distrl.bench.stats import bootstrap_interval, bootstrap_statistic, resample_indices


def test_interval_of_a_mean_matches_the_exact_bootstrap_distribution() -> None:
    # Seeds [0, 0, 0, 1]: a resample's mean is k/4 with k ~ Binomial(4, 1/4), so
    # P(k = 0) = 0.316 (the 2.5th percentile is 0) and P(k <= 2) = 0.949 < 0.975 <= P(k <= 3)
    # = 0.996 (the 97.5th is 0.75).
    assert bootstrap_interval([0.0, 0.0, 0.0, 1.0]) == {
        "mean": 0.25,
        "ci_low": 0.0,
        "ci_high": 0.75,
    }
    # Seeds [1, 3]: resample means 1, 2, 3 with chances 1/4, 1/2, 1/4.
    assert bootstrap_interval([1.0, 3.0]) == {"mean": 2.0, "ci_low": 1.0, "ci_high": 3.0}
    # One seed: nothing to resample, the interval is the point.
    assert bootstrap_interval([0.4]) == {"mean": 0.4, "ci_low": 0.4, "ci_high": 0.4}


def test_resamples_are_fixed_so_a_report_is_reproducible() -> None:
    assert np.array_equal(resample_indices(5), resample_indices(5))
    assert resample_indices(5).shape == (2000, 5)


def test_paired_statistic_resamples_seeds_together() -> None:
    ours, theirs = np.array([0.4, 0.6, 0.2]), np.array([0.2, 0.3, 0.1])  # ours = 2 x theirs

    def statistic(rows: np.ndarray) -> float:
        return float(ours[rows].mean() / theirs[rows].mean())

    interval, defined = bootstrap_statistic(3, statistic)
    assert interval == {"mean": 2.0, "ci_low": 2.0, "ci_high": 2.0} and defined == 1.0
    undefined, share = bootstrap_statistic(3, lambda rows: None if 0 in rows else 1.0)
    assert undefined == {"mean": None, "ci_low": None, "ci_high": None}
    assert share == pytest.approx(np.mean([0 not in row for row in resample_indices(3)]))


def test_band_carries_the_interval_and_the_evaluations_standard_error() -> None:
    curves = [
        [{"minutes": 0.0, "success": s, "success_se": 0.03}, {"minutes": 1.0, "success": s}]
        for s in (0.2, 0.4)
    ]
    assert "se" not in seed_band(curves)  # only where every point has one
    for curve in curves:
        curve[1]["success_se"] = 0.04
    band = seed_band(curves)
    assert band["mean"] == [0.3, 0.3]
    assert band["ci_low"] == [0.2, 0.2] and band["ci_high"] == [0.4, 0.4]
    # sqrt(0.03^2 + 0.03^2) / 2 and sqrt(0.04^2 + 0.04^2) / 2
    assert band["se"] == pytest.approx([0.0212, 0.0283], abs=1e-4)
