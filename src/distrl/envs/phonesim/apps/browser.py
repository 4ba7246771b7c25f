"""Chrome: an address bar over web pages, a start page with shortcuts, and navigation.

Every page is the route ``Route.of("browser", "page", url=..., site=...)``; ``site`` is set on
shopping sites, which is what makes the phone show that site's cookie banner. Navigating pushes
the page (BACK returns to the previous one), records the URL in ``browser_history``, shows the
loading screen for as many steps as the dynamics draw, and on a shop's first visit in the episode
may raise its cookie banner and a newsletter popup. What a page shows comes from
:mod:`distrl.envs.phonesim.web`.

The address bar takes a web address ("ebay.com", "https://www.bbc.com/news") or, for anything
else, searches the web for the text, like Chrome's omnibox.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from distrl.envs.phonesim.apps.base import App
from distrl.envs.phonesim.state import Route
from distrl.envs.phonesim.web.page import CHROME_PACKAGE, WebContext, rid
from distrl.envs.phonesim.web.router import build_web_page
from distrl.envs.phonesim.web.shops import SHOPS
from distrl.envs.phonesim.web.sites import SITES
from distrl.envs.phonesim.web.urls import Url, looks_like_address, parse_url, search_url
from distrl.envs.phonesim.widgets import Page, Row, Widget, row

if TYPE_CHECKING:
    from distrl.envs.phonesim.phone import PhoneSim

URL_BAR = rid("url_bar")
START_SEARCH = rid("start_search")
_SHORTCUTS = (
    ("google.com", "Google", (66, 133, 244)),
    ("youtube.com", "YouTube", (255, 0, 0)),
    ("wikipedia.org", "Wikipedia", (51, 51, 51)),
    ("ebay.com", "eBay", (0, 100, 210)),
    ("amazon.com", "Amazon", (35, 47, 62)),
    ("walmart.com", "Walmart", (0, 113, 220)),
    ("bbc.com", "BBC", (187, 25, 25)),
    ("weather.com", "Weather", (0, 53, 148)),
)
_DISCOVER = ("Renewable energy", "Space exploration", "Chess")


def current_url(phone: PhoneSim) -> Url | None:
    """The address of the page Chrome shows (loaded or not); ``None`` off a web page."""
    route = phone.route
    if route.app != "browser" or route.screen != "page":
        return None
    return parse_url(route.param("url", ""))


def loaded_url(phone: PhoneSim) -> Url | None:
    """:func:`current_url` once the page has finished loading (what a screenshot would show)."""
    return current_url(phone) if phone.loading_steps == 0 else None


class Browser(App):
    name = "browser"
    label = "Chrome"
    package = CHROME_PACKAGE
    icon_color = (66, 133, 244)

    def navigate(self, phone: PhoneSim, url: str) -> None:
        """Open ``url`` in the current tab."""
        target = parse_url(url)
        text = str(target)
        site = target.domain if target.domain in SHOPS else None
        phone.push(Route.of("browser", "page", url=text, site=site))
        phone.state.browser_history.append(text)
        phone.start_loading()
        if site is not None and site not in phone.cookie_banners:
            phone.cookie_banners[site] = phone.dynamics.cookie_banner()
            if phone.popup is None:
                phone.maybe_popup(("newsletter",), SHOPS[site].label)

    def submit_address(self, phone: PhoneSim, text: str) -> None:
        """ENTER in the address bar: open an address, or search for anything else."""
        text = text.strip()
        if text:
            self.navigate(phone, text if looks_like_address(text) else search_url(text))

    def _address_bar(self, phone: PhoneSim, placeholder: str) -> Row:
        return row(
            Widget(
                "field",
                resource_id=URL_BAR,
                placeholder=placeholder,
                on_submit=lambda text: self.submit_address(phone, text),
            )
        )

    def build(self, phone: PhoneSim, route: Route) -> Page:
        if route.screen == "page":
            url = parse_url(route.param("url", ""))
            ctx = WebContext(phone, url, lambda target: self.navigate(phone, target))
            web = build_web_page(ctx)
            return Page(
                title=web.title,
                package=self.package,
                header=[self._address_bar(phone, str(url)), *web.header],
                body=web.body,
                footer=web.footer,
                show_title_bar=False,
            )
        return self._start_page(phone)

    def _start_page(self, phone: PhoneSim) -> Page:
        def go(url: str) -> None:
            self.navigate(phone, url)

        icons = [
            Widget(
                "icon",
                label,
                rid(f"shortcut_{label.lower()}"),
                on_tap=lambda domain=domain: go(domain),
                color=color,
            )
            for domain, label, color in _SHORTCUTS
        ]
        body = [
            row(Widget("text", "Google", rid("logo"), color=(66, 133, 244)), height=1.6),
            row(
                Widget(
                    "field",
                    resource_id=START_SEARCH,
                    placeholder="Search or type URL",
                    on_submit=lambda text: self.submit_address(phone, text),
                )
            ),
            Row(icons[:4], height=1.7),
            Row(icons[4:], height=1.7),
            row(Widget("text", "Discover", rid("discover_heading"))),
        ]
        news = SITES["bbc.com"]
        body += [
            row(
                Widget(
                    "item",
                    topic,
                    rid(f"discover_{i}"),
                    lambda t=topic: go(str(news.article_url(t))),
                    subtitle="BBC News",
                ),
                height=1.3,
            )
            for i, topic in enumerate(_DISCOVER)
        ]
        return Page(
            title="New tab",
            package=self.package,
            header=[self._address_bar(phone, "Search or type web address")],
            body=body,
            show_title_bar=False,
        )
