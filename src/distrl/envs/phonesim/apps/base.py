"""What every PhoneSim app provides: a name, a launcher icon and a page per route."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from distrl.envs.phonesim.state import Route
from distrl.envs.phonesim.theme import Color
from distrl.envs.phonesim.widgets import Handler, Page, Row, SubmitHandler, Widget, row

if TYPE_CHECKING:
    from distrl.envs.phonesim.phone import PhoneSim

#: Secondary text (labels, hints, "nothing here yet") and secondary buttons such as Cancel.
MUTED_COLOR: Color = (128, 128, 128)
#: A form's error line.
ERROR_COLOR: Color = (217, 48, 37)


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
    icon_color: Color = (90, 90, 90)
    #: Installed on a fresh phone; the others are installed from the app store.
    preinstalled: bool = True
    #: Shown on the launcher when installed (system apps such as the launcher itself are not).
    on_home_screen: bool = True
    #: Which interruptions this app may show when opened (see dynamics.POPUPS).
    popups: tuple[str, ...] = ("rate", "update")

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
        return self.popups

    # -- building blocks shared by the apps' pages ---------------------------------------------
    # One definition per kind of row keeps the apps' screens alike, as Material apps are: the
    # same grey for secondary text, the same Cancel/Save footer, the same add button.
    def page(
        self,
        title: str,
        body: list[Row],
        *,
        header: list[Row] | None = None,
        footer: list[Row] | None = None,
        back_arrow: bool = False,
        bar_color: Color | None = None,
    ) -> Page:
        """A page of this app; every page carries the package, which the a11y tree reports."""
        return Page(
            title=title,
            package=self.package,
            header=header or [],
            body=body,
            footer=footer or [],
            back_arrow=back_arrow,
            bar_color=bar_color,
        )

    def muted(self, text: str, name: str, *, height: float = 1.0) -> Row:
        """A row of grey secondary text: a label, a hint or a "nothing here yet" line."""
        return row(Widget("text", text, self.rid(name), color=MUTED_COLOR), height=height)

    def error_rows(self, route: Route) -> list[Row]:
        """The error :meth:`show_error` put in ``route`` as a red row; no rows without one."""
        error = route.param("error")
        return [row(Widget("text", error, self.rid("error"), color=ERROR_COLOR))] if error else []

    def field(
        self, name: str, placeholder: str, on_submit: SubmitHandler, *, weight: float = 1.0
    ) -> Widget:
        """A text field; ENTER (the keyboard's Next, Done or Send key) calls ``on_submit``."""
        return Widget(
            "field",
            resource_id=self.rid(name),
            placeholder=placeholder,
            on_submit=on_submit,
            weight=weight,
        )

    def button_footer(self, text: str, name: str, on_tap: Handler) -> list[Row]:
        """The one wide button at the bottom of a list screen, such as "+ Add alarm"."""
        return [row(Widget("button", text, self.rid(name), on_tap=on_tap))]

    def list_page(
        self,
        title: str,
        items: list[Row],
        empty: str,
        *,
        header: list[Row] | None = None,
        footer: list[Row] | None = None,
        back_arrow: bool = False,
    ) -> Page:
        """A list screen (alarms, chats, notes, a conversation's messages): its items, or a grey
        ``empty`` line when there are none, so an empty screen still says what would be there."""
        body = items or [self.muted(empty, "empty")]
        return self.page(title, body, header=header, footer=footer, back_arrow=back_arrow)

    def editor_page(self, phone: PhoneSim, title: str, body: list[Row], save: Handler) -> Page:
        """An editor: a back arrow, the form, and Cancel (leave without saving) beside Save at the
        bottom, where the keyboard may cover them."""
        cancel = Widget(
            "button",
            "Cancel",
            self.rid("cancel"),
            color=MUTED_COLOR,
            on_tap=lambda: self.close_screen(phone),
        )
        footer = [row(cancel, Widget("button", "Save", self.rid("save"), on_tap=save))]
        return self.page(title, body, back_arrow=True, footer=footer)
