"""Settings: quick toggles (Wi-Fi, Bluetooth, airplane mode, dark theme...) and About phone."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from distrl.envs.phonesim.apps.base import App
from distrl.envs.phonesim.state import SETTING_LABELS, SETTINGS, Route
from distrl.envs.phonesim.widgets import Page, Widget, row

if TYPE_CHECKING:
    from distrl.envs.phonesim.phone import PhoneSim

#: About phone's rows: (label, resource-id name, value).
ABOUT_PHONE = (
    ("Device name", "device_name", "PhoneSim Pixel"),
    ("Android version", "android_version", "14"),
    ("Build number", "build_number", "DISTRL.240101.001"),
)


class Settings(App):
    """Quick-setting switches in this episode's order, a few inert entries and About phone."""

    name = "settings"
    label = "Settings"
    package = "com.android.settings"
    icon_color = (95, 99, 104)
    popups = ()  # the system app never nags

    def set(self, phone: PhoneSim, setting: str, value: bool) -> None:
        """Change a setting; airplane mode switches the radios off, as on Android."""
        phone.state.settings[setting] = value
        if setting == "airplane_mode" and value:
            phone.state.settings["wifi"] = False
            phone.state.settings["bluetooth"] = False

    def toggle_order(self, phone: PhoneSim) -> list[str]:
        """The settings' switches in this episode's order (shuffled under layout variation)."""
        names = list(SETTINGS)
        seed = phone.variation.settings_order_seed
        if seed:
            names = [names[i] for i in np.random.default_rng(seed).permutation(len(names))]
        return names

    def build(self, phone: PhoneSim, route: Route) -> Page:
        if route.screen == "about":
            body = [
                row(Widget("item", text, self.rid(name), subtitle=value))
                for text, name, value in ABOUT_PHONE
            ]
            return self.page("About phone", body, back_arrow=True)
        settings = phone.state.settings
        body = [row(Widget("text", "Network & devices", self.rid("section_network")))]
        for name in self.toggle_order(phone):
            body.append(
                row(
                    Widget(
                        "toggle",
                        SETTING_LABELS[name],
                        self.rid(f"switch_{name}"),
                        on_tap=lambda name=name: self.set(phone, name, not settings[name]),
                        checked=settings[name],
                    )
                )
            )
        body.append(row(Widget("text", "System", self.rid("section_system"))))
        for entry in ("Battery", "Storage", "Sound & vibration", "Apps"):
            body.append(row(Widget("item", entry, self.rid("entry_" + entry.split()[0].lower()))))
        body.append(
            row(
                Widget(
                    "item",
                    "About phone",
                    self.rid("entry_about"),
                    on_tap=lambda: phone.push(Route.of("settings", "about")),
                )
            )
        )
        return self.page("Settings", body)
