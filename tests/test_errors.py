"""One-line error text: library messages are cut to what went wrong, OS errors get a fix."""

from __future__ import annotations

import errno

import pytest

from distrl.errors import MAX_MESSAGE_CHARS, describe_os_error, first_sentence, one_line


def test_one_line_collapses_breaks_colours_and_length() -> None:
    text = "first\n\n  second\tthird \x1b[1mbold\x1b[0m"
    assert one_line(text) == "first second third bold"
    long = one_line("x" * (MAX_MESSAGE_CHARS * 2))
    assert len(long) == MAX_MESSAGE_CHARS and long.endswith("...")


def test_first_sentence_drops_library_advice() -> None:
    torch_like = (
        "Weights only load failed. This file can still be loaded, to do so you have two options, "
        "\x1b[1mdo those steps only if you trust the source\x1b[0m.\n(1) Re-running `torch.load` "
        "with `weights_only` set to `False` will likely succeed"
    )
    assert first_sentence(torch_like) == "Weights only load failed"
    assert first_sentence("\n\nonly line") == "only line"
    assert first_sentence("") == ""


@pytest.mark.parametrize(
    ("error", "needles"),
    [
        (
            PermissionError(errno.EACCES, "Permission denied", "runs/x"),
            ["permission denied", "'runs/x'", "--run-root"],
        ),
        (OSError(errno.EROFS, "Read-only file system", "/ro"), ["read-only", "'/ro'"]),
        (NotADirectoryError(errno.ENOTDIR, "Not a directory", "a/b"), ["is a file, not a folder"]),
        (OSError(errno.ENOSPC, "No space left on device", "d"), ["disk is full"]),
        (
            ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"),
            ["connection refused", "nothing listens"],
        ),
        (
            FileExistsError(errno.EEXIST, "File exists", "a", None, "b"),
            ["'a' -> 'b'", "already exists"],
        ),
    ],
)
def test_os_errors_name_the_path_and_the_fix(error: OSError, needles: list[str]) -> None:
    message = describe_os_error(error)
    assert "\n" not in message
    for needle in needles:
        assert needle in message


def test_os_error_without_errno_keeps_its_text() -> None:
    assert describe_os_error(OSError("socket closed\nsecond line")) == "oserror (socket closed)"
