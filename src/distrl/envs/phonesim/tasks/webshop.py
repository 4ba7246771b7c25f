"""Templates of the ``webshop`` suite: Android-in-the-Wild's WebShopping tasks on PhoneSim's web.

The suite's typical instruction is AitW's "Go to ebay.com, search for 'logitech g933', and select
the first entry"; around it are the steps before (open the site, search it) and after (add to cart,
view and edit the cart, check a price, reach a shop from the search engine). Products are split by
name: a test instruction always asks for a product no train instruction mentions.

Success reads the phone's state only: the loaded page's address (``browser.loaded_url``), the carts
and the browser history. "The first entry" is the first result that is not sponsored, so tapping
an ad never succeeds.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from distrl.core.action import Action
from distrl.envs.phonesim.apps.browser import loaded_url
from distrl.envs.phonesim.expert import Expert
from distrl.envs.phonesim.phone import PhoneSim
from distrl.envs.phonesim.tasks.base import Params, TaskTemplate, split_values
from distrl.envs.phonesim.tasks.web_steps import (
    ADD_TO_CART,
    WebTemplate,
    is_results_page,
    on_site,
    open_cart,
    open_first_result,
    open_search_result,
    open_site,
    pick,
    search_site,
    searched_web_for,
    showing_product,
)
from distrl.envs.phonesim.web.catalog import BY_NAME, PRODUCTS
from distrl.envs.phonesim.web.page import rid
from distrl.envs.phonesim.web.search_engine import result_index
from distrl.envs.phonesim.web.shopping import first_result
from distrl.envs.phonesim.web.shops import SHOPS, Shop

SHOP_DOMAINS: tuple[str, ...] = tuple(SHOPS)


@lru_cache(maxsize=4)
def product_names(split: str) -> tuple[str, ...]:
    """The catalog products a split's instructions may name (train and test are disjoint)."""
    return tuple(split_values([p.name for p in PRODUCTS], split, "webshop-product"))


class ShopTemplate(WebTemplate):
    """A webshop task about one product on one shop (or, without ``names_product``, the shop)."""

    suite = "webshop"
    #: Whether the task names a product; site-only tasks draw no product.
    names_product = True

    def sample_params(self, rng: np.random.Generator, split: str) -> Params:
        site = pick(rng, SHOP_DOMAINS)
        if not self.names_product:
            return {"site": site}
        return {"site": site, "product": pick(rng, product_names(split))}

    @staticmethod
    def shop(params: Params) -> Shop:
        return SHOPS[params["site"]]

    @staticmethod
    def pid(params: Params) -> str:
        return BY_NAME[params["product"]].pid

    def first_pid(self, params: Params) -> str:
        product = first_result(self.shop(params), params["product"])
        assert product is not None, f"no results for {params['product']!r}"
        return product.pid

    def open_first(self, expert: Expert, params: Params) -> Action | None:
        """The step shared by the tasks that end on (or pass through) the first result."""
        return open_first_result(expert, self.shop(params), params["product"])


class OpenShop(ShopTemplate):
    """Open a shopping site ("Go to ebay.com")."""

    name = "open_shop"
    phrasings = (
        "Go to {site}",
        "Open {site}",
        "Visit {site} in the browser",
        "Open the {site} website",
        "Navigate to {site}",
    )
    names_product = False

    def is_success(self, phone: PhoneSim, params: Params) -> bool:
        return on_site(phone, params["site"])

    def next_step(self, expert: Expert, params: Params) -> Action | None:
        return open_site(expert, params["site"])


class SearchShop(ShopTemplate):
    """Search a product on a site ("Go to amazon.com, search for 'logitech g933'")."""

    name = "search_shop"
    phrasings = (
        "Go to {site}, search for '{product}'",
        'Go to {site} and search for "{product}"',
        "On {site}, search for {product}",
        "Open {site} and look up '{product}'",
        "Search {site} for '{product}'",
        "Find '{product}' on {site}",
    )

    def is_success(self, phone: PhoneSim, params: Params) -> bool:
        return is_results_page(loaded_url(phone), self.shop(params), params["product"])

    def next_step(self, expert: Expert, params: Params) -> Action | None:
        return search_site(expert, self.shop(params), params["product"])


class ProductPageTemplate(ShopTemplate):
    """A task that ends on a product page, which the expert reaches through the first result."""

    def target_pid(self, params: Params) -> str:
        """The product whose page counts (default: the first non-sponsored result)."""
        return self.first_pid(params)

    def is_success(self, phone: PhoneSim, params: Params) -> bool:
        return showing_product(phone, self.shop(params), self.target_pid(params))

    def next_step(self, expert: Expert, params: Params) -> Action | None:
        return self.open_first(expert, params)


class SelectFirstEntry(ProductPageTemplate):
    """AitW's typical task: search a product on a site and select the first entry."""

    name = "select_first_entry"
    phrasings = (
        "Go to {site}, search for '{product}', and select the first entry",
        'Go to {site}, search for "{product}", and select the first entry',
        "Open {site}, search for '{product}' and click the first result",
        "On {site}, look up '{product}' and open the first item",
        "Search {site} for '{product}' and tap the first result",
        "Find '{product}' on {site} and open the top result",
    )


