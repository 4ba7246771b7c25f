"""Intervals over seeds: percentile bootstrap with a fixed generator, so a report of the same
result files always prints the same intervals.

A bench has a handful of seeds per method; what varies between them (warm start, devices, task
draws, the learner's sampling) is what a reviewer wants the figures' uncertainty to cover. The
bootstrap resamples seeds with replacement and reads the 2.5th and 97.5th percentiles of the
statistic over the resamples. Statistics over two methods (the ratios) resample *pairs* of runs
by seed: both methods of a seed start from the same warm start, so the pair is the unit.

>>> interval = bootstrap_interval([1.0, 1.0, 1.0])
>>> (interval["mean"], interval["ci_low"], interval["ci_high"])
(1.0, 1.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

#: Resamples per interval, and the generator's seed (fixed: a report is reproducible).
RESAMPLES = 2000
RNG_SEED = 0
#: Two-sided coverage of every interval.
LEVEL = 0.95

Interval = dict[str, float | None]


def resample_indices(count: int, resamples: int = RESAMPLES, seed: int = RNG_SEED) -> np.ndarray:
    """``resamples`` rows of ``count`` seed indices drawn with replacement."""
    if count < 1:
        raise ValueError("a bootstrap needs at least one seed")
    return np.random.default_rng(seed).integers(0, count, size=(resamples, count))


def percentile_interval(estimate: float | None, replicates: Sequence[float]) -> Interval:
    """``{mean, ci_low, ci_high}``: the estimate on every seed and the central ``LEVEL`` share of
    its bootstrap replicates (None where the estimate or every replicate is undefined)."""
    if estimate is None or not len(replicates):
        return {"mean": estimate, "ci_low": None, "ci_high": None}
    tail = (1.0 - LEVEL) / 2.0
    low, high = np.quantile(np.asarray(replicates, dtype=float), [tail, 1.0 - tail])
    return {
        "mean": round(float(estimate), 4),
        "ci_low": round(float(low), 4),
        "ci_high": round(float(high), 4),
    }


def bootstrap_interval(values: Sequence[float]) -> Interval:
    """The mean of ``values`` (one per seed) with its bootstrap interval."""
    data = np.asarray(values, dtype=float)
    replicates = data[resample_indices(len(data))].mean(axis=1)
    return percentile_interval(float(data.mean()), replicates.tolist())


def bootstrap_statistic(
    count: int, statistic: Callable[[np.ndarray], float | None]
) -> tuple[Interval, float]:
    """``statistic`` of a sample of seed indices (all of them for the estimate, resampled for
    the interval), with the share of resamples where it is defined (a time to target is not
    when a resample's mean curve never reaches the target)."""
    estimate = statistic(np.arange(count))
    replicates = [statistic(row) for row in resample_indices(count)]
    defined = [value for value in replicates if value is not None]
    return percentile_interval(estimate, defined), len(defined) / len(replicates)


def band_intervals(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column of ``rows`` (seeds x grid points), the bootstrap interval of the mean."""
    means = rows[resample_indices(rows.shape[0])].mean(axis=1)  # resamples x grid points
    tail = (1.0 - LEVEL) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail], axis=0)
    return low, high
