"""The shopping sites: who they are, how they look and how their addresses are laid out.

Every shop sells the whole catalog (at its own prices) but looks different: brand colours, how a
result row is laid out (``list``, ``thumb``, ``grid`` or ``card``), whether "Add to cart" is a
sticky bar, and its own URL scheme (``ebay.com/sch?q=...``, ``amazon.com/dp/<id>``), so an agent
cannot solve one site and assume the others look the same.
"""

from __future__ import annotations

from dataclasses import dataclass

from distrl.envs.phonesim.web.catalog import Product
from distrl.envs.phonesim.web.urls import Url

Color = tuple[int, int, int]

ROW_STYLES = ("list", "thumb", "grid", "card")


@dataclass(frozen=True)
class Shop:
    domain: str
    label: str
    #: Brand bar colour (the logo button).
    color: Color
    #: "Add to cart" and other call-to-action buttons.
    button: Color
    #: Price text.
    price_color: Color
    row_style: str
    search_path: str
    item_path: str
    search_placeholder: str
    tagline: str
    shipping: str
    add_label: str = "Add to cart"
    cart_label: str = "Cart"
    #: "Add to cart" sits in a bar fixed at the bottom of product pages instead of in the page.
    sticky_buy: bool = False

    def home_url(self) -> Url:
        return Url(self.domain)

    def search_url(self, query: str) -> Url:
        return Url(self.domain, self.search_path, query.strip())

    def product_url(self, product: Product, ref: str = "") -> Url:
        return Url(self.domain, f"{self.item_path}/{product.pid}", ref=ref)

    def cart_url(self) -> Url:
        return Url(self.domain, "cart")

    def checkout_url(self) -> Url:
        return Url(self.domain, "checkout")

    def deals_url(self, ref: str = "") -> Url:
        return Url(self.domain, "deals", ref=ref)

    def is_results(self, url: Url) -> bool:
        return url.domain == self.domain and url.path == self.search_path

    def product_of(self, url: Url) -> str | None:
        """The product id a product page shows (``None`` for other pages)."""
        prefix = self.item_path + "/"
        if url.domain != self.domain or not url.path.startswith(prefix):
            return None
        return url.path[len(prefix) :]


# The shops' own look and wording, one table per concern, each keyed by domain. The order of
# ``_LAYOUTS`` is the order of ``SHOPS`` (task sampling draws from it, so it must stay fixed).

#: Logo bar, call-to-action buttons and price text.
_COLORS: dict[str, tuple[Color, Color, Color]] = {
    "ebay.com": ((0, 100, 210), (51, 102, 204), (17, 17, 17)),
    "amazon.com": ((35, 47, 62), (255, 216, 20), (177, 39, 4)),
    "walmart.com": ((0, 113, 220), (0, 113, 220), (42, 135, 3)),
    "bestbuy.com": ((0, 30, 115), (255, 224, 0), (29, 37, 44)),
    "target.com": ((204, 0, 0), (204, 0, 0), (51, 51, 51)),
    "costco.com": ((0, 93, 170), (227, 25, 55), (0, 93, 170)),
    "newegg.com": ((247, 143, 30), (20, 64, 120), (51, 51, 51)),
}

#: Result row style, search results path, product page path, search box placeholder,
#: "Add to cart" label, and whether that button is a sticky bar.
_LAYOUTS: dict[str, tuple[str, str, str, str, str, bool]] = {
    "ebay.com": ("list", "sch", "itm", "Search for anything", "Add to cart", False),
    "amazon.com": ("thumb", "s", "dp", "Search Amazon", "Add to Cart", True),
    "walmart.com": ("card", "search", "ip", "Search everything at Walmart", "Add to cart", True),
    "bestbuy.com": ("card", "site/searchpage", "site", "Search Best Buy", "Add to Cart", False),
    "target.com": ("grid", "s", "p", "What can we help you find?", "Add to cart", False),
    "costco.com": ("list", "catalogsearch", "product", "Search Costco", "Add to Cart", False),
    "newegg.com": ("thumb", "p/pl", "p", "Search Newegg", "ADD TO CART", True),
}

#: The logo's label, the home page's tagline and the shipping line under results and products.
_WORDING: dict[str, tuple[str, str, str]] = {
    "ebay.com": ("ebay", "Deals made easy. Shop millions of listings.", "Free shipping"),
    "amazon.com": ("amazon", "Fast, free delivery with Prime.", "FREE delivery Tomorrow"),
    "walmart.com": ("Walmart", "Save money. Live better.", "Free pickup today"),
    "bestbuy.com": ("BEST BUY", "Expert service. Unbeatable price.", "Get it by Tuesday"),
    "target.com": ("Target", "Expect more. Pay less.", "Order pickup or same day delivery"),
    "costco.com": ("COSTCO", "Members-only savings every day.", "Delivery included in price"),
    "newegg.com": ("newegg", "Computer parts, laptops and gaming.", "Free shipping on most items"),
}

#: Which ``Shop`` fields each table's columns fill, in column order.
_COLUMNS: tuple[tuple[dict[str, tuple], tuple[str, ...]], ...] = (
    (_COLORS, ("color", "button", "price_color")),
    (
        _LAYOUTS,
        ("row_style", "search_path", "item_path", "search_placeholder", "add_label", "sticky_buy"),
    ),
    (_WORDING, ("label", "tagline", "shipping")),
)


def _shop(domain: str) -> Shop:
    """Assemble one shop from its row in each table above."""
    fields = {
        name: value
        for table, names in _COLUMNS
        for name, value in zip(names, table[domain], strict=True)
    }
    return Shop(domain=domain, **fields)


SHOPS: dict[str, Shop] = {domain: _shop(domain) for domain in _LAYOUTS}
