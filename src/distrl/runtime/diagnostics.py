"""The learner diagnostics a reviewer asks for first, summarised over a whole run.

Every update logs the critic's explained variance, the fraction of steps where the ratio clip or
floor bites, the approximate KL between behaviour and learner policies (A-RIDE's, docs/design.md
§7.5) and the batch's staleness (every algorithm's, §7.7) to TensorBoard. A run's summary (and
so the bench JSON) carries their mean over the run's updates and their last value, and for the
batch's maximum staleness also the largest seen, so a curve can be read beside the health of the
learner that made it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: The learner metrics summarised; an algorithm that does not log one (DigiRL has no ratio
#: clip, a VLM no action heads) simply has no entry for it.
DIAGNOSTICS = (
    "explained_variance",
    "clip_fraction",
    "approx_kl",
    "staleness_mean",
    "staleness_max",
    # Each action head's own entropy (composite policies): whether exploration still reaches
    # the element to tap and the text to type (docs/design.md §7.12).
    "entropy_kind",
    "entropy_tap_element",
    "entropy_type_text",
)


@dataclass
class RunDiagnostics:
    """Update-weighted sums of each diagnostic over the rounds of a run (a round's metrics are
    already means over its updates), its last value and its largest."""

    sums: dict[str, float] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)
    last: dict[str, float] = field(default_factory=dict)
    largest: dict[str, float] = field(default_factory=dict)

    def add(self, metrics: dict[str, float], updates: int) -> None:
        """Count one round's mean ``metrics`` for the ``updates`` it made (none: not counted)."""
        if updates <= 0:
            return
        for key in DIAGNOSTICS:
            if key not in metrics:
                continue
            value = float(metrics[key])
            self.sums[key] = self.sums.get(key, 0.0) + value * updates
            self.weights[key] = self.weights.get(key, 0.0) + updates
            self.last[key] = value
            self.largest[key] = max(self.largest.get(key, value), value)

    def summary(self) -> dict[str, dict[str, float]]:
        """``{metric: {"mean", "last", "max"}}`` for every diagnostic the run logged."""
        return {
            key: {
                "mean": round(self.sums[key] / self.weights[key], 6),
                "last": round(self.last[key], 6),
                "max": round(self.largest[key], 6),
            }
            for key in DIAGNOSTICS
            if self.weights.get(key)
        }

    def state_dict(self) -> dict[str, Any]:
        return {
            "sums": dict(self.sums),
            "weights": dict(self.weights),
            "last": dict(self.last),
            "largest": dict(self.largest),
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> RunDiagnostics:
        return cls(
            dict(state["sums"]), dict(state["weights"]), dict(state["last"]), dict(state["largest"])
        )
