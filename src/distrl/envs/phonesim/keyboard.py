"""The on-screen keyboard: drawn while a text field has focus, and tappable key by key.

Like Android's IME window, the keys are not part of the app's element list (uiautomator does not
dump them), but taps on them type, so a pixel-reading agent can type without the TYPE action.
"""

from __future__ import annotations

from dataclasses import dataclass

from distrl.envs.phonesim.layout import KEYBOARD_TOP, NAV_BAR_TOP

BACKSPACE = "\b"
ENTER = "\n"
_ROWS = ("1234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm" + BACKSPACE, " ." + ENTER)
_LABELS = {BACKSPACE: "DEL", ENTER: "GO", " ": "space"}


@dataclass(frozen=True)
class Key:
    char: str
    bbox: tuple[float, float, float, float]

    @property
    def label(self) -> str:
        return _LABELS.get(self.char, self.char)


def _build_keys() -> tuple[Key, ...]:
    keys: list[Key] = []
    row_height = (NAV_BAR_TOP - KEYBOARD_TOP - 0.01) / len(_ROWS)
    for index, chars in enumerate(_ROWS):
        y0 = KEYBOARD_TOP + 0.005 + index * row_height
        # The bottom row has a wide space bar; other rows share width equally.
        widths = [6.0, 1.5, 2.5] if index == len(_ROWS) - 1 else [1.0] * len(chars)
        if index == 3:
            widths[-1] = 1.6
        total = sum(widths) if index == len(_ROWS) - 1 else 10.0
        x = 0.01 + (0.98 - 0.98 * sum(widths) / total) / 2
        for char, width in zip(chars, widths, strict=True):
            w = 0.98 * width / total
            keys.append(Key(char, (x + 0.003, y0 + 0.004, x + w - 0.003, y0 + row_height - 0.004)))
            x += w
    return tuple(keys)


KEYS: tuple[Key, ...] = _build_keys()


def key_at(y: float, x: float) -> Key | None:
    """The key under a tap at normalised ``(y, x)``, if any."""
    for key in KEYS:
        x0, y0, x1, y1 = key.bbox
        if x0 <= x < x1 and y0 <= y < y1:
            return key
    return None
