"""The pages of a shopping site: home, search results, product, cart, deals and checkout.

Result lists interleave sponsored slots: slot ``i`` of a results page holds an ad when
``phone.dynamics.is_ad_slot(page_key, i)`` says so (a hash of the episode and the page, so the
list does not change while the agent looks at it). An ad is marked "Sponsored" and advertises a
product of another category (or the site's deals page), so tapping it never opens the product
the query asked for. Organic results are ``result_0``, ``result_1``...; ads are
``sponsored_result_0``...
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from distrl.envs.phonesim.dynamics import stable_fraction
from distrl.envs.phonesim.web.catalog import (
    BY_ID,
    CATEGORIES,
    Category,
    Product,
    featured,
    price_at,
    rating_of,
    search_products,
    unrelated_product,
)
from distrl.envs.phonesim.web.page import WebContext, WebPage, message_page, rid
from distrl.envs.phonesim.web.shops import Color, Shop
from distrl.envs.phonesim.web.urls import Url, normalize_query
from distrl.envs.phonesim.widgets import Handler, Row, Widget, row

MAX_ADS = 2
SPONSORED = "Sponsored"
_FEATURED = 6
_CHIPS = 6


@dataclass(frozen=True)
class Listing:
    """One entry of a product list: which product, where a tap goes, how it is marked."""

    resource_id: str
    product: Product
    url: Url
    badge: str = ""


def results_page_key(shop: Shop, query: str) -> str:
    return f"{shop.domain}/{shop.search_path}?{normalize_query(query)}"


def result_listings(ctx: WebContext, shop: Shop, query: str) -> list[Listing]:
    """The organic results for ``query`` with this episode's ad slots interleaved."""
    organic = search_products(shop.domain, query)
    key = results_page_key(shop, query)
    listings: list[Listing] = []
    ads = position = 0
    for index, product in enumerate(organic):
        while ads < MAX_ADS and ctx.phone.dynamics.is_ad_slot(key, position):
            advertised = unrelated_product(organic[0], key, ads)
            to_deals = stable_fraction("ad-landing", key, ads) < 0.3
            url = (
                shop.deals_url("sponsored")
                if to_deals
                else shop.product_url(advertised, "sponsored")
            )
            listings.append(Listing(rid(f"sponsored_result_{ads}"), advertised, url, SPONSORED))
            ads += 1
            position += 1
        listings.append(Listing(rid(f"result_{index}"), product, shop.product_url(product)))
        position += 1
    return listings


def first_result(shop: Shop, query: str) -> Product | None:
    """The first non-sponsored result for ``query`` on ``shop``."""
    organic = search_products(shop.domain, query)
    return organic[0] if organic else None


def cart_of(ctx: WebContext, shop: Shop) -> list[str]:
    return ctx.phone.state.carts.get(shop.domain, [])


def add_to_cart(ctx: WebContext, shop: Shop, product: Product) -> None:
    ctx.phone.state.carts.setdefault(shop.domain, []).append(product.pid)


def _money(value: float) -> str:
    return f"${value:,.2f}"


def _entry_item(
    entry: Listing,
    title: str,
    tap: Handler,
    subtitle: str,
    weight: float = 1.0,
    color: Color | None = None,
) -> Widget:
    """The tappable title widget of a list entry; every row style shows one, with its badge."""
    return Widget(
        "item",
        title,
        entry.resource_id,
        tap,
        badge=entry.badge,
        subtitle=subtitle,
        weight=weight,
        color=color,
    )


def _grid_rows(ctx: WebContext, shop: Shop, listings: list[Listing]) -> list[Row]:
    """Two product tiles a row; a sponsored tile spans its own row between the product tiles."""
    rows: list[Row] = []
    cells: list[Widget] = []
    for entry in listings:
        price = _money(price_at(entry.product, shop.domain))
        cell = _entry_item(entry, entry.product.short_title, ctx.link(entry.url), price)
        if entry.badge:
            rows.append(row(cell, height=1.3))
            continue
        cells.append(cell)
        if len(cells) == 2:
            rows.append(Row(cells, height=1.5))
            cells = []
    if cells:
        rows.append(Row([*cells, Widget("spacer")], height=1.5))
    return rows


def _card_rows(ctx: WebContext, shop: Shop, entry: Listing, item: Widget, price: str) -> list[Row]:
    """A ``card`` entry: its item row, then a row with the price and a quick "+ Add" button."""

    def quick_add() -> None:
        add_to_cart(ctx, shop, entry.product)

    price_tag = Widget(
        "text", price, entry.resource_id + "_price", color=shop.price_color, weight=2.0
    )
    add = Widget("button", "+ Add", entry.resource_id + "_add", quick_add, color=shop.button)
    return [row(item, height=1.4), row(price_tag, add, height=0.9)]


