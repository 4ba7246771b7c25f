"""Turn a :class:`Page` into placed widgets with normalised bounding boxes.

The screen is split like an Android phone: status bar, (title bar), page content, navigation bar.
When the keyboard is up it either covers the lower part of the content (``adjustPan``, the "keyboard
covers content" dynamic) or the content shrinks above it (``adjustResize``).
"""

from __future__ import annotations

from dataclasses import dataclass

from distrl.envs.phonesim.widgets import Page, Row, Widget

STATUS_BAR_BOTTOM = 0.04
NAV_BAR_TOP = 0.93
TITLE_BAR_HEIGHT = 0.075
ROW_UNIT = 0.068
KEYBOARD_TOP = 0.62
SIDE_MARGIN = 0.04
GAP = 0.02
#: A body widget counts as visible when at least this share of its height is in the viewport.
VISIBLE_SHARE = 0.5


@dataclass(frozen=True)
class Placed:
    """A widget at its place on screen. ``layer`` orders hit tests: later layers are on top."""

    widget: Widget
    bbox: tuple[float, float, float, float]
    layer: str

    @property
    def center_yx(self) -> tuple[float, float]:
        x0, y0, x1, y1 = self.bbox
        return ((y0 + y1) / 2.0, (x0 + x1) / 2.0)


@dataclass
class PageLayout:
    """The placed widgets of one page and the geometry of its scrolling body."""

    placed: list[Placed]
    viewport_top: float
    viewport_bottom: float
    body_height: float
    title_bar: tuple[float, float] | None

    @property
    def max_scroll(self) -> float:
        return max(0.0, self.body_height - (self.viewport_bottom - self.viewport_top))


def _place_row(row: Row, top: float, height: float, layer: str) -> list[Placed]:
    total_weight = sum(w.weight for w in row.widgets) or 1.0
    usable = 1.0 - 2 * SIDE_MARGIN - GAP * (len(row.widgets) - 1)
    x = SIDE_MARGIN
    placed = []
    for widget in row.widgets:
        width = usable * widget.weight / total_weight
        bbox = (x, top + 0.006, x + width, top + height - 0.006)
        if widget.kind != "spacer":  # spacers only take width
            placed.append(Placed(widget, bbox, layer))
        x += width + GAP
    return placed


def _rows_height(rows: list[Row]) -> float:
    return sum(r.height for r in rows) * ROW_UNIT


def layout_page(
    page: Page,
    *,
    scroll: float,
    keyboard_visible: bool,
    keyboard_covers_content: bool,
) -> PageLayout:
    """Place ``page``'s widgets; body rows are shifted by ``scroll`` and clipped to the viewport."""
    top = STATUS_BAR_BOTTOM
    placed: list[Placed] = []
    title_bar = None
    if page.show_title_bar:
        title_bar = (top, top + TITLE_BAR_HEIGHT)
        top += TITLE_BAR_HEIGHT
    for header_row in page.header:
        height = header_row.height * ROW_UNIT
        placed.extend(_place_row(header_row, top, height, "fixed"))
        top += height

    bottom = NAV_BAR_TOP
    if keyboard_visible and not keyboard_covers_content:
        bottom = KEYBOARD_TOP
    footer_top = bottom - _rows_height(page.footer)
    y = footer_top
    for footer_row in page.footer:
        height = footer_row.height * ROW_UNIT
        placed.extend(_place_row(footer_row, y, height, "fixed"))
        y += height

    viewport_top, viewport_bottom = top, footer_top
    body_height = _rows_height(page.body)
    max_scroll = max(0.0, body_height - (viewport_bottom - viewport_top))
    offset = min(max(scroll, 0.0), max_scroll)
    y = viewport_top - offset
    for body_row in page.body:
        height = body_row.height * ROW_UNIT
        row_top, row_bottom = y, y + height
        visible_top, visible_bottom = max(row_top, viewport_top), min(row_bottom, viewport_bottom)
        if visible_bottom - visible_top >= VISIBLE_SHARE * height:
            for item in _place_row(body_row, row_top, height, "body"):
                x0, y0, x1, y1 = item.bbox
                clipped = (x0, max(y0, viewport_top), x1, min(y1, viewport_bottom))
                placed.append(Placed(item.widget, clipped, "body"))
        y += height
    return PageLayout(placed, viewport_top, viewport_bottom, body_height, title_bar)
