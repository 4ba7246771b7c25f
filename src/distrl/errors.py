"""Errors that are the user's to fix, and how they are told: one line naming the problem and fix.

:class:`InputError` is raised by the code that knows what an input is (the checkpoint loader, the
task-file reader, the run-folder maker) so its message can name the file and the fix. The CLI
prints these as ``distrl: error: <message>`` and exits with status 2; anything else that escapes is
a bug in distrl, not in the user's input, and keeps its traceback.

Operating-system errors (a folder that cannot be written, a path that is a file) are foreseeable
too but raised deep inside libraries; :func:`describe_os_error` turns one into the same kind of
line, so the CLI can report them without a traceback.
"""

from __future__ import annotations

import errno
import re

#: Longest error line printed; past it the message is cut (a line is for reading, not a dump).
MAX_MESSAGE_CHARS = 600

_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class InputError(ValueError):
    """Bad input from the user; ``str(error)`` is one line that names the input and the fix."""


class AllEpisodesDropped(InputError):
    """A command ran, but every episode was lost to a fault (devices down, judge unreachable):
    nothing it measured means anything, so it fails like bad input, with the cause."""


def one_line(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` as one line: terminal colour codes dropped, line breaks and runs of spaces
    collapsed, cut at ``limit`` characters (libraries such as torch put advice paragraphs into
    their exception messages; a one-line error must not carry them)."""
    plain = _ANSI_ESCAPE.sub("", text)
    collapsed = " ".join(plain.split())
    return collapsed if len(collapsed) <= limit else collapsed[: limit - 3] + "..."


def first_sentence(text: str) -> str:
    """The first sentence of an exception message, without colour codes: what went wrong, not
    the library's advice on what to try next (torch follows a one-line reason with paragraphs).

    >>> first_sentence("Reading failed: bad header. If you see this, try weights_only=False.")
    'Reading failed: bad header'
    """
    for line in _ANSI_ESCAPE.sub("", text).splitlines():
        if line.strip():
            return one_line(line.split(". ")[0].strip().removesuffix("."))
    return ""


# What to do about each kind of operating-system error, keyed by errno.
_OS_ERROR_FIXES: dict[int, str] = {
    errno.EACCES: "check its permissions, or choose a folder you may write (e.g. --run-root)",
    errno.EPERM: "check its permissions, or choose a folder you may write (e.g. --run-root)",
    errno.EROFS: "the file system is read-only; choose a writable folder (e.g. --run-root)",
    errno.ENOSPC: "the disk is full; free some space or choose another folder",
    errno.EDQUOT: "the disk quota is exceeded; free some space or choose another folder",
    errno.ENOTDIR: "a part of the path is a file, not a folder; choose another path",
    errno.EISDIR: "it is a folder where a file was expected; choose a file",
    errno.EEXIST: "something already exists there; move it away or choose another path",
    errno.ENOENT: "check the path",
    errno.ENAMETOOLONG: "choose a shorter path",
    errno.ECONNREFUSED: "nothing listens there; start the service or fix its address",
    errno.EHOSTUNREACH: "the host cannot be reached; check the address and the network",
    errno.ETIMEDOUT: "the connection timed out; check the address and the network",
}


def describe_os_error(error: OSError) -> str:
    """One line for an ``OSError``: the failure, the path(s) it concerns, and what to do.

    >>> print(describe_os_error(OSError(28, "No space left on device", "runs")))
    no space left on device: 'runs' (the disk is full; free some space or choose another folder)
    """
    reason = (error.strerror or type(error).__name__).strip().lower()
    paths = [p for p in (error.filename, error.filename2) if p is not None]
    where = " -> ".join(repr(str(p)) for p in paths)
    fix = _OS_ERROR_FIXES.get(error.errno or -1)
    if fix is None and not error.strerror:
        fix = first_sentence(str(error)) or None
    message = f"{reason}: {where}" if where else reason
    return one_line(f"{message} ({fix})" if fix else message)
