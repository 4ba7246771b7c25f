"""Turning a TYPE action's text into device shell commands that type it literally.

``adb shell`` hands its command string to the device's ``/system/bin/sh``, so whatever a policy
wants typed passes through a shell first. DigiRL escaped only backslash, quotes, backtick and
dollar; ``;``, ``&``, ``|``, ``<``, ``>`` and parentheses still reached the shell, so a model
output such as ``x; rm -rf /sdcard`` ran on the device. Here every argument is POSIX
single-quoted, the one quoting form in which the shell interprets nothing at all (a single quote
itself is written ``'\\''``), so the shell's only job is to hand the bytes to ``input``.

Then ``input text`` itself transforms its argument: it turns every ``%s`` into a space (that is
how one types a space through it) and has no escape for a literal ``%s``. So:

* spaces are sent as ``%s``;
* a literal ``%s`` in the text is split between two ``input text`` commands (``...%`` then
  ``s...``): within one command no ``%`` is ever followed by a literal ``s``, so Android's
  replacement can only hit the ``%s`` that stand for spaces;
* a newline cannot be typed by ``input text``; the text is typed in lines with
  ``input keyevent KEYCODE_ENTER`` between them, which is what pressing Enter on the keyboard
  does;
* ``input text`` maps characters to key events through the virtual keyboard's key map, which
  holds printable ASCII only: any other character (non-ASCII letters, emoji, tabs, control
  characters) is refused with :class:`UntypeableText`, naming the character, before anything is
  sent. :class:`~distrl.envs.android.env.AndroidEnv` counts such an action as invalid instead of
  crashing the episode, so a model that emits it is penalised, not the run.

>>> input_text_commands("it's 5 > 3; ok")
["input text 'it'\\\\''s%s5%s>%s3;%sok'"]
>>> input_text_commands("100%sure")
["input text '100%'", "input text 'sure'"]
"""

from __future__ import annotations

from distrl.errors import InputError

#: The key event ``input keyevent`` sends between lines of a multi-line text.
ENTER_KEYEVENT = "input keyevent KEYCODE_ENTER"
_PRINTABLE_ASCII = frozenset(chr(code) for code in range(0x20, 0x7F))


class UntypeableText(InputError):
    """Text that ``adb shell input text`` cannot type; the message names the character."""


def quote(argument: str) -> str:
    """``argument`` as one POSIX shell word that the shell passes on unchanged.

    Inside single quotes no character is special, so the only thing to handle is the single
    quote itself: close the quote, add an escaped quote, reopen.

    >>> quote("$(reboot)")
    "'$(reboot)'"
    >>> quote("it's")
    "'it'\\\\''s'"
    """
    return "'" + argument.replace("'", "'\\''") + "'"


def check_typeable(text: str) -> None:
    """Raise :class:`UntypeableText` if ``text`` has a character ``input text`` cannot type."""
    for position, char in enumerate(text):
        if char != "\n" and char not in _PRINTABLE_ASCII:
            raise UntypeableText(
                f"cannot type {char!r} (U+{ord(char):04X}, position {position}) with adb "
                "'input text': it types printable ASCII only (newlines become ENTER key events)"
            )


def split_literal_percent_s(line: str) -> list[str]:
    """``line`` cut between every ``%`` and a following ``s``, so no piece holds a literal ``%s``.

    >>> split_literal_percent_s("a%sb%%s")
    ['a%', 'sb%%', 's']
    """
    pieces: list[str] = []
    start = 0
    for index in range(1, len(line)):
        if line[index] == "s" and line[index - 1] == "%":
            pieces.append(line[start:index])
            start = index
    pieces.append(line[start:])
    return [piece for piece in pieces if piece]


def encode_input_text(piece: str) -> str:
    """The ``input text`` argument that types ``piece`` (which holds no literal ``%s``)."""
    if "%s" in piece:
        raise ValueError(f"{piece!r} holds a literal %s; split it with split_literal_percent_s")
    return piece.replace(" ", "%s")


def input_text_commands(text: str) -> list[str]:
    """The device shell commands, in order, that type ``text`` exactly.

    Raises :class:`UntypeableText` (nothing is sent) for characters ``input text`` cannot type.
    """
    check_typeable(text)
    commands: list[str] = []
    for number, line in enumerate(text.split("\n")):
        if number > 0:
            commands.append(ENTER_KEYEVENT)
        for piece in split_literal_percent_s(line):
            commands.append("input text " + quote(encode_input_text(piece)))
    return commands
