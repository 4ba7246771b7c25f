"""The run's learner diagnostics: update-weighted means, last and largest values, only for what
the algorithm logs, and a state that survives a checkpoint."""

from __future__ import annotations

import pytest

from distrl.runtime.diagnostics import RunDiagnostics
from distrl.runtime.learner import run_updates


def test_rounds_count_by_their_updates_and_missing_metrics_stay_missing() -> None:
    diagnostics = RunDiagnostics()
    diagnostics.add({"explained_variance": 0.2, "staleness_max": 3.0, "loss": 9.0}, updates=1)
    diagnostics.add({"explained_variance": 0.6, "staleness_max": 1.0}, updates=3)
    diagnostics.add({"explained_variance": 5.0}, updates=0)  # a round that made no update
    summary = diagnostics.summary()
    assert set(summary) == {"explained_variance", "staleness_max"}  # no clip for this algorithm
    # (0.2 * 1 + 0.6 * 3) / 4 = 0.5
    assert summary["explained_variance"] == {"mean": 0.5, "last": 0.6, "max": 0.6}
    assert summary["staleness_max"] == {"mean": pytest.approx(1.5), "last": 1.0, "max": 3.0}
    restored = RunDiagnostics.from_state(diagnostics.state_dict())
    restored.add({"explained_variance": 0.0}, updates=4)
    assert restored.summary()["explained_variance"]["mean"] == pytest.approx(0.25)


def test_a_chunk_averages_each_metric_over_the_updates_that_logged_it() -> None:
    # A batch with no text to type on any screen logs no text-head entropy; counting it as 0
    # would make the head look collapsed.
    logged = iter(
        [
            {"loss": 1.0, "entropy_type_text": 2.0},
            {"loss": 3.0},
            {},  # an all-stale batch: no update
            {"loss": 5.0, "entropy_type_text": 1.0},
        ]
    )
    chunk = run_updates(lambda: next(logged, None), max_updates=10)
    assert chunk["updates"] == 3
    assert chunk["metrics"]["loss"] == pytest.approx(3.0)
    assert chunk["metrics"]["entropy_type_text"] == pytest.approx(1.5)
