"""What a web page builder receives and returns.

A site is a function ``(WebContext) -> WebPage``: it reads the phone's state and the page's address
and describes the page below Chrome's address bar as rows of widgets. Links call ``ctx.go(url)``,
which is the browser's navigation (history, loading screen, banners); sites never touch the
navigation stack themselves. All web content lives in Chrome's package, like a WebView's nodes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from distrl.envs.phonesim.web.urls import Url
from distrl.envs.phonesim.widgets import Handler, Row, Widget, row

if TYPE_CHECKING:
    from distrl.envs.phonesim.phone import PhoneSim

CHROME_PACKAGE = "com.android.chrome"


def rid(name: str) -> str:
    """Resource id of a web element: ``com.android.chrome:id/result_0``."""
    return f"{CHROME_PACKAGE}:id/{name}"


@dataclass(frozen=True)
class WebContext:
    """The page being built: the phone, the page's address and how to follow a link."""

    phone: PhoneSim
    url: Url
    go: Callable[[str], None]

    def link(self, url: str | Url) -> Handler:
        """A tap handler that opens ``url``."""
        target = str(url)
        return lambda: self.go(target)


@dataclass
class WebPage:
    """A page's rows under the address bar (``header`` stays put, ``body`` scrolls)."""

    title: str
    header: list[Row] = field(default_factory=list)
    body: list[Row] = field(default_factory=list)
    footer: list[Row] = field(default_factory=list)


def message_page(title: str, lines: list[str], actions: list[Widget] | None = None) -> WebPage:
    """A plain page of text (error pages, sign-in walls)."""
    body = [row(Widget("title", title, rid("page_heading")), height=1.4)]
    body += [
        row(Widget("text", line, rid(f"page_line_{i}")), height=1.3) for i, line in enumerate(lines)
    ]
    body += [row(action) for action in actions or []]
    return WebPage(title, body=body)