def _entry_rows(ctx: WebContext, shop: Shop, entry: Listing) -> list[Row]:
    """The row(s) of one entry in the ``thumb``, ``card`` or ``list`` style."""
    product, tap = entry.product, ctx.link(entry.url)
    price = _money(price_at(product, shop.domain))
    # Ads carry short headlines, which leaves room for their "Sponsored" badge.
    title = product.short_title if entry.badge else product.title
    if shop.row_style == "thumb":
        stars, count = rating_of(product)
        subtitle = f"{price} · {stars} stars ({count:,})"
        image = Widget("image", "", entry.resource_id + "_image", tap, color=product.color)
        return [row(image, _entry_item(entry, title, tap, subtitle, weight=2.8), height=1.8)]
    color = product.color if ctx.phone.variation.results_show_images else None
    if shop.row_style == "card":
        item = _entry_item(entry, title, tap, shop.shipping, color=color)
        return _card_rows(ctx, shop, entry, item, price)
    subtitle = f"{price} · {shop.shipping}"
    return [row(_entry_item(entry, title, tap, subtitle, color=color), height=1.5)]


def _listing_rows(ctx: WebContext, shop: Shop, listings: list[Listing]) -> list[Row]:
    """Rows of a product list in the shop's own style."""
    if shop.row_style == "grid":
        return _grid_rows(ctx, shop, listings)
    return [r for entry in listings for r in _entry_rows(ctx, shop, entry)]


def _site_bar(ctx: WebContext, shop: Shop) -> Row:
    count = len(cart_of(ctx, shop))
    return row(
        Widget(
            "button",
            shop.label,
            rid("site_logo"),
            ctx.link(shop.home_url()),
            color=shop.color,
            weight=2.6,
        ),
        Widget(
            "button",
            f"{shop.cart_label} ({count})",
            rid("cart_button"),
            ctx.link(shop.cart_url()),
            color=shop.color,
            weight=1.4,
        ),
    )


def _search_row(ctx: WebContext, shop: Shop, placeholder: str) -> Row:
    def submit(query: str) -> None:
        if query.strip():
            ctx.go(str(shop.search_url(query)))

    return row(
        Widget("field", resource_id=rid("site_search"), placeholder=placeholder, on_submit=submit)
    )


@lru_cache(maxsize=64)
def _chip_categories(domain: str) -> tuple[Category, ...]:
    """The categories a shop's home page offers as shortcuts (stable per shop)."""
    ranked = sorted(CATEGORIES, key=lambda c: stable_fraction("chips", domain, c.key))
    return tuple(ranked[:_CHIPS])


def _home(ctx: WebContext, shop: Shop) -> list[Row]:
    body = [row(Widget("text", shop.tagline, rid("tagline"), color=shop.price_color))]
    chips = [
        Widget(
            "chip",
            c.key.capitalize(),
            rid(f"category_{i}"),
            ctx.link(shop.search_url(c.key)),
            color=shop.color,
        )
        for i, c in enumerate(_chip_categories(shop.domain))
    ]
    body += [Row(chips[i : i + 3]) for i in range(0, len(chips), 3)]
    body.append(row(Widget("text", "Today's picks for you", rid("featured_heading"))))
    listings = [
        Listing(rid(f"featured_{i}"), p, shop.product_url(p))
        for i, p in enumerate(featured(shop.domain, _FEATURED))
    ]
    return body + _listing_rows(ctx, shop, listings)


def _results(ctx: WebContext, shop: Shop, query: str) -> list[Row]:
    listings = result_listings(ctx, shop, query)
    if not listings:
        suggestions = [
            Listing(rid(f"featured_{i}"), p, shop.product_url(p))
            for i, p in enumerate(featured(shop.domain, 4, "suggest"))
        ]
        return [
            row(Widget("text", f'No results for "{query}"', rid("results_heading")), height=1.2),
            row(
                Widget(
                    "text", "Check the spelling or try more general words.", rid("no_results_hint")
                )
            ),
            row(Widget("text", "You may also like", rid("suggestions_heading"))),
            *_listing_rows(ctx, shop, suggestions),
        ]
    count = len(search_products(shop.domain, query))
    heading = f'{count} results for "{query}"'
    return [
        row(Widget("text", heading, rid("results_heading"))),
        *_listing_rows(ctx, shop, listings),
    ]


def _checkout_button(ctx: WebContext, shop: Shop, label: str, name: str, color: Color) -> Widget:
    """A button to the sign-in wall at checkout ("Buy now" on products, the cart's checkout)."""
    return Widget("button", label, rid(name), ctx.link(shop.checkout_url()), color=color)


def _text_row(text: str, name: str, height: float = 1.0, color: Color | None = None) -> Row:
    """A row of plain text with the web id ``name``: most of a product page is made of these."""
    return row(Widget("text", text, rid(name), color=color), height=height)


