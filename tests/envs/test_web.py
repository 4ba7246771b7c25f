"""Chrome and the simulated web, driven through real actions: taps on element centres, TYPE,
ENTER and BACK, exactly what an agent can do."""

from __future__ import annotations

import numpy as np
import pytest

from distrl.config.schema import DynamicsConfig
from distrl.core.action import Action
from distrl.envs.phonesim.apps import build_apps
from distrl.envs.phonesim.apps.browser import URL_BAR, current_url, loaded_url
from distrl.envs.phonesim.phone import PhoneSim
from distrl.envs.phonesim.tasks.registry import TEMPLATES
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.envs.phonesim.web.answers import answer_for
from distrl.envs.phonesim.web.catalog import BY_NAME, PRODUCTS, search_products
from distrl.envs.phonesim.web.page import rid
from distrl.envs.phonesim.web.shopping import first_result
from distrl.envs.phonesim.web.shops import SHOPS
from distrl.envs.phonesim.web.urls import SEARCH_ENGINE, looks_like_address, parse_url

APPS = build_apps()
LAUNCHER_SEARCH = "com.android.launcher3:id/search_box"
SITE_SEARCH = rid("site_search")


def make_phone(seed: int = 0, **dynamics: object) -> PhoneSim:
    """A phone with every dynamic off except those given (``ads=True, ad_prob=0.9``...)."""
    config = DynamicsConfig(**{**DynamicsConfig.none().model_dump(), **dynamics})
    return PhoneSim(APPS, config, np.random.default_rng(seed), seed)


def tap(phone: PhoneSim, resource_id: str) -> str:
    item = phone.screen().find(resource_id)
    assert item is not None, f"{resource_id} is not on screen"
    return phone.apply(Action.tap(*item.center_yx))


def fill(phone: PhoneSim, field_id: str, text: str) -> None:
    tap(phone, field_id)
    phone.apply(Action.type_text(text))
    phone.apply(Action.press_enter())


def open_chrome(phone: PhoneSim) -> None:
    tap(phone, "com.android.launcher3:id/icon_browser")


def browse_to(text: str, seed: int = 0, **dynamics: object) -> PhoneSim:
    """A fresh phone (see :func:`make_phone`) with ``text`` entered in Chrome's address bar: how
    most tests start."""
    phone = make_phone(seed, **dynamics)
    open_chrome(phone)
    fill(phone, URL_BAR, text)
    return phone


def texts(phone: PhoneSim) -> dict[str, str]:
    """Each element's title (its text before the " · "-joined subtitle and badge)."""
    return {e.resource_id: e.text.split(" · ")[0] for e in phone.elements()}


# -- addresses, searches and error pages -------------------------------------------------------
def test_address_bar_opens_a_domain() -> None:
    phone = browse_to("https://www.eBay.com/")
    url = current_url(phone)
    assert url is not None and url.domain == "ebay.com" and url.path == ""
    assert phone.route.param("site") == "ebay.com"
    assert phone.state.browser_history == ["ebay.com"]
    assert texts(phone)[rid("site_logo")] == "ebay"


def test_address_bar_searches_text_that_is_not_an_address() -> None:
    phone = browse_to("hotels in Paris")
    url = current_url(phone)
    assert url is not None and (url.domain, url.path, url.query) == (
        SEARCH_ENGINE,
        "search",
        "hotels in Paris",
    )
    assert phone.route.param("site") is None
    assert rid("search_result_0") in texts(phone)


def test_launcher_search_bar_opens_search_results_in_chrome() -> None:
    phone = make_phone()
    fill(phone, LAUNCHER_SEARCH, "weather in chile")
    url = current_url(phone)
    assert phone.current_app == "browser"
    assert url is not None and url.path == "search" and url.query == "weather in chile"
    assert texts(phone)[rid("answer_card")] == "Weather in Chile"


def test_unknown_domain_shows_site_cannot_be_reached() -> None:
    phone = browse_to("no-such-shop.xyz")
    shown = texts(phone)
    assert shown[rid("page_heading")] == "This site can't be reached"
    tap(phone, rid("search_instead"))
    assert current_url(phone) == parse_url("google.com/search?q=no-such-shop.xyz")