class AddFirstToCart(ShopTemplate):
    """Search a product and add the first entry to the site's cart."""

    name = "add_first_to_cart"
    phrasings = (
        "Go to {site}, search for '{product}', and add the first entry to the cart",
        "Open {site}, search for '{product}' and add the first result to your cart",
        "On {site}, find '{product}' and add it to the cart",
        "Add '{product}' to my cart on {site}",
        "Search {site} for '{product}' and put the first item in the cart",
        "Put the top result for '{product}' on {site} into the shopping cart",
    )

    def is_success(self, phone: PhoneSim, params: Params) -> bool:
        return self.first_pid(params) in phone.state.carts.get(params["site"], [])

    def next_step(self, expert: Expert, params: Params) -> Action | None:
        return self.open_first(expert, params) or expert.tap(ADD_TO_CART)


def _fill_cart(phone: PhoneSim, site: str, rng: np.random.Generator, count: int) -> None:
    cart = phone.state.carts.setdefault(site, [])
    for _ in range(count):
        cart.append(PRODUCTS[int(rng.integers(len(PRODUCTS)))].pid)


class ViewCart(ShopTemplate):
    """Open a site's shopping cart."""

    name = "view_cart"
    phrasings = (
        "Go to {site} and open the shopping cart",
        "Show me my cart on {site}",
        "Open my {site} cart",
        "Check what's in my cart on {site}",
        "View the shopping cart on {site}",
    )
    names_product = False

    def setup(self, phone: PhoneSim, params: Params, rng: np.random.Generator) -> None:
        _fill_cart(phone, params["site"], rng, int(rng.integers(0, 4)))

    def is_success(self, phone: PhoneSim, params: Params) -> bool:
        url = loaded_url(phone)
        return url is not None and url.same_page(self.shop(params).cart_url())

    def next_step(self, expert: Expert, params: Params) -> Action | None:
        return open_cart(expert, self.shop(params))


class RemoveFromCart(ShopTemplate):
    """Remove a product that is in a site's cart."""

    name = "remove_from_cart"
    phrasings = (
        "Remove '{product}' from my cart on {site}",
        "Go to {site} and delete '{product}' from the shopping cart",
        "On {site}, take '{product}' out of my cart",
        "Open my cart on {site} and remove {product}",
        "Delete {product} from the {site} cart",
    )

    def setup(self, phone: PhoneSim, params: Params, rng: np.random.Generator) -> None:
        _fill_cart(phone, params["site"], rng, int(rng.integers(0, 3)))
        cart = phone.state.carts[params["site"]]
        cart.insert(int(rng.integers(len(cart) + 1)), self.pid(params))

    def is_success(self, phone: PhoneSim, params: Params) -> bool:
        return self.pid(params) not in phone.state.carts.get(params["site"], [])

    def next_step(self, expert: Expert, params: Params) -> Action | None:
        cart = expert.phone.state.carts.get(params["site"], [])
        pid = self.pid(params)
        return open_cart(expert, self.shop(params)) or (
            expert.tap(rid(f"remove_{cart.index(pid)}")) if pid in cart else None
        )


class CheckPrice(ProductPageTemplate):
    """Find a product's price on a site (its product page there)."""

    name = "check_price"
    phrasings = (
        "How much does '{product}' cost on {site}?",
        "Check the price of '{product}' on {site}",
        "What is the price of {product} on {site}?",
        "Find the price of '{product}' at {site}",
        "Look up how much {product} costs on {site}",
    )

    def target_pid(self, params: Params) -> str:
        """The named product's own page (the expert finds it as the first result)."""
        return self.pid(params)


class SearchEngineToShop(ShopTemplate):
    """Search the product with the search engine, then open one shop's listing from the results."""

    name = "search_engine_to_shop"
    phrasings = (
        "Search Google for '{product}' and open the {site} result",
        "Google '{product}' and click the result from {site}",
        "Look up '{product}' on Google, then open the listing on {site}",
        "Search for '{product}' on Google and go to the {site} page",
        "Use Google to find '{product}' and open it on {site}",
    )

    def sample_params(self, rng: np.random.Generator, split: str) -> Params:
        name = pick(rng, product_names(split))
        product = BY_NAME[name]
        listed = [
            site
            for site in SHOP_DOMAINS
            if result_index(name, SHOPS[site].product_url(product)) is not None
        ]
        return {"site": pick(rng, listed), "product": name}

    def is_success(self, phone: PhoneSim, params: Params) -> bool:
        return showing_product(phone, self.shop(params), self.pid(params)) and searched_web_for(
            phone, params["product"]
        )

    def next_step(self, expert: Expert, params: Params) -> Action | None:
        target = self.shop(params).product_url(BY_NAME[params["product"]])
        return open_search_result(expert, params["product"], target)


WEBSHOP_TEMPLATES: tuple[TaskTemplate, ...] = (
    OpenShop(),
    SearchShop(),
    SelectFirstEntry(),
    AddFirstToCart(),
    ViewCart(),
    RemoveFromCart(),
    CheckPrice(),
    SearchEngineToShop(),
)
