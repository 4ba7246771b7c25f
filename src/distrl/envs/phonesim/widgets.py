"""What an app screen is made of, before layout: widgets in rows, with tap handlers.

Apps describe a screen as a :class:`Page` (fixed header rows, scrolling body rows, fixed footer
rows); :mod:`distrl.envs.phonesim.layout` turns it into placed elements with bounding boxes. Keeping
apps free of pixel arithmetic is what lets layout and theme vary per episode without touching apps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

Handler = Callable[[], None]
SubmitHandler = Callable[[str], None]


@dataclass
class Widget:
    """One element of a screen.

    ``kind`` chooses how it is drawn: ``text``, ``title``, ``button``, ``icon`` (app icon),
    ``field`` (text input), ``toggle``, ``item`` (list row), ``image``, ``link``, ``chip``,
    ``banner``. ``weight`` is its share of the row's width. A ``field`` takes its text from the
    phone's field buffers (keyed by ``resource_id``) and calls ``on_submit`` on ENTER.
    """

    kind: str
    text: str = ""
    resource_id: str = ""
    on_tap: Handler | None = None
    on_submit: SubmitHandler | None = None
    placeholder: str = ""
    checked: bool | None = None
    subtitle: str = ""
    weight: float = 1.0
    color: tuple[int, int, int] | None = None
    #: Extra words a VLM or a test might want (e.g. "Sponsored"); drawn small under the text.
    badge: str = ""

    @property
    def clickable(self) -> bool:
        return self.on_tap is not None or self.kind == "field"


@dataclass
class Row:
    """A horizontal run of widgets of one height (in units of the standard row height)."""

    widgets: list[Widget]
    height: float = 1.0


@dataclass
class Page:
    """A screen of an app: a title bar, fixed rows, a scrolling body and fixed footer rows."""

    title: str
    package: str
    header: list[Row] = field(default_factory=list)
    body: list[Row] = field(default_factory=list)
    footer: list[Row] = field(default_factory=list)
    #: Show a back arrow in the title bar (a clickable element doing PRESS_BACK).
    back_arrow: bool = False
    #: Colour of the title bar; ``None`` takes the theme's accent.
    bar_color: tuple[int, int, int] | None = None
    #: A page that shows no title bar at all (the launcher, web pages under the address bar).
    show_title_bar: bool = True


def row(*widgets: Widget, height: float = 1.0) -> Row:
    """Shorthand used by every app: ``row(Widget(...), Widget(...))``."""
    return Row(list(widgets), height)
