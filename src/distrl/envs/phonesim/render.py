"""Draw a laid-out :class:`Screen` as a phone screenshot with PIL.

Text dominates the cost of drawing a screen, and the same strings recur on almost every frame, so
each (text, size) is rasterised once into a cached mask and pasted in colour afterwards; that
keeps a full frame near a millisecond at the default resolution.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw

from distrl.envs.phonesim import keyboard
from distrl.envs.phonesim.layout import KEYBOARD_TOP, NAV_BAR_TOP, Placed
from distrl.envs.phonesim.phone import Screen
from distrl.envs.phonesim.theme import Color, Theme, readable_on
from distrl.text_raster import fit_text as _fit
from distrl.text_raster import font as _font
from distrl.text_raster import text_mask as _text_mask

Box = tuple[int, int, int, int]


@lru_cache(maxsize=16384)
def _wrap(text: str, size: int, width: int) -> tuple[str, ...]:
    """Greedy word wrap of ``text`` into lines of at most ``width`` pixels (cached per frame
    text: measuring every word on every frame dominated the cost of text-heavy pages)."""
    font = _font(size)
    lines: list[str] = []
    current = ""
    for word in text.split():
        candidate = f"{current} {word}".strip()
        if font.getlength(candidate) <= width or not current:
            current = candidate
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return tuple(lines)


@lru_cache(maxsize=4096)
def _rounded_mask(width: int, height: int, radius: int, line: int) -> Image.Image:
    """A rounded-rectangle mask (filled when ``line`` is 0, else its outline). Drawing rounded
    corners is costly and the same few shapes repeat on every frame, so masks are cached."""
    mask = Image.new("L", (width, height), 0)
    shape = (0, 0, width - 1, height - 1)
    if line:
        ImageDraw.Draw(mask).rounded_rectangle(shape, radius=radius, outline=255, width=line)
    else:
        ImageDraw.Draw(mask).rounded_rectangle(shape, radius=radius, fill=255)
    return mask


class Renderer:
    """Renders screens at a fixed resolution. One per device; cheap to create."""

    def __init__(self, width: int, height: int):
        self.width = width
        self.height = height
        self.base_size = max(8, round(height * 0.022))
        # One canvas per renderer, repainted each frame: allocating a fresh megabyte image per
        # frame costs page faults that rival the drawing itself.
        self._canvas = Image.new("RGB", (width, height))
        self._scrim = Image.new("L", (width, height), round(0.45 * 255))
        #: The keyboard panel, drawn once per (dark theme, font size) and pasted afterwards.
        self._keyboards: dict[tuple[bool, int], Image.Image] = {}

    def _box(self, bbox: tuple[float, float, float, float]) -> Box:
        x0, y0, x1, y1 = bbox
        return (
            round(x0 * self.width),
            round(y0 * self.height),
            round(x1 * self.width),
            round(y1 * self.height),
        )

    def _rounded(
        self,
        image: Image.Image,
        box: Box,
        radius: int,
        fill: Color | None = None,
        outline: Color | None = None,
        width: int = 1,
    ) -> None:
        """``ImageDraw.rounded_rectangle`` through cached masks (same pixels, far fewer calls)."""
        x0, y0, x1, y1 = (int(v) for v in box)
        w, h = x1 - x0 + 1, y1 - y0 + 1
        if w <= 0 or h <= 0:
            return
        radius = max(0, min(int(radius), w // 2, h // 2))
        if fill is not None:
            image.paste(fill, (x0, y0), _rounded_mask(w, h, radius, 0))
        if outline is not None:
            image.paste(outline, (x0, y0), _rounded_mask(w, h, radius, max(1, int(width))))

    def _text(
        self,
        image: Image.Image,
        text: str,
        xy: tuple[int, int],
        size: int,
        color: Color,
        max_width: int,
    ) -> None:
        if not text or max_width <= 0:
            return
        mask = _text_mask(_fit(text, size, max_width), size)
        image.paste(color, (int(xy[0]), int(xy[1])), mask)

    def _centered_text(
        self, image: Image.Image, text: str, box: Box, size: int, color: Color
    ) -> None:
        fitted = _fit(text, size, box[2] - box[0] - 4)
        mask = _text_mask(fitted, size)
        x = box[0] + (box[2] - box[0] - mask.width) // 2
        y = box[1] + (box[3] - box[1] - size) // 2 - size // 8
        image.paste(color, (x, y), mask)

    def render(self, screen: Screen, theme: Theme) -> np.ndarray:
        """The screenshot of ``screen`` as an HxWx3 uint8 array."""
        image = self._canvas
        image.paste(theme.background, (0, 0, self.width, self.height))
        draw = ImageDraw.Draw(image)
        draw.rectangle(self._box((0.0, NAV_BAR_TOP, 1.0, 1.0)), fill=(0, 0, 0))
        size = max(8, round(self.base_size * theme.font_scale))
        title_bar = screen.page_layout.title_bar
        if title_bar is not None:
            bar_color = screen.page.bar_color or theme.accent
            draw.rectangle(self._box((0.0, title_bar[0], 1.0, title_bar[1])), fill=bar_color)
        overlays_drawn = False
        for item in screen.placed:
            if item.layer in ("popup", "nav") and not overlays_drawn:
                # Spinner and keyboard lie over the page but under dialogs and the nav bar.
                overlays_drawn = True
                if screen.loading:
                    self._draw_loading(image, draw, screen, theme, size)
                if screen.keyboard_visible:
                    self._draw_keyboard(image, draw, theme, size)
            if item.layer == "popup" and item.widget.kind == "dialog":
                # Dim the screen behind a dialog: black pasted at 45% opacity, in place.
                image.paste((0, 0, 0), (0, 0, self.width, self.height), self._scrim)
            self._draw_widget(image, draw, item, screen, theme, size)
        return np.asarray(image)

    def _draw_loading(self, image, draw, screen: Screen, theme: Theme, size: int) -> None:
        top = screen.page_layout.viewport_top
        box = self._box((0.0, top, 1.0, NAV_BAR_TOP))
        draw.rectangle(box, fill=theme.background)
        cx, cy = self.width // 2, (box[1] + box[3]) // 2
        radius = self.width // 12
        draw.arc(
            (cx - radius, cy - radius, cx + radius, cy + radius),
            30,
            300,
            fill=theme.accent,
            width=max(2, radius // 4),
        )
        self._centered_text(
            image,
            "Loading...",
            (0, cy + radius + 4, self.width, cy + radius + 8 + size),
            size,
            theme.muted_text,
        )

    def _draw_keyboard(self, image, draw, theme: Theme, size: int) -> None:
        box = self._box((0.0, KEYBOARD_TOP, 1.0, NAV_BAR_TOP))
        panel = self._keyboards.get((theme.dark, size))
        if panel is None:
            scratch = Image.new("RGB", image.size)
            self._paint_keyboard(scratch, ImageDraw.Draw(scratch), theme, size)
            # PIL rectangles include their last row, so the panel reaches one row past ``box``.
            panel = scratch.crop((box[0], box[1], box[2], box[3] + 1))
            self._keyboards[(theme.dark, size)] = panel
        image.paste(panel, box[:2])

    def _paint_keyboard(self, image, draw, theme: Theme, size: int) -> None:
        panel = (60, 62, 66) if theme.dark else (232, 234, 237)
        key_fill = (95, 99, 104) if theme.dark else (255, 255, 255)
        key_text = (240, 240, 240) if theme.dark else (32, 33, 36)
        draw.rectangle(self._box((0.0, KEYBOARD_TOP, 1.0, NAV_BAR_TOP)), fill=panel)
        for key in keyboard.KEYS:
            box = self._box(key.bbox)
            self._rounded(image, box, radius=3, fill=key_fill)
            self._centered_text(image, key.label, box, size, key_text)

    def _draw_widget(
        self, image, draw, item: Placed, screen: Screen, theme: Theme, size: int
    ) -> None:
        widget = item.widget
        box = self._box(item.bbox)
        x0, y0, x1, y1 = box
        pad = max(3, size // 2)
        kind = widget.kind
        if kind == "status":
            draw.rectangle(box, fill=(20, 20, 20) if theme.dark else (230, 230, 230))
            fg = (230, 230, 230) if theme.dark else (40, 40, 40)
            small = max(7, size - 3)
            self._text(image, widget.text, (x0 + pad, y0 + 2), small, fg, x1 - x0)
            self._text(image, "LTE  100%", (x1 - 5 * small, y0 + 2), small, fg, 5 * small)
        elif kind == "nav":
            cx, cy, r = (x0 + x1) // 2, (y0 + y1) // 2, max(4, (y1 - y0) // 4)
            if widget.text == "Back":
                draw.polygon(
                    [(cx + r, cy - r), (cx + r, cy + r), (cx - r, cy)],
                    outline=(220, 220, 220),
                    width=2,
                )
            else:
                draw.ellipse((cx - r, cy - r, cx + r, cy + r), outline=(220, 220, 220), width=2)
        elif kind == "title":
            bar_color = screen.page.bar_color or theme.accent
            fg = readable_on(bar_color) if item.layer == "fixed" else theme.text
            self._text(
                image, widget.text, (x0, (y0 + y1) // 2 - size * 6 // 10), size + 3, fg, x1 - x0
            )
        elif kind == "icon" and widget.resource_id.endswith("navigate_up"):
            fg = readable_on(screen.page.bar_color or theme.accent)
            cx, cy, r = (x0 + x1) // 2, (y0 + y1) // 2, max(4, (y1 - y0) // 5)
            draw.line([(cx + r, cy - r), (cx - r, cy), (cx + r, cy + r)], fill=fg, width=3)
        elif kind == "icon":
            side = min(x1 - x0, (y1 - y0) * 6 // 10)
            ix0 = (x0 + x1 - side) // 2
            color = widget.color or theme.accent
            self._rounded(image, (ix0, y0, ix0 + side, y0 + side), radius=side // 4, fill=color)
            self._centered_text(
                image,
                widget.text[:1].upper(),
                (ix0, y0, ix0 + side, y0 + side),
                size + 6,
                readable_on(color),
            )
            self._centered_text(
                image,
                widget.text,
                (x0 - pad, y0 + side, x1 + pad, y1),
                max(7, size - 3),
                theme.text,
            )
        elif kind == "field":
            focused = widget.resource_id == screen.focused_field
            outline = theme.accent if focused else theme.divider
            self._rounded(
                image,
                box,
                radius=(y1 - y0) // 2,
                fill=theme.surface,
                outline=outline,
                width=2 if focused else 1,
            )
            value = screen.fields.get(widget.resource_id, "")
            color = theme.text if value else theme.muted_text
            shown = value or widget.placeholder
            self._text(
                image,
                shown,
                (x0 + 2 * pad, (y0 + y1) // 2 - size * 6 // 10),
                size,
                color,
                x1 - x0 - 3 * pad,
            )
        elif kind == "clear":
            cx, cy, r = (x0 + x1) // 2, (y0 + y1) // 2, max(3, (y1 - y0) // 6)
            draw.line((cx - r, cy - r, cx + r, cy + r), fill=theme.muted_text, width=2)
            draw.line((cx - r, cy + r, cx + r, cy - r), fill=theme.muted_text, width=2)
        elif kind in ("button", "chip"):
            color = widget.color or theme.accent
            if kind == "chip":
                self._rounded(image, box, radius=(y1 - y0) // 2, outline=color, width=1)
                self._centered_text(image, widget.text, box, max(7, size - 2), color)
            else:
                self._rounded(image, box, radius=(y1 - y0) // 3, fill=color)
                self._centered_text(image, widget.text, box, size, readable_on(color))
        elif kind == "toggle":
            self._text(
                image,
                widget.text,
                (x0 + pad, (y0 + y1) // 2 - size * 6 // 10),
                size,
                theme.text,
                x1 - x0 - 6 * size,
            )
            h = (y1 - y0) // 2
            sx1 = x1 - pad
            sx0 = sx1 - 2 * h
            sy0 = (y0 + y1 - h) // 2
            on = bool(widget.checked)
            self._rounded(
                image,
                (sx0, sy0, sx1, sy0 + h),
                radius=h // 2,
                fill=theme.accent if on else theme.divider,
            )
            knob = sx1 - h if on else sx0
            draw.ellipse((knob + 2, sy0 + 2, knob + h - 2, sy0 + h - 2), fill=(255, 255, 255))
            draw.line((x0, y1, x1, y1), fill=theme.divider)
        elif kind == "item":
            draw.rectangle(box, fill=theme.surface)
            text_x = x0 + pad
            if widget.color is not None:
                side = y1 - y0 - 2 * pad
                self._rounded(
                    image,
                    (x0 + pad, y0 + pad, x0 + pad + side, y0 + pad + side),
                    radius=max(2, side // 5),
                    fill=widget.color,
                )
                text_x = x0 + 2 * pad + side
            width = x1 - text_x - pad
            if widget.subtitle:
                self._text(image, widget.text, (text_x, y0 + pad // 2 + 1), size, theme.text, width)
                self._text(
                    image,
                    widget.subtitle,
                    (text_x, (y0 + y1) // 2 + 1),
                    max(7, size - 2),
                    theme.muted_text,
                    width,
                )
            else:
                self._text(
                    image,
                    widget.text,
                    (text_x, (y0 + y1) // 2 - size * 6 // 10),
                    size,
                    theme.text,
                    width,
                )
            if widget.badge:
                small = max(7, size - 4)
                badge_w = int(_font(small).getlength(widget.badge)) + 6
                draw.rectangle(
                    (x1 - badge_w - 2, y0 + 2, x1 - 2, y0 + small + 5), fill=(251, 188, 4)
                )
                self._text(
                    image, widget.badge, (x1 - badge_w + 1, y0 + 3), small, (20, 20, 20), badge_w
                )
            draw.line((x0, y1, x1, y1), fill=theme.divider)
        elif kind == "image":
            color = widget.color or theme.divider
            self._rounded(image, box, radius=6, fill=color)
            cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
            r = min(x1 - x0, y1 - y0) // 4
            draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=readable_on(color))
        elif kind == "link":
            self._text(
                image,
                widget.text,
                (x0, (y0 + y1) // 2 - size * 6 // 10),
                size,
                theme.accent,
                x1 - x0,
            )
        elif kind == "banner":
            draw.rectangle(
                (0, y0, self.width, self._box((0, 0, 0, NAV_BAR_TOP))[3]),
                fill=theme.surface,
                outline=theme.divider,
            )
            self._wrapped(image, widget.text, box, max(7, size - 2), theme.text, pad)
        elif kind == "dialog":
            self._rounded(image, box, radius=12, fill=theme.surface)
            title_box = (x0, y0 + pad, x1, y0 + pad + 3 * size)
            self._wrapped(image, widget.text, title_box, size + 1, theme.text, 2 * pad)
            message_box = (x0, y0 + pad + 3 * size, x1, y1)
            self._wrapped(
                image, widget.subtitle, message_box, max(7, size - 2), theme.muted_text, 2 * pad
            )
        else:  # plain text
            self._wrapped(image, widget.text, box, size, widget.color or theme.text, pad // 2)

    def _wrapped(
        self, image: Image.Image, text: str, box: Box, size: int, color: Color, pad: int
    ) -> None:
        """Greedy word wrap inside ``box``; lines past the bottom are dropped."""
        width = box[2] - box[0] - 2 * pad
        lines = _wrap(text, size, width)
        line_height = int(size * 1.25)
        capacity = max(1, (box[3] - box[1]) // line_height)
        y = box[1] + max(0, (box[3] - box[1] - min(capacity, len(lines)) * line_height) // 2)
        for line in lines[:capacity]:
            self._text(image, line, (box[0] + pad, y), size, color, width)
            y += line_height
