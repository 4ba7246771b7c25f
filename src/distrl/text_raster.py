"""Text drawn with PIL, fast: the simulator's screens and the viewer's wireframes share it.

The same strings recur on almost every frame (app names, button labels), so each (text, size) is
rasterised once into a cached alpha mask and pasted in colour afterwards, and each fitted
(ellipsised) string is measured once. Pillow's bundled font gives the same glyphs on every
machine, with no system font needed.
"""

from __future__ import annotations

from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont


@lru_cache(maxsize=64)
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


@lru_cache(maxsize=16384)
def text_mask(text: str, size: int) -> Image.Image:
    """``text`` as an alpha mask (255 where the glyphs are)."""
    face = font(size)
    _, _, right, bottom = face.getbbox(text)
    mask = Image.new("L", (max(1, right), max(1, bottom)), 0)
    ImageDraw.Draw(mask).text((0, 0), text, font=face, fill=255)
    return mask


@lru_cache(maxsize=16384)
def fit_text(text: str, size: int, width: float) -> str:
    """``text`` cut with an ellipsis so it fits ``width`` pixels on one line."""
    face = font(size)
    if face.getlength(text) <= width:
        return text
    low, high = 0, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if face.getlength(text[:mid] + "...") <= width:
            low = mid
        else:
            high = mid - 1
    return text[:low] + "..."
