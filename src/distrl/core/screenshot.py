"""Bounded screenshots: what a device's screen costs once it is part of a trajectory.

A 360x720 PhoneSim screenshot is 0.78 MB as an array, and a VLM run keeps one per step in the
replay and sends it through Ray and into the store. Devices therefore hand out screenshots
bounded at the source (``env.screenshot_encoding``, ``env.screenshot_max_side``;
:class:`~distrl.envs.bounded.BoundedScreenshots`): downscaled to a longest side, and PNG-encoded
(lossless, so a policy that acts on the decoded pixels and a learner that scores them later see
the same image, and their log-probs agree). PhoneSim screens are flat colour and text, so PNG
keeps them at ~23 KiB (docs/design.md §8, bounded memory).

:class:`PNGScreenshot` decodes on every :meth:`~PNGScreenshot.decode` and caches nothing: a
replay of 20,000 windows stays at its encoded size however often its steps are scored.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from PIL import Image

if TYPE_CHECKING:
    from distrl.core.observation import Observation

__all__ = [
    "PNGScreenshot",
    "ScreenshotEncoding",
    "bound_observation",
    "bound_pixels",
    "rgb_image",
]

#: How a device's screenshots are kept: ``png`` (encoded, decoded when read) or ``raw`` arrays.
ScreenshotEncoding = Literal["png", "raw"]

#: zlib level 1: on PhoneSim screens it is 1.2x the bytes of the default level 6 at 2/3 the time.
_PNG_LEVEL = 1


def rgb_image(pixels: np.ndarray) -> Image.Image:
    """``pixels`` (``HxWx3`` or ``HxWx4``, any numeric dtype) as an 8-bit RGB image: the one
    conversion every screenshot goes through before it is resized or encoded."""
    return Image.fromarray(np.ascontiguousarray(pixels[..., :3]).astype(np.uint8), "RGB")


@dataclass(frozen=True, slots=True)
class PNGScreenshot:
    """An ``HxWx3`` uint8 screenshot held as PNG bytes; ``np.asarray`` or :meth:`decode` gives
    the pixels (a new array each time)."""

    png: bytes
    height: int
    width: int

    @classmethod
    def encode(cls, pixels: np.ndarray) -> PNGScreenshot:
        image = rgb_image(pixels)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG", compress_level=_PNG_LEVEL)
        return cls(buffer.getvalue(), image.height, image.width)

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.height, self.width, 3)

    @property
    def nbytes(self) -> int:
        """Bytes held (the encoded size, not the decoded array's)."""
        return len(self.png)

    def decode(self) -> np.ndarray:
        with Image.open(io.BytesIO(self.png)) as image:
            return np.asarray(image.convert("RGB"), dtype=np.uint8)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        pixels = self.decode()
        return pixels if dtype is None else pixels.astype(dtype)


def bound_pixels(
    pixels: np.ndarray, encoding: ScreenshotEncoding, max_side: int | None
) -> np.ndarray | PNGScreenshot:
    """``pixels`` downscaled so that its longest side is at most ``max_side`` (``None``: kept),
    then PNG-encoded when ``encoding`` is ``png``."""
    height, width = int(pixels.shape[0]), int(pixels.shape[1])
    if max_side is not None and max(height, width) > max_side:
        scale = max_side / max(height, width)
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        image = rgb_image(pixels)
        # LANCZOS keeps thin UI text legible where bilinear would alias it away.
        pixels = np.asarray(image.resize(size, Image.Resampling.LANCZOS))
    return PNGScreenshot.encode(pixels) if encoding == "png" else pixels


def bound_observation(
    observation: Observation, encoding: ScreenshotEncoding, max_side: int | None
) -> Observation:
    """``observation`` with its screenshot bounded (see :func:`bound_pixels`); an observation
    whose screenshot is already encoded, or is the 1x1 placeholder, is returned as it is."""
    screenshot = observation.screenshot
    if isinstance(screenshot, PNGScreenshot) or screenshot.shape[:2] == (1, 1):
        return observation
    return replace(observation, screenshot=bound_pixels(screenshot, encoding, max_side))
