"""The learning rate over a run (``train.lr_schedule``): constant, or falling linearly to zero.

Why a decay: with a constant rate the policy goes on moving by a full step per update to the
last one, so the greedy policy a run ends with (the one it quotes and saves) is a draw from that
churn. A linear decay, the usual fix in policy-gradient training, makes the last updates small,
so the end of a run settles instead of drifting. On vlm-quick it did not raise the end over
three seeds (docs/results.md, "A learning rate decaying to 0 does not help"), so it is off by
default and in every preset.

Runs are bounded by wall-clock minutes (``train.minutes``, ``train.total_minutes``) or by an
update count (``train.max_updates``); the decay follows whichever runs out first, the budget the
training loop stops on (:attr:`~distrl.runtime.run_log.RunClock.fraction`). A warm start spends
part of ``train.total_minutes`` before the loop begins, so the time decay runs from the budget
left at the loop's first look, not from zero. A resumed run carries the scale its checkpoint
holds and lets it fall over what its budget has left: the rate never jumps back up.
"""

from __future__ import annotations

from distrl.config.schema import LrScheduleKind


class LearningRateSchedule:
    """The factor on ``train.lr`` for the learner's next updates."""

    def __init__(self, kind: LrScheduleKind, start_scale: float = 1.0):
        if not 0.0 <= start_scale <= 1.0:
            raise ValueError(f"a learning-rate scale is in [0, 1], got {start_scale}")
        self.kind = kind
        #: The scale at the loop's first look (a resumed run's checkpointed scale).
        self.start_scale = start_scale
        #: The time budget's spent fraction at the loop's first look (None: not looked yet).
        self.start_fraction: float | None = None
        #: The scale last handed out (what a checkpoint keeps).
        self.last = start_scale if kind == "linear" else 1.0

    def scale(self, time_fraction: float, updates: int, max_updates: int | None) -> float:
        """The factor once ``time_fraction`` of the time budget and ``updates`` of
        ``max_updates`` (None: no update budget) are spent."""
        if self.kind == "constant":
            return 1.0
        if self.start_fraction is None:
            self.start_fraction = min(max(time_fraction, 0.0), 1.0)
        left = 1.0 - self.start_fraction
        by_time = (1.0 - time_fraction) / left if left > 0 else 0.0
        by_updates = 1.0 - updates / max_updates if max_updates else 1.0
        self.last = min(max(min(self.start_scale * by_time, by_updates), 0.0), 1.0)
        return self.last