def test_back_returns_to_the_previous_page() -> None:
    phone = browse_to("wikipedia.org")
    tap(phone, rid("trending_0"))
    assert current_url(phone).path.startswith("wiki/")  # type: ignore[union-attr]
    phone.apply(Action.press_back())
    assert current_url(phone) == parse_url("wikipedia.org")


@pytest.mark.parametrize(
    ("text", "is_address"),
    [
        ("ebay.com", True),
        ("http://localhost", True),
        ("en.wikipedia.org/wiki/paris", True),
        ("hotels in paris", False),
        ("hello.", False),
        ("7:30", False),
        ("ebay", False),
    ],
)
def test_what_the_address_bar_treats_as_an_address(text: str, is_address: bool) -> None:
    assert looks_like_address(text) is is_address


# -- catalog and shop search ----------------------------------------------------------------------
def test_catalog_is_large_and_every_name_finds_its_product_first_on_every_shop() -> None:
    assert len(PRODUCTS) >= 300
    assert len({p.name for p in PRODUCTS}) == len(PRODUCTS)
    for shop in SHOPS.values():
        for product in PRODUCTS:
            assert first_result(shop, product.name) is product, (shop.domain, product.name)
            # Case and spacing do not matter; repeated searches give the same list.
            assert search_products(shop.domain, f"  {product.name.upper()} ")[0] is product


@pytest.mark.parametrize("domain", sorted(SHOPS))
def test_searching_a_shop_lists_the_product_first(domain: str) -> None:
    product = BY_NAME["logitech g933"]
    phone = browse_to(domain, seed=1, layout_variation=True)
    fill(phone, SITE_SEARCH, "Logitech G933")
    assert SHOPS[domain].is_results(current_url(phone))  # type: ignore[arg-type]
    first = texts(phone)[rid("result_0")]
    assert first in (product.title, product.short_title)
    tap(phone, rid("result_0"))
    assert SHOPS[domain].product_of(current_url(phone)) == product.pid  # type: ignore[arg-type]
    assert texts(phone)[rid("product_title")] == product.title


def _results_page_with_ads(domain: str = "ebay.com", query: str = "razer kraken v3"):
    for seed in range(50):
        phone = browse_to(domain, seed, ads=True, ad_prob=0.5)
        fill(phone, SITE_SEARCH, query)
        screen = phone.screen()
        if screen.find(rid("sponsored_result_0")) is not None:
            return phone
    raise AssertionError("no episode showed an ad")


def test_ads_are_marked_sponsored_and_stable_across_steps() -> None:
    phone = _results_page_with_ads()
    product = BY_NAME["razer kraken v3"]

    def listing() -> list[tuple[str, str, str]]:
        return [
            (p.widget.resource_id, p.widget.text, p.widget.badge)
            for p in phone.screen().placed
            if "result_" in p.widget.resource_id and p.widget.kind == "item"
        ]

    before = listing()
    assert all((badge == "Sponsored") == ("sponsored" in r) for r, _, badge in before)
    ads = [text for r, text, _ in before if "sponsored" in r]
    assert ads and product.short_title not in ads and product.title not in ads
    phone.apply(Action.tap(0.02, 0.5))  # a tap on the status bar changes nothing
    phone.apply(Action.swipe((0.8, 0.5), (0.4, 0.5)))
    phone.apply(Action.swipe((0.4, 0.5), (0.9, 0.5)))
    assert listing() == before


def test_tapping_an_ad_does_not_count_as_selecting_the_first_entry() -> None:
    phone = _results_page_with_ads()
    template = TEMPLATES["select_first_entry"]
    params = {"site": "ebay.com", "product": "razer kraken v3"}
    tap(phone, rid("sponsored_result_0"))
    assert current_url(phone).ref == "sponsored"  # type: ignore[union-attr]
    assert not template.is_success(phone, params)
    phone.apply(Action.press_back())
    tap(phone, rid("result_0"))
    assert template.is_success(phone, params)


