"""Play Store: a search field, the top charts, search results and an app page with Install.

Install is immediate (no download progress): the app's name joins ``installed_apps``, its icon
appears on the launcher and the button becomes "Open" (with "Uninstall" beside it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from distrl.envs.phonesim.apps.base import MUTED_COLOR, App
from distrl.envs.phonesim.apps.installable import INSTALLABLE_APPS, InstallableApp
from distrl.envs.phonesim.state import Route
from distrl.envs.phonesim.widgets import Page, Row, Widget, row

if TYPE_CHECKING:
    from distrl.envs.phonesim.phone import PhoneSim

STORE_APPS: dict[str, InstallableApp] = {app.name: app for app in INSTALLABLE_APPS}


def search_store(query: str) -> list[InstallableApp]:
    """Store apps whose name, label, category or developer contains ``query`` (any case)."""
    wanted = " ".join(query.split()).casefold()
    return [
        app
        for app in INSTALLABLE_APPS
        if wanted
        and any(
            wanted in text.casefold() for text in (app.label, app.name, app.category, app.developer)
        )
    ]


class PlayStore(App):
    """Google Play: search, top charts and app pages with Install / Open / Uninstall."""

    name = "store"
    label = "Play Store"
    package = "com.android.vending"
    icon_color = (1, 135, 95)
    popups = ("update",)

    def listing_id(self, app_name: str) -> str:
        """The resource id of ``app_name``'s row in the top charts and in search results."""
        return self.rid("listing_" + app_name)

    # -- handlers -------------------------------------------------------------------------------
    def search(self, phone: PhoneSim, query: str) -> None:
        query = " ".join(query.split())
        if not query:
            return
        phone.push(Route.of(self.name, "search", query=query))
        phone.set_field(self.rid("search_field"), query)

    def install(self, phone: PhoneSim, app_name: str) -> None:
        if app_name not in phone.state.installed_apps:
            phone.state.installed_apps.append(app_name)

    def uninstall(self, phone: PhoneSim, app_name: str) -> None:
        if app_name in phone.state.installed_apps:
            phone.state.installed_apps.remove(app_name)

    # -- pages ----------------------------------------------------------------------------------
    def build(self, phone: PhoneSim, route: Route) -> Page:
        if route.screen == "app":
            return self._app_page(phone, STORE_APPS[route.param("app_name")])
        search_bar = row(
            self.field(
                "search_field",
                "Search for apps & games",
                lambda query: self.search(phone, query),
            )
        )
        if route.screen == "search":
            query = route.param("query", "")
            found = search_store(query)
            body = [
                row(Widget("text", f'Results for "{query}"', self.rid("results_title")), height=0.8)
            ]
            body += [self._listing(phone, app) for app in found]
            if not found:
                body.append(self.muted("No apps found. Try another name.", "no_results"))
            return self.page("Search", body, header=[search_bar], back_arrow=True)
        body = [row(Widget("text", "Top charts", self.rid("top_charts")), height=0.8)]
        body += [self._listing(phone, app) for app in INSTALLABLE_APPS]
        return self.page("Google Play", body, header=[search_bar])

    def _listing(self, phone: PhoneSim, app: InstallableApp) -> Row:
        installed = app.name in phone.state.installed_apps
        return row(
            Widget(
                "item",
                app.label,
                self.listing_id(app.name),
                subtitle=f"{app.category} - {app.rating} stars",
                on_tap=lambda: phone.push(Route.of(self.name, "app", app_name=app.name)),
                color=app.icon_color,
                badge="Installed" if installed else "",
            ),
            height=1.2,
        )

    def _app_page(self, phone: PhoneSim, app: InstallableApp) -> Page:
        installed = app.name in phone.state.installed_apps
        if installed:
            actions = row(
                Widget(
                    "button",
                    "Uninstall",
                    self.rid("uninstall_button"),
                    color=MUTED_COLOR,
                    on_tap=lambda: self.uninstall(phone, app.name),
                ),
                Widget(
                    "button",
                    "Open",
                    self.rid("open_button"),
                    on_tap=lambda: phone.open_app(app.name),
                ),
            )
        else:
            actions = row(
                Widget(
                    "button",
                    "Install",
                    self.rid("install_button"),
                    on_tap=lambda: self.install(phone, app.name),
                )
            )
        body = [
            row(
                Widget(
                    "item",
                    app.label,
                    self.rid("app_title"),
                    subtitle=app.developer,
                    color=app.icon_color,
                ),
                height=1.6,
            ),
            self.muted(
                f"{app.rating} stars | {app.downloads} downloads | {app.category}", "app_stats"
            ),
            actions,
            row(Widget("text", "About this app", self.rid("about_title"))),
            row(Widget("text", app.tagline, self.rid("about_text")), height=1.2),
        ]
        return self.page(app.label, body, back_arrow=True)
