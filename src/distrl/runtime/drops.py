"""Dropped episodes and why: a device fault (crash, hang, an unreachable judge) loses the episode
in flight, and a summary that says only "episodes 0" hides that everything failed.

:class:`DropLog` counts dropped episodes by cause (the fault's class) and keeps the latest message
of each, so summaries can say "dropped 20: JudgeUnavailable x20 (VLM judge at ... unavailable)".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from distrl.errors import AllEpisodesDropped, one_line

#: Longest example message kept per cause.
_EXAMPLE_CHARS = 200


@dataclass
class DropLog:
    """Episodes dropped by faults: how many, and how many of each cause."""

    count: int = 0
    causes: dict[str, int] = field(default_factory=dict)
    #: The latest message of each cause (messages carry device ids, so only one is kept).
    examples: dict[str, str] = field(default_factory=dict)

    def record(self, fault: BaseException) -> None:
        cause = type(fault).__name__
        self.count += 1
        self.causes[cause] = self.causes.get(cause, 0) + 1
        self.examples[cause] = one_line(str(fault), _EXAMPLE_CHARS)

    def merge(self, other: DropLog) -> None:
        """Add ``other``'s drops (another worker's, or a later period's) to these; its examples
        are the newer ones."""
        self.count += other.count
        for cause, count in other.causes.items():
            self.causes[cause] = self.causes.get(cause, 0) + count
        self.examples.update(other.examples)

    def summary(self) -> dict[str, object]:
        """JSON figures: ``dropped_episodes`` and ``drop_causes`` (cause -> count and example)."""
        return {
            "dropped_episodes": self.count,
            "drop_causes": {
                cause: {"count": count, "example": self.examples[cause]}
                for cause, count in sorted(self.causes.items(), key=lambda item: -item[1])
            },
        }

    def describe(self) -> str:
        """One line for people, most frequent cause first, e.g.
        ``JudgeUnavailable x3 (VLM judge at http://... unavailable after 1 attempt(s); ...)``."""
        return "; ".join(
            f"{cause} x{count} ({self.examples[cause]})"
            for cause, count in sorted(self.causes.items(), key=lambda item: -item[1])
        )


def check_some_completed(episodes: int, drops: DropLog, run_dir: Path) -> None:
    """A command whose every episode was dropped has failed, whatever it printed: it ends with
    :class:`AllEpisodesDropped` (exit 2) naming the cause, not exit 0 with a success rate of 0.000
    that reads like a policy that never succeeds. Some drops among completed episodes are normal
    on real devices: the summary reports them and the exit status stays 0."""
    if episodes == 0 and drops.count > 0:
        raise AllEpisodesDropped(
            f"every episode ({drops.count}) was dropped: {drops.describe()}; fix the cause and "
            f"run again (figures in {run_dir / 'summary.json'})"
        )
