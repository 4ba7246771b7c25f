"""The run's learner diagnostics: update-weighted means, last and largest values, only for what
the algorithm logs, and a state that survives a checkpoint."""

from __future__ import annotations

import pytest

from distrl.runtime.diagnostics import RunDiagnostics


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
