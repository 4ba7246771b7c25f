"""The search engine (google.com): a home page with a search box and result pages.

Results for a query are fixed by the query (cached): a site the query names comes first, then, if
the query names a catalog product, that product's pages on several shops, then sites whose topic
words the query contains, filled up to :data:`RESULTS_PER_PAGE` with encyclopedic results. An
information query ("weather in chile") also gets an answer card above the results. Sponsored
results take the slots ``phone.dynamics.is_ad_slot`` picks and lead to a shop's deals page.
Organic results are ``search_result_0``...; ads are ``search_ad_0``...
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from distrl.envs.phonesim.dynamics import stable_fraction
from distrl.envs.phonesim.web.answers import answer_for
from distrl.envs.phonesim.web.catalog import price_at, product_in_query
from distrl.envs.phonesim.web.page import WebContext, WebPage, rid
from distrl.envs.phonesim.web.shops import SHOPS
from distrl.envs.phonesim.web.sites import SITES
from distrl.envs.phonesim.web.urls import Url, display_url, normalize_query, search_url
from distrl.envs.phonesim.widgets import Row, Widget, row

RESULTS_PER_PAGE = 6
PRODUCT_SHOPS = 4
MAX_ADS = 2
SEARCH_BOX = rid("search_box")
ANSWER_CARD = rid("answer_card")
_FILLERS = ("wikipedia.org", "youtube.com", "reddit.com", "nytimes.com", "wikihow.com")
_TRENDING = (
    "weather today",
    "news",
    "nba scores",
    "best laptops 2024",
    "pizza near me",
    "how to make pancakes",
)
_LOGO = (66, 133, 244)


@dataclass(frozen=True)
class Result:
    title: str
    url: Url
    snippet: str


def _named_domains(words: set[str], query: str) -> list[str]:
    out = []
    for domain in (*SHOPS, *SITES):
        name = domain.split(".")[0]
        if name in words or domain in query.lower():
            out.append(domain)
    return out


@lru_cache(maxsize=8192)
def search_results(query: str) -> tuple[Result, ...]:
    """The organic results for ``query``, best first."""
    normalized = normalize_query(query)
    if not normalized:
        return ()
    words = set(normalized.split())
    topic = query.strip()[:1].upper() + query.strip()[1:]
    results: list[Result] = []
    for domain in _named_domains(words, query):
        if domain in SHOPS:
            shop = SHOPS[domain]
            results.append(
                Result(
                    f"{shop.label} - {shop.tagline}",
                    shop.home_url(),
                    f"Shop at {domain}. {shop.shipping}.",
                )
            )
        else:
            site = SITES[domain]
            results.append(
                Result(
                    f"{site.label} - {site.tagline}", Url(domain), f"Official site of {site.label}."
                )
            )
    product = product_in_query(normalized)
    if product is not None:
        shops = sorted(SHOPS.values(), key=lambda s: stable_fraction("serp", product.pid, s.domain))
        for shop in shops[:PRODUCT_SHOPS]:
            results.append(
                Result(
                    f"{product.title} - {shop.label}",
                    shop.product_url(product),
                    f"${price_at(product, shop.domain):,.2f} · {shop.shipping}",
                )
            )
    topical = sorted(
        (site for site in SITES.values() if site.keywords & words),
        key=lambda s: (-len(s.keywords & words), stable_fraction("topic", normalized, s.domain)),
    )
    fillers = [SITES[d] for d in _FILLERS]
    for site in [*topical, *fillers]:
        results.append(
            Result(
                site.result_title.format(topic=topic),
                site.article_url(topic),
                site.snippet.format(topic=topic),
            )
        )
    unique: list[Result] = []
    for result in results:
        if all(not result.url.same_page(other.url) for other in unique):
            unique.append(result)
    return tuple(unique[:RESULTS_PER_PAGE])


def result_index(query: str, target: Url) -> int | None:
    """Position of the organic result for ``query`` that links to ``target``, if listed."""
    for index, result in enumerate(search_results(query)):
        if result.url.same_page(target):
            return index
    return None


def _listings(ctx: WebContext, query: str) -> list[tuple[str, Result, str]]:
    key = "google.com/search?" + normalize_query(query)
    listings = []
    ads = position = 0
    for index, result in enumerate(search_results(query)):
        while ads < MAX_ADS and ctx.phone.dynamics.is_ad_slot(key, position):
            shops = list(SHOPS.values())
            first = int(stable_fraction("serp-ad", key) * len(shops))
            shop = shops[(first + ads) % len(shops)]  # two ads, two different shops
            ad = Result(
                f"{shop.label} - Official Site",
                shop.deals_url("sponsored"),
                f"Shop today's deals at {shop.domain}. {shop.shipping}.",
            )
            listings.append((rid(f"search_ad_{ads}"), ad, "Sponsored"))
            ads += 1
            position += 1
        listings.append((rid(f"search_result_{index}"), result, ""))
        position += 1
    return listings


def _search_box(ctx: WebContext, placeholder: str) -> Row:
    def submit(query: str) -> None:
        if query.strip():
            ctx.go(search_url(query))

    return row(Widget("field", resource_id=SEARCH_BOX, placeholder=placeholder, on_submit=submit))


def build_search_page(ctx: WebContext) -> WebPage:
    """google.com: the home page, a results page or (any other path) the home page again."""
    query = ctx.url.query if ctx.url.path == "search" else ""
    if not query:
        body = [
            row(Widget("text", "Google", rid("logo"), color=_LOGO), height=1.6),
            _search_box(ctx, "Search Google or type a URL"),
            row(Widget("text", "Trending searches", rid("trending_heading"))),
        ]
        body += [
            row(Widget("item", text, rid(f"trending_{i}"), ctx.link(search_url(text))))
            for i, text in enumerate(_TRENDING)
        ]
        return WebPage("Google", body=body)
    body: list[Row] = []
    answer = answer_for(query)
    if answer is not None:
        body += [
            row(
                Widget("item", answer.headline, ANSWER_CARD, subtitle=answer.value, color=_LOGO),
                height=1.6,
            ),
        ]
        body += [
            row(Widget("text", line, rid(f"answer_details_{i}")), height=1.2)
            for i, line in enumerate(answer.details)
        ]
    for resource_id, result, badge in _listings(ctx, query):
        body += [
            row(
                Widget(
                    "item",
                    result.title,
                    resource_id,
                    ctx.link(result.url),
                    subtitle=display_url(result.url),
                    badge=badge,
                ),
                height=1.4,
            ),
            row(Widget("text", result.snippet, resource_id + "_snippet"), height=0.9),
        ]
    header = [
        row(
            Widget("text", "Google", rid("logo"), color=_LOGO, weight=1.0),
            Widget(
                "field",
                resource_id=SEARCH_BOX,
                placeholder=query,
                on_submit=lambda q: ctx.go(search_url(q)) if q.strip() else None,
                weight=3.0,
            ),
        )
    ]
    return WebPage(f"{query} - Google Search", header=header, body=body)