def _product(ctx: WebContext, shop: Shop, product: Product) -> tuple[list[Row], list[Row]]:
    stars, count = rating_of(product)
    in_cart = cart_of(ctx, shop).count(product.pid)
    buy = row(
        Widget(
            "button",
            shop.add_label,
            rid("add_to_cart"),
            lambda: add_to_cart(ctx, shop, product),
            color=shop.button,
            weight=1.2,
        ),
        _checkout_button(ctx, shop, "Buy now", "buy_now", shop.color),
    )
    body = [
        row(Widget("image", "", rid("product_image"), color=product.color), height=3.0),
        _text_row(product.title, "product_title", 1.3),
        _text_row(f"{stars} out of 5 stars · {count:,} ratings", "product_rating", 0.8),
        _text_row(_money(price_at(product, shop.domain)), "product_price", color=shop.price_color),
    ]
    if not shop.sticky_buy:
        body.append(buy)
    if in_cart:
        added = f"Added to cart ({in_cart} in your cart)"
        body.append(_text_row(added, "in_cart", 0.8, color=(30, 130, 50)))
    description = (
        f"About this item: the {product.short_title} from "
        f"{product.brand_label}. {product.title}, new, in the original "
        "packaging, with the manufacturer's warranty."
    )
    body += [
        _text_row(f"{shop.shipping}. Sold and shipped by {shop.domain}.", "shipping", 1.2),
        _text_row(description, "description", 2.2),
        _text_row("Customers also viewed", "related_heading"),
    ]
    related = [p for p in search_products(shop.domain, product.category) if p != product][:3]
    body += _listing_rows(
        ctx,
        shop,
        [Listing(rid(f"related_{i}"), p, shop.product_url(p)) for i, p in enumerate(related)],
    )
    return body, [buy] if shop.sticky_buy else []


def _cart(ctx: WebContext, shop: Shop) -> list[Row]:
    items = [BY_ID[pid] for pid in cart_of(ctx, shop) if pid in BY_ID]
    body = [row(Widget("title", "Shopping cart", rid("cart_heading")), height=1.2)]
    if not items:
        return body + [
            row(Widget("text", "Your cart is empty", rid("cart_empty"))),
            row(
                Widget(
                    "link", "Continue shopping", rid("continue_shopping"), ctx.link(shop.home_url())
                )
            ),
        ]
    for index, product in enumerate(items):

        def remove(index: int = index) -> None:
            del ctx.phone.state.carts[shop.domain][index]

        body.append(
            row(
                Widget(
                    "item",
                    product.title,
                    rid(f"cart_item_{index}"),
                    ctx.link(shop.product_url(product)),
                    subtitle=f"{_money(price_at(product, shop.domain))} · Qty 1",
                    color=product.color,
                    weight=3.0,
                ),
                Widget("button", "Remove", rid(f"remove_{index}"), remove, color=(117, 117, 117)),
                height=1.5,
            )
        )
    total = sum(price_at(p, shop.domain) for p in items)
    noun = "item" if len(items) == 1 else "items"
    body += [
        row(Widget("text", f"Subtotal ({len(items)} {noun}): {_money(total)}", rid("cart_total"))),
        row(_checkout_button(ctx, shop, "Proceed to checkout", "checkout", shop.button)),
    ]
    return body


def build_shop_page(ctx: WebContext, shop: Shop) -> WebPage:
    """The page of ``shop`` at ``ctx.url``."""
    path = ctx.url.path
    footer: list[Row] = []
    placeholder = shop.search_placeholder
    if not path:
        title, body = f"{shop.label}: {shop.tagline}", _home(ctx, shop)
    elif path == shop.search_path:
        title, body = f"{ctx.url.query} | {shop.label}", _results(ctx, shop, ctx.url.query)
        placeholder = ctx.url.query or placeholder
    elif shop.product_of(ctx.url) in BY_ID:
        product = BY_ID[shop.product_of(ctx.url) or ""]
        title = f"{product.title} | {shop.label}"
        body, footer = _product(ctx, shop, product)
    elif path == "cart":
        title, body = f"Cart | {shop.label}", _cart(ctx, shop)
    elif path == "deals":
        listings = [
            Listing(rid(f"deal_{i}"), p, shop.product_url(p))
            for i, p in enumerate(featured(shop.domain, 8, "deals"))
        ]
        title = f"Today's Deals | {shop.label}"
        body = [
            row(Widget("title", "Today's Deals", rid("deals_heading")), height=1.2),
            row(Widget("text", "Limited-time offers, while supplies last.", rid("deals_hint"))),
            *_listing_rows(ctx, shop, listings),
        ]
    elif path == "checkout":
        page = message_page(
            "Sign in to check out",
            [
                f"Sign in to your {shop.label} account or create one to complete your order.",
            ],
            [
                Widget(
                    "button",
                    "Return to cart",
                    rid("return_to_cart"),
                    ctx.link(shop.cart_url()),
                    color=shop.button,
                )
            ],
        )
        title, body = page.title, page.body
    else:
        page = message_page(
            "Page not found",
            [
                f"We couldn't find that page on {shop.domain}.",
            ],
            [
                Widget(
                    "link",
                    f"Go to the {shop.label} home page",
                    rid("go_home"),
                    ctx.link(shop.home_url()),
                )
            ],
        )
        title, body = page.title, page.body
    header = [_site_bar(ctx, shop)]
    search = _search_row(ctx, shop, placeholder)
    if ctx.phone.variation.search_bar_on_top:
        header.append(search)
    else:
        footer = [*footer, search]
    return WebPage(title, header, body, footer)
