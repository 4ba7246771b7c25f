"""PhoneSim's phone: navigation, focus, keyboard, scrolling, interruptions and input dispatch.

A :class:`PhoneSim` holds the persistent :class:`PhoneState` plus the transient UI (which screen is
shown, which field has focus, what is typed, scroll offsets, a popup, a page still loading). It
turns one :class:`Action` into handler calls the way Android would: a tap goes to the topmost
element under the finger, a vertical swipe scrolls the list under it, BACK closes a dialog, then
the keyboard, then the screen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from distrl.config.schema import DynamicsConfig
from distrl.core.action import Action, ActionType
from distrl.core.observation import TITLE_SEPARATOR, UIElement
from distrl.envs.phonesim import keyboard
from distrl.envs.phonesim.apps.base import App
from distrl.envs.phonesim.dynamics import POPUPS, Dynamics, LayoutVariation
from distrl.envs.phonesim.layout import (
    KEYBOARD_TOP,
    NAV_BAR_TOP,
    STATUS_BAR_BOTTOM,
    PageLayout,
    Placed,
    layout_page,
)
from distrl.envs.phonesim.state import PhoneState, Route
from distrl.envs.phonesim.theme import Theme
from distrl.envs.phonesim.widgets import Page, Widget

MAX_FIELD_LENGTH = 200
BANNER_TOP = 0.74
POPUP_BOX = (0.08, 0.34, 0.92, 0.62)
SYSTEM_PACKAGE = "com.android.systemui"


@dataclass
class Popup:
    kind: str
    title: str
    message: str
    accept: str
    decline: str


@dataclass
class Screen:
    """Everything on screen after layout, bottom layer first. Built once per step."""

    page: Page
    page_layout: PageLayout
    placed: list[Placed]
    keyboard_visible: bool
    popup: Popup | None
    banner_site: str | None
    loading: bool
    focused_field: str | None = None
    fields: dict[str, str] = field(default_factory=dict)
    hidden: list[Placed] = field(default_factory=list)

    def find(self, resource_id: str) -> Placed | None:
        """The visible element with this resource id (the topmost one if several)."""
        for item in reversed(self.placed):
            if item.widget.resource_id == resource_id:
                return item
        return None

    def find_hidden(self, resource_id: str) -> Placed | None:
        """An element of the page that is laid out but covered (keyboard, banner)."""
        for item in self.hidden:
            if item.widget.resource_id == resource_id:
                return item
        return None


class PhoneSim:
    """A simulated Android phone. Apps are registered by name; tasks seed its state."""

    def __init__(
        self,
        apps: dict[str, App],
        dynamics: DynamicsConfig,
        rng: np.random.Generator,
        episode_seed: int = 0,
        state: PhoneState | None = None,
    ):
        self.apps = apps
        self.state = state if state is not None else PhoneState()
        self.rng = rng
        self.dynamics = Dynamics(dynamics, rng, episode_seed)
        self.keyboard_covers_content = dynamics.keyboard_covers_content
        self.variation: LayoutVariation = self.dynamics.layout()
        self._themes: dict[str, Theme] = {}
        self._theme_variation = dynamics.theme_variation
        self.stack: list[Route] = [Route.of("launcher")]
        self.fields: dict[str, str] = {}
        self.focused_field: str | None = None
        self.scroll: dict[Route, float] = {}
        self.popup: Popup | None = None
        self.loading_steps = 0
        #: Sites whose cookie banner is up (``True``) or was answered (``False``) this episode.
        self.cookie_banners: dict[str, bool] = {}
        self.last_event = ""
        self._screen: Screen | None = None

    # -- what is shown --------------------------------------------------------------------------
    @property
    def route(self) -> Route:
        return self.stack[-1]

    @property
    def current_app(self) -> str:
        return self.route.app

    def theme(self) -> Theme:
        """The current app's theme: dark when the dark-theme setting is on, accent per app."""
        dark = self.state.settings.get("dark_mode", False)
        key = f"{self.current_app}:{dark}"
        if key not in self._themes:
            if self._theme_variation:
                self._themes[key] = Theme.sample(self.rng, dark)
            else:
                self._themes[key] = Theme.dark_theme() if dark else Theme.light()
        return self._themes[key]

    def screen(self) -> Screen:
        if self._screen is None:
            self._screen = self._build_screen()
        return self._screen

    def invalidate(self) -> None:
        self._screen = None

    def _build_screen(self) -> Screen:
        route = self.route
        page = self.apps[route.app].build(self, route)
        keyboard_visible = self.focused_field is not None and self.popup is None
        page_layout = layout_page(
            page,
            scroll=self.scroll.get(route, 0.0),
            keyboard_visible=keyboard_visible,
            keyboard_covers_content=self.keyboard_covers_content,
        )
        placed: list[Placed] = []
        hidden: list[Placed] = []
        status = Widget("status", "9:41", f"{SYSTEM_PACKAGE}:id/clock")
        placed.append(Placed(status, (0.0, 0.0, 1.0, STATUS_BAR_BOTTOM), "system"))
        if page_layout.title_bar is not None:
            top, bottom = page_layout.title_bar
            if page.back_arrow:
                arrow = Widget("icon", "Navigate up", f"{page.package}:id/navigate_up", self.back)
                placed.append(Placed(arrow, (0.0, top, 0.14, bottom), "fixed"))
            title = Widget("title", page.title, f"{page.package}:id/title")
            placed.append(
                Placed(title, (0.14 if page.back_arrow else 0.04, top, 0.96, bottom), "fixed")
            )
        site = route.param("site") if route.app == "browser" else None
        banner_site = site if site and self.cookie_banners.get(site) else None
        loading = self.loading_steps > 0
        if loading or keyboard_visible:
            # The banner is web content: a spinner replaces it, the keyboard covers it.
            banner_site = None
        for item in self._with_clear_buttons(page_layout.placed):
            if loading and item.layer == "body":
                continue  # a page still loading shows a spinner, not its content
            center_y = item.center_yx[0]
            covered_by_keyboard = (
                keyboard_visible and self.keyboard_covers_content and center_y >= KEYBOARD_TOP
            )
            covered_by_banner = banner_site is not None and center_y >= BANNER_TOP
            (hidden if covered_by_keyboard or covered_by_banner else placed).append(item)
        if banner_site is not None:
            placed.extend(self._banner_widgets(banner_site))
        if self.popup is not None:
            placed.extend(self._popup_widgets(self.popup))
        for label, handler, x0, x1 in (
            ("Back", self.back, 0.15, 0.35),
            ("Home", self.home, 0.40, 0.60),
        ):
            button = Widget("nav", label, f"{SYSTEM_PACKAGE}:id/{label.lower()}", handler)
            placed.append(Placed(button, (x0, NAV_BAR_TOP, x1, 1.0), "nav"))
        return Screen(
            page,
            page_layout,
            placed,
            keyboard_visible,
            self.popup,
            banner_site,
            loading,
            self.focused_field,
            dict(self.fields),
            hidden,
        )

    def _with_clear_buttons(self, items: list[Placed]) -> list[Placed]:
        """Every non-empty text field gets a clear ("x") button at its right end, as on Android."""
        out: list[Placed] = []
        for item in items:
            out.append(item)
            widget = item.widget
            if widget.kind == "field" and self.fields.get(widget.resource_id):
                x0, y0, x1, y1 = item.bbox
                width = min(0.1, (x1 - x0) / 4)

                def clear(field_id: str = widget.resource_id) -> None:
                    self.set_field(field_id, "")
                    self.focus(field_id)

                button = Widget("clear", "Clear", widget.resource_id + "_clear", clear)
                out.append(Placed(button, (x1 - width, y0, x1, y1), item.layer))
        return out

    def _banner_widgets(self, site: str) -> list[Placed]:
        def answer() -> None:
            self.cookie_banners[site] = False

        package = "com.android.chrome"
        return [
            Placed(
                Widget(
                    "banner",
                    "We use cookies to improve your experience on " + site,
                    f"{package}:id/cookie_text",
                ),
                (0.0, BANNER_TOP, 1.0, 0.84),
                "banner",
            ),
            Placed(
                Widget("button", "Accept all", f"{package}:id/cookie_accept", answer),
                (0.05, 0.85, 0.47, 0.915),
                "banner",
            ),
            Placed(
                Widget("button", "Reject all", f"{package}:id/cookie_reject", answer),
                (0.53, 0.85, 0.95, 0.915),
                "banner",
            ),
        ]

    def _popup_widgets(self, popup: Popup) -> list[Placed]:
        x0, y0, x1, y1 = POPUP_BOX
        package = "android"
        return [
            Placed(
                Widget("dialog", popup.title, f"{package}:id/alertTitle", subtitle=popup.message),
                POPUP_BOX,
                "popup",
            ),
            Placed(
                Widget("button", popup.decline, f"{package}:id/button2", self.dismiss_popup),
                (x0 + 0.04, y1 - 0.075, (x0 + x1) / 2 - 0.02, y1 - 0.015),
                "popup",
            ),
            Placed(
                Widget("button", popup.accept, f"{package}:id/button1", self.dismiss_popup),
                ((x0 + x1) / 2 + 0.02, y1 - 0.075, x1 - 0.04, y1 - 0.015),
                "popup",
            ),
        ]

    def elements(self) -> tuple[UIElement, ...]:
        """The element list an accessibility dump of this screen would give."""
        out = []
        for item in self.screen().placed:
            widget = item.widget
            if widget.kind == "field":
                text = self.fields.get(widget.resource_id, "") or widget.placeholder
            else:
                # One node's text, as a dump gives it: title, then subtitle (price, URL) and badge.
                text = TITLE_SEPARATOR.join(
                    part for part in (widget.text, widget.subtitle, widget.badge) if part
                )
            out.append(
                UIElement(
                    text=text,
                    bbox=item.bbox,
                    clickable=widget.clickable,
                    resource_id=widget.resource_id,
                    kind=widget.kind,
                    checked=widget.checked,
                    focused=widget.resource_id == self.focused_field,
                )
            )
        return tuple(out)

    # -- navigation API used by apps -------------------------------------------------------------
    def _changed_screen(self) -> None:
        self.focused_field = None
        self.fields.clear()
        self.invalidate()

    def push(self, route: Route) -> None:
        self.stack.append(route)
        self.scroll.pop(route, None)
        self._changed_screen()

    def replace(self, route: Route) -> None:
        self.stack[-1] = route
        self.scroll.pop(route, None)
        self._changed_screen()

    def back(self) -> None:
        """Android's BACK: dialog, then keyboard, then the screen; the launcher stays.

        Only leaving the screen abandons a page that is still loading; closing a dialog over it
        does not make it load faster.
        """
        if self.popup is not None:
            self.popup = None
        elif self.focused_field is not None:
            self.focused_field = None
        elif len(self.stack) > 1:
            self.loading_steps = 0
            self.stack.pop()
            self._changed_screen()
        self.invalidate()

    def home(self) -> None:
        self.loading_steps = 0
        self.popup = None
        self.stack = [Route.of("launcher")]
        self._changed_screen()

    def open_app(self, name: str) -> None:
        self.stack = [Route.of("launcher"), Route.of(name)]
        self._changed_screen()
        self.maybe_popup(self.apps[name].popup_kinds(), self.apps[name].label)

    def maybe_popup(self, kinds: tuple[str, ...], owner: str) -> None:
        kind = self.dynamics.popup_on_open(kinds)
        if kind is not None:
            spec = POPUPS[kind]
            self.popup = Popup(
                kind,
                spec.title.format(app=owner),
                spec.message.format(app=owner),
                spec.accept,
                spec.decline,
            )
            self.invalidate()

    def dismiss_popup(self) -> None:
        self.popup = None
        self.invalidate()

    def start_loading(self) -> None:
        self.loading_steps = self.dynamics.loading_steps()
        self.invalidate()

    def focus(self, field_id: str) -> None:
        self.focused_field = field_id
        self.invalidate()

    def set_field(self, field_id: str, text: str) -> None:
        self.fields[field_id] = text[:MAX_FIELD_LENGTH]
        self.invalidate()

    def field_text(self, field_id: str) -> str:
        return self.fields.get(field_id, "")

    # -- input --------------------------------------------------------------------------------
    def apply(self, action: Action) -> str:
        """Carry out ``action``; returns a short description of what happened (for logs/tests)."""
        self.invalidate()
        kind = action.action_type
        if self.loading_steps > 0 and kind not in (ActionType.PRESS_BACK, ActionType.PRESS_HOME):
            self.loading_steps -= 1
            return self._event("page still loading")
        handlers: dict[ActionType, Callable[[Action], str]] = {
            ActionType.DUAL_POINT: self._dual_point,
            ActionType.TYPE: self._type,
            ActionType.PRESS_ENTER: lambda _: self._enter(),
            ActionType.PRESS_BACK: lambda _: self._system(self.back, "back"),
            ActionType.PRESS_HOME: lambda _: self._system(self.home, "home"),
        }
        handler = handlers.get(kind)
        if handler is None:
            return self._event(f"{kind.value}: no device change")
        return self._event(handler(action))

    def _event(self, text: str) -> str:
        self.last_event = text
        self.invalidate()
        return text

    @staticmethod
    def _system(handler: Callable[[], None], name: str) -> str:
        handler()
        return name

    def _dual_point(self, action: Action) -> str:
        if action.is_tap:
            return self.tap(*action.touch_yx)
        (y0, x0), (y1, x1) = action.touch_yx, action.lift_yx
        if abs(y1 - y0) < abs(x1 - x0):
            return "horizontal swipe: nothing to page"
        screen = self.screen()
        layout = screen.page_layout
        if screen.popup is not None or not layout.viewport_top <= y0 <= layout.viewport_bottom:
            return "swipe outside a scrolling list"
        route = self.route
        # Content follows the finger: dragging up (y1 < y0) reveals what is further down.
        new = min(max(self.scroll.get(route, 0.0) + (y0 - y1), 0.0), layout.max_scroll)
        self.scroll[route] = new
        return f"scrolled to {new:.3f}"

    def hit(self, y: float, x: float) -> Placed | None:
        """The topmost element that takes a tap at ``(y, x)``."""
        screen = self.screen()
        for item in reversed(screen.placed):
            x0, y0, x1, y1 = item.bbox
            if not (x0 <= x < x1 and y0 <= y < y1):
                continue
            if screen.popup is not None and item.layer not in ("popup", "nav"):
                return None  # a modal dialog swallows taps outside it
            if item.widget.clickable:
                return item
            if item.layer in ("popup", "banner"):
                return None
        return None

    def tap(self, y: float, x: float) -> str:
        screen = self.screen()
        if screen.keyboard_visible and KEYBOARD_TOP <= y < NAV_BAR_TOP:
            key = keyboard.key_at(y, x)
            return self._key(key.char) if key is not None else "tap between keys"
        item = self.hit(y, x)
        if item is None:
            return "tap on nothing clickable"
        widget = item.widget
        if widget.kind == "field":
            self.focus(widget.resource_id)
            return f"focused {widget.resource_id}"
        assert widget.on_tap is not None
        widget.on_tap()
        self.invalidate()
        return f"tapped {widget.resource_id or widget.text}"

    def _key(self, char: str) -> str:
        if char == keyboard.ENTER:
            return self._enter()
        field_id = self.focused_field
        assert field_id is not None
        text = self.field_text(field_id)
        self.set_field(field_id, text[:-1] if char == keyboard.BACKSPACE else text + char)
        return f"key {char!r}"

    def _type(self, action: Action) -> str:
        if self.focused_field is None:
            return "typed with no focused field"
        self.set_field(self.focused_field, self.field_text(self.focused_field) + action.text)
        return f"typed into {self.focused_field}"

    def _focused_widget(self) -> Widget | None:
        for item in self.screen().placed + self.screen().hidden:
            if item.widget.resource_id == self.focused_field:
                return item.widget
        return None

    def _enter(self) -> str:
        widget = self._focused_widget()
        if widget is None or widget.on_submit is None:
            return "enter with nothing to submit"
        widget.on_submit(self.field_text(widget.resource_id))
        self.invalidate()
        return f"submitted {widget.resource_id}"
