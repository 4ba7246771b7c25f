"""The apps a PhoneSim phone has. ``build_apps()`` makes one stateless instance of each."""

from __future__ import annotations

from distrl.envs.phonesim.apps.base import App
from distrl.envs.phonesim.apps.browser import Browser
from distrl.envs.phonesim.apps.clock import Clock
from distrl.envs.phonesim.apps.contacts import Contacts
from distrl.envs.phonesim.apps.installable import INSTALLABLE_APPS
from distrl.envs.phonesim.apps.launcher import Launcher
from distrl.envs.phonesim.apps.messages import Messages
from distrl.envs.phonesim.apps.notes import Notes
from distrl.envs.phonesim.apps.settings import Settings
from distrl.envs.phonesim.apps.store import PlayStore


def build_apps() -> dict[str, App]:
    """All apps by name: the launcher, the system apps and the installable store apps."""
    apps: list[App] = [
        Launcher(),
        Settings(),
        Browser(),
        Clock(),
        Contacts(),
        Messages(),
        Notes(),
        PlayStore(),
        *INSTALLABLE_APPS,
    ]
    return {app.name: app for app in apps}


__all__ = ["App", "build_apps"]
