"""Expert steps and success checks shared by the web templates (``webshop`` and ``general``).

Each step follows the :class:`~distrl.envs.phonesim.expert.Expert` convention: it returns the next
action while its sub-goal does not hold and ``None`` once it does, so templates chain them::

    return expert.interruption() or open_first_result(expert, shop, query) or Action.press_back()

The expert browses the way a person does: Chrome's address bar to reach a site, the site's own
search box to search it, taps on results.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

import numpy as np

from distrl.core.action import Action
from distrl.envs.phonesim.apps.browser import URL_BAR, current_url, loaded_url
from distrl.envs.phonesim.expert import Expert
from distrl.envs.phonesim.phone import PhoneSim
from distrl.envs.phonesim.state import Route
from distrl.envs.phonesim.tasks.base import Params, TaskTemplate
from distrl.envs.phonesim.web.page import rid
from distrl.envs.phonesim.web.search_engine import result_index
from distrl.envs.phonesim.web.shopping import first_result
from distrl.envs.phonesim.web.shops import Shop
from distrl.envs.phonesim.web.urls import SEARCH_ENGINE, Url, normalize_query, parse_url

LAUNCHER_SEARCH = "com.android.launcher3:id/search_box"
SITE_SEARCH = rid("site_search")
CART_BUTTON = rid("cart_button")
ADD_TO_CART = rid("add_to_cart")


# -- templates ------------------------------------------------------------------------------------
def pick(rng: np.random.Generator, values: Sequence[str]) -> str:
    """One of ``values``, drawn with one ``rng.integers`` call (suites depend on that draw)."""
    return values[int(rng.integers(len(values)))]


class WebTemplate(TaskTemplate):
    """A web template whose expert chains steps: clear interruptions, take the next step toward
    the goal, and press BACK once the goal holds (the episode ends on success before that)."""

    def expert_action(self, expert: Expert, params: Params) -> Action:
        return expert.interruption() or self.next_step(expert, params) or Action.press_back()

    @abstractmethod
    def next_step(self, expert: Expert, params: Params) -> Action | None:
        """The next action toward the goal, ``None`` once it holds (see the module docstring)."""


# -- what the browser shows ------------------------------------------------------------------------
def is_search_page(url: Url | None, query: str | None = None) -> bool:
    """``url`` is a search engine result page (for ``query``, compared normalised)."""
    if url is None or url.domain != SEARCH_ENGINE or url.path != "search" or not url.query:
        return False
    return query is None or normalize_query(url.query) == normalize_query(query)


def is_results_page(url: Url | None, shop: Shop, query: str) -> bool:
    return (
        url is not None
        and shop.is_results(url)
        and normalize_query(url.query) == normalize_query(query)
    )


def on_site(phone: PhoneSim, domain: str) -> bool:
    """The loaded page is any page of ``domain``."""
    url = loaded_url(phone)
    return url is not None and url.domain == domain


def showing_product(phone: PhoneSim, shop: Shop, pid: str) -> bool:
    """The loaded page is ``pid``'s product page on ``shop``."""
    url = loaded_url(phone)
    return url is not None and shop.product_of(url) == pid


def searched_web_for(phone: PhoneSim, words: str) -> bool:
    """The browser showed a search engine result page whose query holds all of ``words``."""
    wanted = set(normalize_query(words).split())
    for text in phone.state.browser_history:
        url = parse_url(text)
        if is_search_page(url) and wanted <= set(normalize_query(url.query).split()):
            return True
    return False


# -- expert steps --------------------------------------------------------------------------------
def open_site(expert: Expert, domain: str) -> Action | None:
    """Any page of ``domain`` in Chrome, reached through the address bar."""
    url = current_url(expert.phone)
    if url is not None and url.domain == domain:
        return None
    return expert.open_app("browser") or expert.fill(URL_BAR, domain)


def web_search(expert: Expert, query: str) -> Action | None:
    """The search engine's result page for ``query`` (from Chrome's address bar, or from the
    home screen's search bar when the phone is on the home screen)."""
    phone = expert.phone
    if is_search_page(current_url(phone), query):
        return None
    if phone.current_app == "browser":
        return expert.fill(URL_BAR, query)
    if phone.stack == [Route.of("launcher")]:
        return expert.fill(LAUNCHER_SEARCH, query)
    return expert.go_home()


def search_site(expert: Expert, shop: Shop, query: str) -> Action | None:
    """``shop``'s result page for ``query``, searched with the site's own search box."""
    if is_results_page(current_url(expert.phone), shop, query):
        return None
    return open_site(expert, shop.domain) or expert.fill(SITE_SEARCH, query)


def open_first_result(expert: Expert, shop: Shop, query: str) -> Action | None:
    """The product page of the first non-sponsored result for ``query`` on ``shop``."""
    product = first_result(shop, query)
    url = current_url(expert.phone)
    if product is not None and url is not None and shop.product_of(url) == product.pid:
        return None
    return search_site(expert, shop, query) or expert.tap(rid("result_0"))


def open_cart(expert: Expert, shop: Shop) -> Action | None:
    url = current_url(expert.phone)
    if url is not None and url.same_page(shop.cart_url()):
        return None
    return open_site(expert, shop.domain) or expert.tap(CART_BUTTON)


def open_search_result(expert: Expert, query: str, target: Url) -> Action | None:
    """``target`` opened from the search engine's result page for ``query``."""
    phone = expert.phone
    url = current_url(phone)
    if url is not None and url.same_page(target) and searched_web_for(phone, query):
        return None
    if is_search_page(url, query):
        assert url is not None
        index = result_index(url.query, target)
        if index is not None:
            return expert.tap(rid(f"search_result_{index}"))
    return web_search(expert, query)
