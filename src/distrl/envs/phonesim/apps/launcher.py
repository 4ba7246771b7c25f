"""The home screen: a search bar and a grid of the installed apps' icons."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from distrl.envs.phonesim.apps.base import App
from distrl.envs.phonesim.apps.browser import Browser
from distrl.envs.phonesim.state import Route
from distrl.envs.phonesim.web.urls import search_url
from distrl.envs.phonesim.widgets import Page, Row, Widget, row

if TYPE_CHECKING:
    from distrl.envs.phonesim.phone import PhoneSim


class Launcher(App):
    name = "launcher"
    label = "Home"
    package = "com.android.launcher3"
    on_home_screen = False

    def home_apps(self, phone: PhoneSim) -> list[App]:
        """Installed apps in this episode's icon order (shuffled under layout variation)."""
        apps = [
            app
            for app in phone.apps.values()
            if app.on_home_screen and (app.preinstalled or app.name in phone.state.installed_apps)
        ]
        apps.sort(key=lambda app: app.name)
        seed = phone.variation.launcher_order_seed
        if seed:
            order = np.random.default_rng(seed).permutation(len(apps))
            apps = [apps[i] for i in order]
        return apps

    def build(self, phone: PhoneSim, route: Route) -> Page:
        def search(query: str) -> None:
            if query.strip():
                phone.open_app("browser")
                browser = phone.apps["browser"]
                assert isinstance(browser, Browser)
                browser.navigate(phone, search_url(query.strip()))

        search_bar = Widget(
            "field",
            resource_id=self.rid("search_box"),
            placeholder="Search the web",
            on_submit=search,
        )
        columns = phone.variation.launcher_columns
        icons = [
            Widget(
                "icon",
                app.label,
                self.rid(f"icon_{app.name}"),
                on_tap=lambda app=app: phone.open_app(app.name),
                color=app.icon_color,
            )
            for app in self.home_apps(phone)
        ]
        body: list[Row] = [row(Widget("text", "Good morning", self.rid("greeting")), height=1.5)]
        for start in range(0, len(icons), columns):
            chunk = icons[start : start + columns]
            filler = [Widget("spacer") for _ in range(columns - len(chunk))]
            body.append(Row(chunk + filler, height=1.7))
        return Page(
            title="Home",
            package=self.package,
            header=[row(search_bar)],
            body=body,
            show_title_bar=False,
        )
