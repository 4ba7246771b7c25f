"""Colours and sizes a screen is drawn with; varied per episode when theme variation is on.

Real devices differ in theme (light/dark, accent colours, font scale); an agent that only ever
saw one palette overfits to it, which is why the "in the wild" dynamics vary it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Color = tuple[int, int, int]

ACCENTS: tuple[Color, ...] = (
    (26, 115, 232),
    (15, 157, 88),
    (219, 68, 55),
    (244, 160, 0),
    (103, 58, 183),
    (0, 137, 123),
    (233, 30, 99),
    (84, 110, 122),
)


#: Each screen role's colour in the light and in the dark theme.
_PALETTES: dict[str, tuple[Color, Color]] = {
    "background": ((250, 250, 250), (32, 33, 36)),
    "surface": ((255, 255, 255), (48, 49, 52)),
    "text": ((32, 33, 36), (232, 234, 237)),
    "muted_text": ((95, 99, 104), (170, 174, 181)),
    "divider": ((218, 220, 224), (80, 82, 86)),
}
_LIGHT_PALETTE = {role: light for role, (light, _) in _PALETTES.items()}
_DARK_PALETTE = {role: dark for role, (_, dark) in _PALETTES.items()}


@dataclass(frozen=True)
class Theme:
    background: Color
    surface: Color
    text: Color
    muted_text: Color
    accent: Color
    divider: Color
    font_scale: float = 1.0
    dark: bool = False

    @classmethod
    def light(cls, accent: Color = ACCENTS[0], font_scale: float = 1.0) -> Theme:
        return cls(**_LIGHT_PALETTE, accent=accent, font_scale=font_scale)

    @classmethod
    def dark_theme(cls, accent: Color = ACCENTS[0], font_scale: float = 1.0) -> Theme:
        return cls(**_DARK_PALETTE, accent=accent, font_scale=font_scale, dark=True)

    @classmethod
    def sample(cls, rng: np.random.Generator, dark: bool) -> Theme:
        """A random accent and font scale; ``dark`` follows the phone's dark-theme setting."""
        accent = ACCENTS[int(rng.integers(len(ACCENTS)))]
        font_scale = float(rng.choice([0.9, 1.0, 1.1]))
        return cls.dark_theme(accent, font_scale) if dark else cls.light(accent, font_scale)


def readable_on(color: Color) -> Color:
    """Black or white, whichever reads better on ``color`` (for text on coloured bars)."""
    luminance = 0.299 * color[0] + 0.587 * color[1] + 0.114 * color[2]
    return (20, 20, 20) if luminance > 160 else (255, 255, 255)
