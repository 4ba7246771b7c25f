"""Progress bars on stderr that leave nothing behind when the command fails.

A bar that stays on screen after a failure would put a second line beside the one
``distrl: error:`` line (and, in a log file, a stale "0% done" record), so a failing command's bar
is erased (on a terminal) or never written (to a file or pipe), whatever ``keep`` says.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import Progress, ProgressColumn


@contextmanager
def progress_bar(
    *columns: str | ProgressColumn, console: Console, keep: bool = True
) -> Iterator[Progress]:
    """A started :class:`Progress`; ``keep`` leaves its last state on screen when the block
    succeeds."""
    progress = Progress(*columns, console=console, transient=not keep)
    with progress:
        try:
            yield progress
        except BaseException:
            discard(progress)
            raise


def discard(progress: Progress) -> None:
    """Stop ``progress`` leaving nothing behind: the bar is erased, and the blank line
    ``Progress.stop`` writes to a non-terminal is skipped (for a command that has failed even
    though nothing raised inside the bar, such as a play whose every episode was dropped)."""
    progress.live.transient = True
    progress.live.stop()
    progress.disable = True
