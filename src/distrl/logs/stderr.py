"""The ``distrl`` command's log handler on stderr.

A run in a terminal shows a progress bar; a run whose stderr is a file or a pipe (``distrl train
... 2>log``, a CI job) shows nothing of the bar until it ends, so there module loggers' progress
lines (``INFO``) are written instead, each one line with a timestamp. ``--debug`` adds ``DEBUG``
lines. The handler is attached for one command and removed after it (commands run in-process in
tests, each with its own stderr).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

#: The logger every distrl module logger sits under (``logging.getLogger(__name__)``).
ROOT = "distrl"
LINE_FORMAT = "%(asctime)s %(name)s: %(message)s"


def stderr_level(debug: bool = False) -> int:
    """``DEBUG`` with ``--debug``; ``INFO`` (progress lines) when stderr is not a terminal;
    ``WARNING`` on a terminal, where progress bars report progress."""
    if debug:
        return logging.DEBUG
    isatty = getattr(sys.stderr, "isatty", None)
    return logging.WARNING if isatty is not None and isatty() else logging.INFO


@contextmanager
def logging_to_stderr(debug: bool = False) -> Iterator[logging.Handler]:
    """Within the block, distrl's loggers write to the current ``sys.stderr``."""
    logger = logging.getLogger(ROOT)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(LINE_FORMAT, datefmt="%Y-%m-%d %H:%M:%S"))
    level = stderr_level(debug)
    handler.setLevel(level)
    previous = (logger.level, logger.propagate)
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False  # an application that embeds distrl keeps its own root handlers
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous[0])
        logger.propagate = previous[1]
