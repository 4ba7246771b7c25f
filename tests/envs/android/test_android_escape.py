"""Typed text reaches ``input text`` literally and never as shell syntax."""

from __future__ import annotations

import re
import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from distrl.envs.android.escape import (
    ENTER_KEYEVENT,
    UntypeableText,
    check_typeable,
    input_text_commands,
    quote,
    split_literal_percent_s,
)
from distrl.fakeadb.device_shell import FakeDevice, android_input_text

INJECTIONS = [
    "hello world",
    "it's",
    'say "hi"',
    "a;reboot",
    "a && rm -rf /sdcard",
    "x | cat /data/secret",
    "$(reboot)",
    "`reboot`",
    "a > /sdcard/f",
    "< /etc/passwd",
    "(subshell)",
    "back\\slash\\",
    "100%",
    "100%sure",
    "%s%s %%s",
    "50% off",
    "*",
    "~",
    "~/notes",
    "#comment",
    "-n",
    "--",
    "'",
    "''",
    '"',
    "\\'",
    "$HOME ${IFS}",
    "!!",
    "{a,b}",
    "a & b",
    "end\\",
]


def typed_by(commands: list[str]) -> str:
    """What a device types for these commands: sh word splitting, then Android's %s rule."""
    out = []
    for command in commands:
        if command == ENTER_KEYEVENT:
            out.append("\n")
            continue
        argv = shlex.split(command, posix=True)
        assert argv[:2] == ["input", "text"] and len(argv) == 3, command
        out.append(android_input_text(argv[2]))
    return "".join(out)


@pytest.mark.parametrize("text", INJECTIONS)
def test_quote_is_one_literal_word(text: str) -> None:
    assert shlex.split("input text " + quote(text), posix=True) == ["input", "text", text]


@pytest.mark.parametrize("text", INJECTIONS + ["two\nlines", "\n", "a\n\nb"])
def test_commands_type_the_text_exactly(text: str) -> None:
    assert typed_by(input_text_commands(text)) == text


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.just("\n")))
def test_any_printable_ascii_round_trips(text: str) -> None:
    assert typed_by(input_text_commands(text)) == text


def test_literal_percent_s_is_split_between_commands() -> None:
    assert split_literal_percent_s("a%sb") == ["a%", "sb"]
    assert input_text_commands("5%s") == ["input text '5%'", "input text 's'"]
    # A % before a space is fine inside one command: "%%s" decodes to "% ".
    assert input_text_commands("50% off") == ["input text '50%%soff'"]


def test_newlines_become_enter_key_events() -> None:
    assert input_text_commands("hi\nthere") == [
        "input text 'hi'",
        ENTER_KEYEVENT,
        "input text 'there'",
    ]


@pytest.mark.parametrize(
    ("text", "named"), [("café", "U+00E9"), ("a\tb", "U+0009"), ("🙂", "U+1F642")]
)
def test_untypeable_text_is_refused_naming_the_character(text: str, named: str) -> None:
    with pytest.raises(UntypeableText, match=re.escape(named)):
        check_typeable(text)
    with pytest.raises(UntypeableText):
        input_text_commands(text)


@pytest.mark.parametrize("text", INJECTIONS)
def test_fake_device_receives_the_literal_and_runs_nothing_else(text: str) -> None:
    device = FakeDevice("phonesim-0")
    for command in input_text_commands(text):
        assert device.run(command).exit_code == 0
    assert "".join(device.typed) == text
    assert device.refused == []
    assert all(argv[:2] == ["input", "text"] for argv in device.commands)


def test_fake_device_catches_digirl_style_escaping(tmp_path) -> None:
    """DigiRL escaped only \\ ' " ` $ and turned spaces into %s; the fake shows what leaked."""
    marker = tmp_path / "pwned"

    def digirl_escape(text: str) -> str:
        for char in "\\'\"`$":
            text = text.replace(char, "\\" + char)
        return text.replace(" ", "%s")

    device = FakeDevice("phonesim-0")
    device.run("input text " + digirl_escape(f"ok;touch {marker}"))
    # sh split the line at the ';': a second command, `touch...`, reached the device
    assert [argv[0] for argv in device.commands] == ["input", f"touch%s{marker}"]
    device.run("input text " + digirl_escape("a|b"))
    assert device.refused  # the pipe reached the shell
    assert not marker.exists()  # and still nothing ran on the host
