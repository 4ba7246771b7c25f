"""Draw what an agent did on the screen it did it on: action overlays and element wireframes.

A reviewer reads a trajectory by looking at where the agent tapped, not at coordinates, so every
step image carries its action drawn on top: a tap as a ring around a filled dot, a swipe as an
arrow, typed text as a label box and the point-less actions (back, home, enter, the two status
actions, an invalid action) as a badge. Points are AitW ``[y, x]`` normalised to [0, 1].

Training runs keep no screenshots (see ``Trajectory.without_screenshots``), so for those the
screen is redrawn from the observation's element list as a wireframe of fixed size, with a strip
that says so, and the same overlay goes on top.

The overlay colour is a saturated magenta that the PhoneSim themes never use, so a mark is
never mistaken for part of the UI; the dot at a tap point is drawn solid in exactly
:data:`OVERLAY_COLOUR`, which tests rely on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageDraw

from distrl.core.action import Action, ActionType
from distrl.core.observation import UIElement
from distrl.text_raster import fit_text
from distrl.text_raster import font as _font
from distrl.text_raster import text_mask as _text_mask

Colour = tuple[int, int, int]

#: The colour of every tap, swipe and text mark (the pixel at a tap point is exactly this).
OVERLAY_COLOUR: Colour = (255, 0, 255)
#: Drawn around marks so they stay visible on light and dark themes alike.
OUTLINE_COLOUR: Colour = (255, 255, 255)
#: Size of a wireframe screen (width, height): a 1:2 phone, as PhoneSim's default screen.
WIREFRAME_SIZE = (360, 720)
#: Height of the strip above a wireframe that says it is not a screenshot.
WIREFRAME_LABEL_HEIGHT = 24
WIREFRAME_LABEL = "wireframe (no screenshot stored)"

_BADGES: dict[ActionType, tuple[str, Colour]] = {
    ActionType.PRESS_BACK: ("BACK", (55, 71, 79)),
    ActionType.PRESS_HOME: ("HOME", (55, 71, 79)),
    ActionType.PRESS_ENTER: ("ENTER", (55, 71, 79)),
    ActionType.STATUS_TASK_COMPLETE: ("TASK COMPLETE", (27, 128, 62)),
    ActionType.STATUS_TASK_IMPOSSIBLE: ("TASK IMPOSSIBLE", (191, 96, 0)),
    ActionType.INVALID: ("INVALID", (183, 28, 28)),
}
_WIREFRAME_FILL: dict[str, Colour] = {
    "status": (236, 239, 241),
    "nav": (236, 239, 241),
    "field": (255, 255, 255),
    "keyboard": (224, 228, 232),
}
_WIREFRAME_BACKGROUND: Colour = (250, 250, 250)
_CLICKABLE_EDGE: Colour = (25, 118, 210)
_STATIC_EDGE: Colour = (176, 180, 186)
_WIREFRAME_TEXT: Colour = (33, 33, 33)


def _paste_text(
    image: Image.Image, xy: tuple[float, float], text: str, size: int, colour: Colour
) -> None:
    image.paste(colour, (round(xy[0]), round(xy[1])), _text_mask(text, size))


def _fit(text: str, size: int, width: float) -> str:
    """``text`` on one line (whitespace collapsed), cut with an ellipsis to fit ``width``."""
    return fit_text(" ".join(text.split()), size, width)


def _to_pixel(point_yx: tuple[float, float], size: tuple[int, int]) -> tuple[float, float]:
    """A normalised ``[y, x]`` point as ``(x, y)`` pixels of an image of ``size`` (w, h)."""
    width, height = size
    y, x = point_yx
    return (min(max(x, 0.0), 1.0) * (width - 1), min(max(y, 0.0), 1.0) * (height - 1))


def _scale(size: tuple[int, int]) -> float:
    """Mark sizes follow the image so a 1080-wide screenshot gets marks as legible as a 360 one."""
    return max(1.0, min(size) / 360.0)


# -- the marks ------------------------------------------------------------------------------------


def _draw_tap(draw: ImageDraw.ImageDraw, centre: tuple[float, float], scale: float) -> None:
    x, y = centre
    ring, dot = 22 * scale, 6 * scale
    outer = ring + 2 * scale
    draw.ellipse(
        (x - outer, y - outer, x + outer, y + outer), outline=OUTLINE_COLOUR, width=round(8 * scale)
    )
    draw.ellipse(
        (x - ring, y - ring, x + ring, y + ring), outline=OVERLAY_COLOUR, width=round(4 * scale)
    )
    draw.ellipse((x - dot - 1, y - dot - 1, x + dot + 1, y + dot + 1), fill=OUTLINE_COLOUR)
    draw.ellipse((x - dot, y - dot, x + dot, y + dot), fill=OVERLAY_COLOUR)


def _draw_swipe(
    draw: ImageDraw.ImageDraw,
    start: tuple[float, float],
    end: tuple[float, float],
    scale: float,
) -> None:
    (x0, y0), (x1, y1) = start, end
    angle = math.atan2(y1 - y0, x1 - x0)
    head = 22 * scale
    # Stop the shaft at the head's base so the line does not poke through the arrow tip.
    shaft_end = (x1 - head * 0.8 * math.cos(angle), y1 - head * 0.8 * math.sin(angle))
    wing = math.radians(28)
    tip = [
        (x1, y1),
        (x1 - head * math.cos(angle - wing), y1 - head * math.sin(angle - wing)),
        (x1 - head * math.cos(angle + wing), y1 - head * math.sin(angle + wing)),
    ]
    draw.line([start, shaft_end], fill=OUTLINE_COLOUR, width=round(10 * scale))
    draw.polygon(tip, fill=OUTLINE_COLOUR, outline=OUTLINE_COLOUR, width=round(3 * scale))
    draw.line([start, shaft_end], fill=OVERLAY_COLOUR, width=round(5 * scale))
    draw.polygon(tip, fill=OVERLAY_COLOUR)
    dot = 8 * scale
    draw.ellipse(
        (x0 - dot, y0 - dot, x0 + dot, y0 + dot),
        fill=OVERLAY_COLOUR,
        outline=OUTLINE_COLOUR,
        width=round(2 * scale),
    )


def _draw_label(
    draw: ImageDraw.ImageDraw,
    text: str,
    size: tuple[int, int],
    top: float,
    fill: Colour,
    scale: float,
    outline: Colour | None = None,
) -> None:
    """A rounded box with white ``text``, centred horizontally at ``top``."""
    font_size = round(22 * scale)
    pad = 9 * scale
    width, _ = size
    line = _fit(text, font_size, width - 4 * pad)
    text_width = _font(font_size).getlength(line)
    box_width = text_width + 2 * pad
    left = (width - box_width) / 2
    box = (left, top, left + box_width, top + font_size + 2 * pad)
    draw.rounded_rectangle(
        box,
        radius=round(8 * scale),
        fill=fill,
        outline=outline or OUTLINE_COLOUR,
        width=round(2 * scale),
    )
    draw.text((left + pad, top + pad), line, font=_font(font_size), fill=(255, 255, 255))


def draw_action(image: Image.Image, action: Action, top_inset: int = 0) -> Image.Image:
    """``image`` with ``action`` drawn on it (a new RGB image; ``image`` is left as it was).

    ``top_inset`` is how many pixel rows at the top are not part of the screen (the wireframe's
    label strip); points are placed on the rows below it.
    """
    canvas = image.convert("RGB")
    width, height = canvas.size
    screen = (width, height - top_inset)
    scale = _scale(screen)
    draw = ImageDraw.Draw(canvas)

    def pixel(point_yx: tuple[float, float]) -> tuple[float, float]:
        x, y = _to_pixel(point_yx, screen)
        return (x, y + top_inset)

    kind = action.action_type
    if kind is ActionType.DUAL_POINT and action.is_tap:
        _draw_tap(draw, pixel(action.touch_yx), scale)
    elif kind is ActionType.DUAL_POINT:
        _draw_swipe(draw, pixel(action.touch_yx), pixel(action.lift_yx), scale)
    elif kind is ActionType.TYPE:
        # Low on the screen, where a keyboard's text field would be, clear of the nav bar.
        _draw_label(
            draw,
            f'type "{action.text}"',
            screen,
            top_inset + screen[1] * 0.62,
            OVERLAY_COLOUR,
            scale,
        )
    else:
        label, colour = _BADGES[kind]
        if kind is ActionType.INVALID and action.invalid_reason:
            label = f"INVALID: {action.invalid_reason}"
        _draw_label(draw, label, screen, top_inset + screen[1] * 0.08, colour, scale)
    return canvas


# -- screens ---------------------------------------------------------------------------------------


def screenshot_image(screenshot: np.ndarray) -> Image.Image:
    """A stored ``HxWx3`` uint8 screenshot as a PIL image."""
    return Image.fromarray(np.ascontiguousarray(screenshot, dtype=np.uint8), mode="RGB")


def wireframe(elements: Sequence[UIElement], size: tuple[int, int] = WIREFRAME_SIZE) -> Image.Image:
    """The screen redrawn from its element list, under a strip labelled
    :data:`WIREFRAME_LABEL`; the screen area is ``size`` and starts
    :data:`WIREFRAME_LABEL_HEIGHT` rows down.

    Clickable elements are outlined in blue, static ones in grey, the focused one thicker; a
    checked toggle gets a filled corner. Elements are drawn in list order (the accessibility
    tree's order), so later, overlapping ones (dialogs, keyboards) end up on top.
    """
    width, height = size
    image = Image.new("RGB", (width, height + WIREFRAME_LABEL_HEIGHT), _WIREFRAME_BACKGROUND)
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, width, WIREFRAME_LABEL_HEIGHT - 1), fill=(69, 90, 100))
    label_size = 13
    label_left = (width - _font(label_size).getlength(WIREFRAME_LABEL)) / 2
    _paste_text(image, (label_left, 5), WIREFRAME_LABEL, label_size, (255, 255, 255))
    top = WIREFRAME_LABEL_HEIGHT
    for element in elements:
        x0, y0, x1, y1 = (min(max(float(v), 0.0), 1.0) for v in element.bbox)
        box = (x0 * (width - 1), top + y0 * (height - 1), x1 * (width - 1), top + y1 * (height - 1))
        if box[2] - box[0] < 1 or box[3] - box[1] < 1:
            continue
        edge = _CLICKABLE_EDGE if element.clickable else _STATIC_EDGE
        fill = _WIREFRAME_FILL.get(element.kind, _WIREFRAME_BACKGROUND)
        draw.rectangle(box, fill=fill, outline=edge, width=3 if element.focused else 1)
        if element.checked:
            draw.rectangle((box[2] - 10, box[1], box[2], box[1] + 10), fill=_CLICKABLE_EDGE)
        if element.text:
            font_size = 14 if box[3] - box[1] >= 20 else 10
            line = _fit(element.text, font_size, round(box[2] - box[0] - 6))
            text_y = (box[1] + box[3]) / 2 - font_size / 2 - 1
            _paste_text(image, (box[0] + 3, text_y), line, font_size, _WIREFRAME_TEXT)
    return image


def step_image(
    screenshot: np.ndarray | None,
    elements: Sequence[UIElement],
    action: Action | None,
) -> Image.Image:
    """The image a step card shows: the screenshot (or, when ``screenshot`` is None, the
    wireframe) with ``action`` drawn on it; ``action`` is None for the final screen."""
    if screenshot is not None:
        image, inset = screenshot_image(screenshot), 0
    else:
        image, inset = wireframe(elements), WIREFRAME_LABEL_HEIGHT
    if action is None:
        return image
    return draw_action(image, action, top_inset=inset)
