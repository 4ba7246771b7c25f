"""What a device shows an agent: a screenshot, the UI element list and the instruction."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from distrl.core.action import Action
from distrl.core.screenshot import PNGScreenshot

#: Joins the parts of one node's text where a device shows a title with a subtitle under it
#: ("Ana Silva · Call me when you get this", "Spotify · Music & Audio - 4.4 stars"): PhoneSim
#: writes a list row's title, subtitle and badge this way, as one accessibility node.
TITLE_SEPARATOR = " · "


@dataclass(frozen=True, slots=True)
class UIElement:
    """One on-screen element, as an accessibility tree (uiautomator) would report it.

    ``bbox`` is ``(x0, y0, x1, y1)`` normalised to [0, 1] of the screen, so element lists do not
    depend on the screenshot resolution; an action's ``[y, x]`` point lands in it when
    ``x0 <= x < x1 and y0 <= y < y1``.
    """

    text: str
    bbox: tuple[float, float, float, float]
    clickable: bool
    resource_id: str
    kind: str = "text"
    checked: bool | None = None
    focused: bool = False

    @property
    def center_yx(self) -> tuple[float, float]:
        x0, y0, x1, y1 = self.bbox
        return ((y0 + y1) / 2.0, (x0 + x1) / 2.0)

    @property
    def title(self) -> str:
        """The text up to its first :data:`TITLE_SEPARATOR`: the row's own label without its
        subtitle (the whole text where there is none)."""
        return self.text.split(TITLE_SEPARATOR, 1)[0]

    def contains(self, y: float, x: float) -> bool:
        x0, y0, x1, y1 = self.bbox
        return x0 <= x < x1 and y0 <= y < y1


#: The 1x1 black screenshot of an observation taken without one (a device asked for none, or a
#: learner dropped it): one shared read-only array, so it costs nothing per step.
NO_SCREENSHOT = np.zeros((1, 1, 3), dtype=np.uint8)
NO_SCREENSHOT.setflags(write=False)


@dataclass(frozen=True)
class Observation:
    """One observation. ``screenshot`` is HxWx3 uint8, as an array or PNG-encoded
    (:class:`~distrl.core.screenshot.PNGScreenshot`, what bounded devices hand out: read it with
    :meth:`pixels`); ``elements`` may be empty for pixel-only backends; ``previous_actions`` are
    the episode's actions so far (the AitW prompt uses them)."""

    screenshot: np.ndarray | PNGScreenshot
    instruction: str
    elements: tuple[UIElement, ...] = ()
    previous_actions: tuple[Action, ...] = field(default_factory=tuple)

    def pixels(self) -> np.ndarray:
        """The screenshot as an HxWx3 uint8 array (an encoded one is decoded now, not cached)."""
        if isinstance(self.screenshot, PNGScreenshot):
            return self.screenshot.decode()
        return self.screenshot

    def without_screenshot(self) -> Observation:
        """This observation with a 1x1 black screenshot: what a learner keeps for a policy that
        reads only the element list (a 360x720 screenshot is 0.78 MB; a replay of 20,000
        windows of them would not fit in memory)."""
        return replace(self, screenshot=NO_SCREENSHOT)


class SharedElements:
    """Equal UI elements held as one object, for a replay that keeps many observations.

    Screens repeat: 200 PhoneSim episodes show 10,784 elements but only 696 distinct ones, and
    each arrives from a worker as its own copy (~490 bytes). Mapping every element to the first
    equal one seen makes a replayed step ~2.5x smaller (6.5 -> 2.6 KiB measured). Elements are
    frozen, so sharing them changes nothing a reader can see. The pool is emptied when it
    exceeds ``limit`` distinct elements (sharing then restarts; nothing is lost), so a backend
    whose screens never repeat cannot grow it without bound.
    """

    def __init__(self, limit: int = 100_000):
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        self.limit = limit
        self._pool: dict[UIElement, UIElement] = {}

    def __len__(self) -> int:
        return len(self._pool)

    def share(self, observation: Observation) -> Observation:
        """``observation`` with each element replaced by the pool's equal one.

        >>> pool = SharedElements()
        >>> a = Observation(NO_SCREENSHOT, "x", (UIElement("OK", (0, 0, 1, 1), True, "ok"),))
        >>> b = Observation(NO_SCREENSHOT, "x", (UIElement("OK", (0, 0, 1, 1), True, "ok"),))
        >>> pool.share(a).elements[0] is pool.share(b).elements[0], len(pool)
        (True, 1)
        """
        if len(self._pool) > self.limit:
            self._pool.clear()
        pool = self._pool
        return replace(
            observation, elements=tuple(pool.setdefault(e, e) for e in observation.elements)
        )
