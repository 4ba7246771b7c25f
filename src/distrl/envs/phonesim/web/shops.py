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


SHOPS: dict[str, Shop] = {
    shop.domain: shop
    for shop in (
        Shop(
            domain="ebay.com",
            label="ebay",
            color=(0, 100, 210),
            button=(51, 102, 204),
            price_color=(17, 17, 17),
            row_style="list",
            search_path="sch",
            item_path="itm",
            search_placeholder="Search for anything",
            tagline="Deals made easy. Shop millions of listings.",
            shipping="Free shipping",
        ),
        Shop(
            domain="amazon.com",
            label="amazon",
            color=(35, 47, 62),
            button=(255, 216, 20),
            price_color=(177, 39, 4),
            row_style="thumb",
            search_path="s",
            item_path="dp",
            search_placeholder="Search Amazon",
            tagline="Fast, free delivery with Prime.",
            shipping="FREE delivery Tomorrow",
            add_label="Add to Cart",
            sticky_buy=True,
        ),
        Shop(
            domain="walmart.com",
            label="Walmart",
            color=(0, 113, 220),
            button=(0, 113, 220),
            price_color=(42, 135, 3),
            row_style="card",
            search_path="search",
            item_path="ip",
            search_placeholder="Search everything at Walmart",
            tagline="Save money. Live better.",
            shipping="Free pickup today",
            sticky_buy=True,
        ),
        Shop(
            domain="bestbuy.com",
            label="BEST BUY",
            color=(0, 30, 115),
            button=(255, 224, 0),
            price_color=(29, 37, 44),
            row_style="card",
            search_path="site/searchpage",
            item_path="site",
            search_placeholder="Search Best Buy",
            tagline="Expert service. Unbeatable price.",
            shipping="Get it by Tuesday",
            add_label="Add to Cart",
        ),
        Shop(
            domain="target.com",
            label="Target",
            color=(204, 0, 0),
            button=(204, 0, 0),
            price_color=(51, 51, 51),
            row_style="grid",
            search_path="s",
            item_path="p",
            search_placeholder="What can we help you find?",
            tagline="Expect more. Pay less.",
            shipping="Order pickup or same day delivery",
        ),
        Shop(
            domain="costco.com",
            label="COSTCO",
            color=(0, 93, 170),
            button=(227, 25, 55),
            price_color=(0, 93, 170),
            row_style="list",
            search_path="catalogsearch",
            item_path="product",
            search_placeholder="Search Costco",
            tagline="Members-only savings every day.",
            shipping="Delivery included in price",
            add_label="Add to Cart",
        ),
        Shop(
            domain="newegg.com",
            label="newegg",
            color=(247, 143, 30),
            button=(20, 64, 120),
            price_color=(51, 51, 51),
            row_style="thumb",
            search_path="p/pl",
            item_path="p",
            search_placeholder="Search Newegg",
            tagline="Computer parts, laptops and gaming.",
            shipping="Free shipping on most items",
            add_label="ADD TO CART",
            sticky_buy=True,
        ),
    )
}
