"""Success-against-time curves: when a curve first reaches a target, its final level, and the
mean and spread of several seeds' curves on one time grid.

A curve is the list of evaluation points a run records (``TrainResult.curve``): dicts with
``minutes`` (wall-clock time of the evaluation) and ``success`` (greedy test success), in time
order. Evaluations land a little after their scheduled minute and at slightly different times in
each run, so comparisons interpolate linearly between points instead of reading them off by index.

>>> curve = [{"minutes": 0.0, "success": 0.2}, {"minutes": 1.0, "success": 0.6}]
>>> round(time_to_target(curve, 0.4), 6)
0.5
>>> time_to_target(curve, 0.7) is None
True
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from distrl.bench.stats import band_intervals

Curve = Sequence[dict[str, float]]


def time_to_target(curve: Curve, target: float, key: str = "success") -> float | None:
    """Minutes until ``curve`` first reaches ``target``: the first point at or above it, with
    the crossing placed by linear interpolation from the point before (None: never reached).

    A curve that starts at or above the target reaches it at its first point's minute."""
    for index, point in enumerate(curve):
        if point[key] < target:
            continue
        if index == 0:
            return float(point["minutes"])
        before = curve[index - 1]
        # before[key] < target <= point[key], so the rise is positive.
        share = (target - before[key]) / (point[key] - before[key])
        return float(before["minutes"] + share * (point["minutes"] - before["minutes"]))
    return None


def final_level(curve: Curve, last_points: int = 2, key: str = "success") -> float:
    """Mean of the last ``last_points`` points: the run's final success, less noisy than the
    last evaluation alone (each evaluation is a few dozen episodes)."""
    if not curve:
        raise ValueError("an empty curve has no final level")
    tail = curve[-last_points:]
    return float(np.mean([p[key] for p in tail]))


def best_level(curve: Curve, key: str = "success") -> float:
    return float(max(p[key] for p in curve))


def on_grid(curve: Curve, grid: Sequence[float], key: str = "success") -> list[float]:
    """``curve`` read at each minute of ``grid`` (linear between points, flat past the ends)."""
    minutes = [p["minutes"] for p in curve]
    values = [p[key] for p in curve]
    return [float(v) for v in np.interp(grid, minutes, values)]


def seed_grid(curves: Sequence[Curve], key: str = "success") -> tuple[list[float], np.ndarray]:
    """Every seed's evaluation minutes up to the earliest last point (no curve is extrapolated
    past its end), and each curve read on them: ``(grid, rows)``, one row per seed."""
    end = min(c[-1]["minutes"] for c in curves)
    grid = sorted({round(p["minutes"], 6) for c in curves for p in c if p["minutes"] <= end})
    return grid, np.array([on_grid(c, grid, key) for c in curves])


def seed_band(curves: Sequence[Curve], key: str = "success") -> dict[str, list[float]]:
    """Mean, min and max over seeds of ``curves`` on their common grid (:func:`seed_grid`), the
    mean's 95% bootstrap interval over seeds, and, where every point carries one, the standard
    error of the mean from the evaluations' own sampling (``sqrt(sum se_i^2) / n``). With one
    seed the mean is that seed's curve, point for point."""
    grid, rows = seed_grid(curves, key)
    low, high = band_intervals(rows)
    band = {
        "minutes": grid,
        "mean": [round(float(v), 4) for v in rows.mean(axis=0)],
        "ci_low": [round(float(v), 4) for v in low],
        "ci_high": [round(float(v), 4) for v in high],
        "min": [round(float(v), 4) for v in rows.min(axis=0)],
        "max": [round(float(v), 4) for v in rows.max(axis=0)],
    }
    if all(f"{key}_se" in point for curve in curves for point in curve):
        errors = np.array([on_grid(c, grid, f"{key}_se") for c in curves])
        band["se"] = [round(float(v), 4) for v in np.sqrt((errors**2).sum(axis=0)) / len(curves)]
    return band


def final_success(curve: Curve, last_points: int = 2) -> float:
    """A run's final success: its evaluation of the final policy where the curve marks one
    (``final``, measured on ``train.final_eval_episodes``), else the mean of its last
    ``last_points`` points (curves from before the final evaluation existed)."""
    if curve and curve[-1].get("final"):
        return float(curve[-1]["success"])
    return final_level(curve, last_points)


def band_curve(band: dict[str, list[float]]) -> list[dict[str, float]]:
    """The mean of a :func:`seed_band` as a curve (for :func:`time_to_target`)."""
    return [
        {"minutes": m, "success": s} for m, s in zip(band["minutes"], band["mean"], strict=True)
    ]


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """``numerator / denominator``, or None where either is missing or the denominator is 0."""
    if numerator is None or denominator is None or denominator <= 0:
        return None
    return round(numerator / denominator, 3)
