"""What every PhoneSim app provides: a name, a launcher icon and a page per route."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from distrl.envs.phonesim.state import Route
from distrl.envs.phonesim.widgets import Page

if TYPE_CHECKING:
    from distrl.envs.phonesim.phone import PhoneSim


def slug(text: str) -> str:
    """``text`` as a resource-id fragment: ``"Alice Smith"`` -> ``"alice_smith"``."""
    return re.sub(r"[^a-z0-9]+", "_", text.casefold()).strip("_")


class App(ABC):
    """Base class of an app. Subclasses set the class attributes and implement :meth:`build`.

    ``build`` must be a pure function of the phone's state and the route: it describes the
    screen, and its widgets' handlers are the only code that changes state.
    """

    name: str = ""
    label: str = ""
    package: str = ""
    icon_color: tuple[int, int, int] = (90, 90, 90)
    #: Installed on a fresh phone; the others are installed from the app store.
    preinstalled: bool = True
    #: Shown on the launcher when installed (system apps such as the launcher itself are not).
    on_home_screen: bool = True

    def rid(self, name: str) -> str:
        """An Android-style resource id: ``com.android.settings:id/switch_wifi``."""
        return f"{self.package}:id/{name}"

    @abstractmethod
    def build(self, phone: PhoneSim, route: Route) -> Page:
        """The page shown for ``route`` in the phone's current state."""

    def close_screen(self, phone: PhoneSim) -> None:
        """Leave the current screen as a Save or Done button does: at once, keyboard or not
        (BACK would only lower the keyboard first)."""
        phone.focused_field = None
        phone.back()

    def show_error(self, phone: PhoneSim, error: str) -> None:
        """Redraw the current screen with ``error`` in its route, keeping typed text and focus
        (a form that rejects its input stays open, as on Android)."""
        fields, focused, route = dict(phone.fields), phone.focused_field, phone.route
        params = {key: value for key, value in route.params if key != "error"}
        phone.replace(Route.of(route.app, route.screen, error=error, **params))
        for field_id, text in fields.items():
            phone.set_field(field_id, text)
        if focused is not None:
            phone.focus(focused)

    def popup_kinds(self) -> tuple[str, ...]:
        """Which interruptions this app may show when opened (see dynamics.POPUPS)."""
        return ("rate", "update")