def test_add_to_cart_then_view_and_edit_the_cart() -> None:
    product = BY_NAME["apple airpods pro"]
    phone = browse_to("walmart.com")
    fill(phone, SITE_SEARCH, "apple airpods pro")
    tap(phone, rid("result_0"))
    tap(phone, rid("add_to_cart"))
    assert phone.state.carts["walmart.com"] == [product.pid]
    assert texts(phone)[rid("cart_button")] == "Cart (1)"
    tap(phone, rid("cart_button"))
    shown = texts(phone)
    assert shown[rid("cart_item_0")] == product.title
    assert shown[rid("cart_total")].startswith("Subtotal (1 item): $")
    tap(phone, rid("remove_0"))
    assert phone.state.carts["walmart.com"] == []
    assert texts(phone)[rid("cart_empty")] == "Your cart is empty"


# -- interruptions ---------------------------------------------------------------------------------
def test_cookie_banner_blocks_content_until_answered() -> None:
    for seed in range(20):
        phone = browse_to("target.com", seed, cookie_banners=True)
        if phone.cookie_banners.get("target.com"):
            break
    else:
        raise AssertionError("no cookie banner in 20 episodes")
    fill(phone, SITE_SEARCH, "sony")  # the search box is above the banner
    screen = phone.screen()
    assert screen.banner_site == "target.com"
    covered = [p for p in screen.hidden if p.widget.resource_id.startswith(rid("result_"))]
    assert covered, "results under the banner should be covered"
    url_before = current_url(phone)
    phone.apply(Action.tap(*covered[0].center_yx))
    assert current_url(phone) == url_before  # the tap hit the banner, not the result
    tap(phone, rid("cookie_accept"))
    assert phone.screen().banner_site is None
    assert phone.screen().find(covered[0].widget.resource_id) is not None
    fill(phone, URL_BAR, "target.com")  # answered once: not shown again this episode
    assert phone.screen().banner_site is None


def test_loading_screen_consumes_steps_then_shows_the_page() -> None:
    phone = browse_to("ebay.com", loading_screens=True, loading_prob=1.0, loading_max_steps=3)
    steps = phone.loading_steps
    assert steps >= 1
    for _ in range(steps):
        screen = phone.screen()
        assert screen.loading and screen.find(rid("featured_0")) is None
        assert loaded_url(phone) is None
        phone.apply(Action.tap(0.6, 0.5))  # where content will be: swallowed by the loader
        assert current_url(phone) == parse_url("ebay.com")
    assert not phone.screen().loading
    assert phone.screen().find(rid("featured_0")) is not None
    assert loaded_url(phone) == parse_url("ebay.com")


def test_newsletter_popup_only_on_a_shops_first_visit() -> None:
    phone = make_phone(popups=True, popup_prob=1.0)
    open_chrome(phone)
    phone.apply(Action.press_back())  # dismiss Chrome's own popup
    fill(phone, URL_BAR, "costco.com")
    assert phone.popup is not None and phone.popup.kind == "newsletter"
    tap(phone, "android:id/button2")
    fill(phone, SITE_SEARCH, "dyson v8")
    assert phone.popup is None


# -- answers and tasks ----------------------------------------------------------------------------
def test_answer_card_is_the_same_for_paraphrased_questions() -> None:
    cards = {
        answer_for(q)
        for q in ("What's the weather like in Chile?", "chile weather", "weather in CHILE")
    }
    assert len(cards) == 1 and next(iter(cards)).kind == "weather"  # type: ignore[union-attr]
    assert answer_for("hotels in paris") is None
    assert answer_for("define serendipity").kind == "definition"  # type: ignore[union-attr]


def test_info_query_accepts_the_agents_own_wording() -> None:
    template = TEMPLATES["info_query"]
    params = {"kind": "time", "subject": "tokyo", "label": "Tokyo"}
    phone = make_phone()
    assert not template.is_success(phone, params)
    fill(phone, LAUNCHER_SEARCH, "current time tokyo")
    assert template.is_success(phone, params)


def test_webshop_suite_is_large_disjoint_and_tests_unseen_products() -> None:
    train, test = load_suite("webshop", "train"), load_suite("webshop", "test")
    train_instructions = {t.instruction for t in train}
    test_instructions = {t.instruction for t in test}
    assert len(train_instructions) >= 500 and len(test_instructions) >= 200
    assert not train_instructions & test_instructions
    train_products = {t.spec["params"]["product"] for t in train if "product" in t.spec["params"]}
    test_products = {t.spec["params"]["product"] for t in test if "product" in t.spec["params"]}
    assert test_products and not test_products & train_products
    assert all(t.horizon == 20 for t in train + test)
