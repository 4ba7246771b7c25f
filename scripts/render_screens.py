"""Render the README's PhoneSim contact sheet: one screen per app plus the dynamics.

Usage: .venv/bin/python scripts/render_screens.py docs/phonesim-screens.png
"""

from __future__ import annotations

import sys

import numpy as np
from PIL import Image

from distrl.config.schema import DynamicsConfig
from distrl.core.action import Action
from distrl.envs.phonesim.apps import build_apps
from distrl.envs.phonesim.apps.browser import Browser
from distrl.envs.phonesim.phone import PhoneSim
from distrl.envs.phonesim.render import Renderer
from distrl.envs.phonesim.web.urls import search_url
from distrl.envs.phonesim.world import populate_world

WIDTH, HEIGHT, COLUMNS = 360, 720, 6


def fresh_phone(**dynamics: object) -> PhoneSim:
    rng = np.random.default_rng(3)
    config = DynamicsConfig.none().model_copy(update=dynamics)
    phone = PhoneSim(build_apps(), config, rng, episode_seed=3)
    populate_world(phone.state, rng)
    phone.invalidate()
    return phone


def browse(phone: PhoneSim, url: str) -> PhoneSim:
    phone.open_app("browser")
    browser = phone.apps["browser"]
    assert isinstance(browser, Browser)
    browser.navigate(phone, url)
    return phone


def screens() -> list[PhoneSim]:
    phones = [fresh_phone()]
    for app in ("settings", "clock", "contacts", "messages", "notes", "store"):
        phone = fresh_phone()
        phone.open_app(app)
        phones.append(phone)
    phones.append(browse(fresh_phone(ads=True, ad_prob=0.5), search_url("weather in chile")))
    phones.append(browse(fresh_phone(), "ebay.com"))
    popup = fresh_phone(popups=True, popup_prob=1.0)
    popup.open_app("messages")
    phones.append(popup)
    dark = fresh_phone()
    dark.state.settings["dark_mode"] = True
    dark.open_app("contacts")
    phones.append(dark)
    typing = browse(fresh_phone(), "bestbuy.com")
    field = next(e for e in typing.elements() if e.kind == "field" and "search" in e.resource_id)
    typing.apply(Action.tap(*field.center_yx))
    typing.apply(Action.type_text("razer"))
    phones.append(typing)
    return phones


def main(path: str) -> None:
    renderer = Renderer(WIDTH, HEIGHT)
    shots = [renderer.render(p.screen(), p.theme()) for p in screens()]
    rows = (len(shots) + COLUMNS - 1) // COLUMNS
    sheet = Image.new("RGB", (COLUMNS * WIDTH // 2, rows * HEIGHT // 2), (255, 255, 255))
    for index, shot in enumerate(shots):
        tile = Image.fromarray(shot).resize((WIDTH // 2, HEIGHT // 2), Image.LANCZOS)
        sheet.paste(tile, ((index % COLUMNS) * WIDTH // 2, (index // COLUMNS) * HEIGHT // 2))
    sheet.save(path, optimize=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs/phonesim-screens.png")
