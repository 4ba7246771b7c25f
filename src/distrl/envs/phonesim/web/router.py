"""Which site serves an address: the search engine, a shop, another known site, or nobody."""

from __future__ import annotations

from distrl.envs.phonesim.web.page import WebContext, WebPage, message_page, rid
from distrl.envs.phonesim.web.search_engine import build_search_page
from distrl.envs.phonesim.web.shopping import build_shop_page
from distrl.envs.phonesim.web.shops import SHOPS
from distrl.envs.phonesim.web.sites import SITES, build_site_page
from distrl.envs.phonesim.web.urls import SEARCH_ENGINE, search_url
from distrl.envs.phonesim.widgets import Widget

KNOWN_DOMAINS: tuple[str, ...] = (SEARCH_ENGINE, *SHOPS, *SITES)


def is_known(domain: str) -> bool:
    return domain == SEARCH_ENGINE or domain in SHOPS or domain in SITES


def unreachable_page(ctx: WebContext) -> WebPage:
    """Chrome's error page for a domain that does not resolve."""
    domain = ctx.url.domain or "this address"
    return message_page(
        "This site can't be reached",
        [
            f"Check if there is a typo in {domain}.",
            "DNS_PROBE_FINISHED_NXDOMAIN",
        ],
        [
            Widget(
                "link",
                f"Search Google for {domain}",
                rid("search_instead"),
                ctx.link(search_url(domain)),
            ),
            Widget("button", "Reload", rid("reload"), ctx.link(ctx.url)),
        ],
    )


def build_web_page(ctx: WebContext) -> WebPage:
    """The page at ``ctx.url``."""
    domain = ctx.url.domain
    if domain == SEARCH_ENGINE:
        return build_search_page(ctx)
    if domain in SHOPS:
        return build_shop_page(ctx, SHOPS[domain])
    if domain in SITES:
        return build_site_page(ctx, SITES[domain])
    return unreachable_page(ctx)
