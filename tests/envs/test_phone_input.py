"""PhoneSim's input semantics: taps by bounding box, BACK order, keyboard, scrolling, dialogs."""

from __future__ import annotations

import numpy as np
import pytest

from distrl.config.schema import DynamicsConfig
from distrl.core.action import Action
from distrl.envs.phonesim.apps import build_apps
from distrl.envs.phonesim.keyboard import KEYS
from distrl.envs.phonesim.layout import KEYBOARD_TOP
from distrl.envs.phonesim.phone import PhoneSim
from distrl.envs.phonesim.state import Route

LAUNCHER = "com.android.launcher3:id/"
SETTINGS = "com.android.settings:id/"


def make_phone(**dynamics: object) -> PhoneSim:
    config = DynamicsConfig.none().model_copy(update=dynamics)
    return PhoneSim(build_apps(), config, np.random.default_rng(0), episode_seed=0)


def tap(phone: PhoneSim, resource_id: str) -> str:
    item = phone.screen().find(resource_id)
    assert item is not None, f"{resource_id} is not on screen"
    return phone.apply(Action.tap(*item.center_yx))


def test_tap_resolves_against_bounding_boxes() -> None:
    phone = make_phone()
    icon = phone.screen().find(LAUNCHER + "icon_settings")
    assert icon is not None
    x0, y0, x1, y1 = icon.bbox
    # Just inside the box's corner opens the app; just outside does not.
    outside = make_phone()
    outside.apply(Action.tap(y1 + 0.004, x1 + 0.004))
    assert outside.current_app == "launcher"
    phone.apply(Action.tap(y0 + 0.002, x0 + 0.002))
    assert phone.current_app == "settings"


def test_back_closes_dialog_then_keyboard_then_screen() -> None:
    phone = make_phone(popups=True, popup_prob=1.0)
    tap(phone, LAUNCHER + "icon_browser")
    assert phone.popup is not None
    phone.apply(Action.press_back())
    assert phone.popup is None and phone.current_app == "browser"
    phone.home()
    tap(phone, LAUNCHER + "search_box")
    assert phone.focused_field == LAUNCHER + "search_box" and phone.screen().keyboard_visible
    phone.apply(Action.press_back())
    assert phone.focused_field is None and phone.current_app == "launcher"
    tap(phone, LAUNCHER + "icon_settings")
    phone.apply(Action.press_back())
    assert phone.route == Route.of("launcher")


def test_modal_dialog_swallows_taps_outside_it() -> None:
    phone = make_phone(popups=True, popup_prob=1.0)
    tap(phone, LAUNCHER + "icon_browser")
    assert phone.popup is not None
    assert phone.apply(Action.tap(0.15, 0.5)) == "tap on nothing clickable"
    assert phone.popup is not None
    tap(phone, "android:id/button2")
    assert phone.popup is None


def test_keyboard_keys_type_and_enter_submits() -> None:
    phone = make_phone()
    tap(phone, LAUNCHER + "search_box")
    for char in "cat":
        key = next(k for k in KEYS if k.char == char)
        y0, x0 = key.bbox[1], key.bbox[0]
        phone.apply(Action.tap(y0 + 0.01, x0 + 0.01))
    assert phone.field_text(LAUNCHER + "search_box") == "cat"
    phone.apply(Action.type_text(" videos"))
    assert phone.field_text(LAUNCHER + "search_box") == "cat videos"
    tap(phone, LAUNCHER + "search_box_clear")
    assert phone.field_text(LAUNCHER + "search_box") == ""
    phone.apply(Action.type_text("weather"))
    phone.apply(Action.press_enter())
    assert phone.current_app == "browser"


def test_typing_without_focus_changes_nothing() -> None:
    phone = make_phone()
    assert phone.apply(Action.type_text("hello")) == "typed with no focused field"
    assert phone.fields == {}


@pytest.mark.parametrize("covers", [True, False])
def test_keyboard_covers_or_resizes_content(covers: bool) -> None:
    phone = make_phone(keyboard_covers_content=covers)
    tap(phone, LAUNCHER + "icon_settings")  # a long list that reaches the bottom of the screen
    phone.focus(SETTINGS + "some_field")  # as if a field had been tapped: the keyboard shows
    assert phone.screen().keyboard_visible
    below = [
        e
        for e in phone.elements()
        if e.center_yx[0] >= KEYBOARD_TOP and not e.resource_id.startswith("com.android.systemui")
    ]
    # Covered: nothing of the page shows under the keyboard. Resized: the page ends above it.
    assert below == []
    hidden = phone.screen().hidden
    assert bool(hidden) == covers


def test_vertical_swipe_scrolls_and_is_clamped() -> None:
    phone = make_phone()
    tap(phone, LAUNCHER + "icon_settings")
    layout = phone.screen().page_layout
    assert layout.max_scroll > 0
    first = phone.elements()
    phone.apply(Action.swipe((0.8, 0.5), (0.2, 0.5)))  # finger up: content moves up
    assert phone.scroll[phone.route] == pytest.approx(min(0.6, layout.max_scroll), abs=1e-3)
    assert phone.elements() != first
    for _ in range(5):
        phone.apply(Action.swipe((0.8, 0.5), (0.2, 0.5)))
    assert phone.scroll[phone.route] == pytest.approx(layout.max_scroll)
    phone.apply(Action.swipe((0.2, 0.5), (0.9, 0.5)))
    phone.apply(Action.swipe((0.2, 0.5), (0.9, 0.5)))
    assert phone.scroll[phone.route] == 0.0


def test_toggle_changes_state_and_element_reports_it() -> None:
    phone = make_phone()
    tap(phone, LAUNCHER + "icon_settings")
    assert phone.state.settings["wifi"] is False
    tap(phone, SETTINGS + "switch_wifi")
    assert phone.state.settings["wifi"] is True
    wifi = next(e for e in phone.elements() if e.resource_id == SETTINGS + "switch_wifi")
    assert wifi.checked is True and wifi.clickable


def test_airplane_mode_turns_radios_off() -> None:
    phone = make_phone()
    phone.state.settings.update(wifi=True, bluetooth=True)
    tap(phone, LAUNCHER + "icon_settings")
    tap(phone, SETTINGS + "switch_airplane_mode")
    assert phone.state.settings == {
        **phone.state.settings,
        "wifi": False,
        "bluetooth": False,
        "airplane_mode": True,
    }


def test_loading_screen_consumes_actions_then_shows_page() -> None:
    phone = make_phone(loading_screens=True, loading_prob=1.0, loading_max_steps=2)
    tap(phone, LAUNCHER + "icon_browser")
    phone.start_loading()
    steps = phone.loading_steps
    assert steps >= 1 and phone.screen().loading
    assert not [
        e for e in phone.elements() if e.resource_id.startswith("com.android.chrome:id/web")
    ]
    for _ in range(steps):
        assert phone.apply(Action.tap(0.5, 0.5)) == "page still loading"
    assert not phone.screen().loading


def test_status_and_invalid_actions_change_nothing() -> None:
    phone = make_phone()
    before = phone.elements()
    for action in (Action.complete(), Action.impossible(), Action.invalid("junk")):
        phone.apply(action)
    assert phone.elements() == before and phone.route == Route.of("launcher")
