"""The system apps of the ``general`` suite (clock, contacts, messages, notes, Play Store), driven
only by real actions: taps at element centres, TYPE, ENTER, BACK and swipes."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from distrl.config.schema import DynamicsConfig, PhoneSimConfig
from distrl.core.action import Action
from distrl.envs.phonesim.apps import build_apps
from distrl.envs.phonesim.apps.clock import parse_time
from distrl.envs.phonesim.apps.installable import INSTALLABLE_APPS
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.phone import PhoneSim
from distrl.envs.phonesim.state import Alarm, Contact, Message, Note, PhoneState, Route
from distrl.envs.phonesim.tasks.general import GENERAL_TEMPLATES
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.envs.phonesim.world import CONTACT_NAMES, populate_world

LAUNCHER = "com.android.launcher3:id/"
CLOCK = "com.google.android.deskclock:id/"
CONTACTS = "com.android.contacts:id/"
MESSAGES = "com.google.android.apps.messaging:id/"
NOTES = "com.google.android.keep:id/"
STORE = "com.android.vending:id/"


def make_phone(seed: int = 0, **dynamics: object) -> PhoneSim:
    """A phone with its starting data and no distractions unless ``dynamics`` turns some on."""
    config = DynamicsConfig.none().model_copy(update=dynamics)
    phone = PhoneSim(build_apps(), config, np.random.default_rng(seed), episode_seed=seed)
    populate_world(phone.state, np.random.default_rng(seed))
    return phone


def tap(phone: PhoneSim, resource_id: str) -> str:
    item = phone.screen().find(resource_id)
    assert item is not None, f"{resource_id} is not on screen"
    return phone.apply(Action.tap(*item.center_yx))


def type_text(phone: PhoneSim, text: str) -> None:
    phone.apply(Action.type_text(text))


def open_app(phone: PhoneSim, name: str) -> None:
    phone.apply(Action.press_home())
    tap(phone, LAUNCHER + f"icon_{name}")
    assert phone.current_app == name


def opened(app: str, *taps: str, **dynamics: object) -> PhoneSim:
    """A fresh phone (``make_phone(**dynamics)``) with ``app`` opened from the launcher and then
    ``taps`` tapped: where most tests start, e.g. on an app's form."""
    phone = make_phone(**dynamics)
    open_app(phone, app)
    for resource_id in taps:
        tap(phone, resource_id)
    return phone


def texts(phone: PhoneSim) -> list[str]:
    # An element's text joins title, subtitle and badge with " · "; tests look at the parts.
    return [part for e in phone.elements() for part in e.text.split(" · ")]


# -- starting data --------------------------------------------------------------------------------
def test_world_is_seeded_and_varied() -> None:
    first, again, other = PhoneState(), PhoneState(), PhoneState()
    populate_world(first, np.random.default_rng(3))
    populate_world(again, np.random.default_rng(3))
    populate_world(other, np.random.default_rng(4))
    assert first == again and first != other
    assert len(first.contacts) == 15
    assert len({c.name for c in first.contacts}) == 15
    assert all(c.name in CONTACT_NAMES for c in first.contacts)
    assert len(first.alarms) == 2 and first.notes and first.messages
    names = {c.name for c in first.contacts}
    assert all(m.recipient in names for m in first.messages)


# -- clock ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7:30", (7, 30)),
        ("07:30", (7, 30)),
        ("7:30 AM", (7, 30)),
        ("7:30 am", (7, 30)),
        ("19:30", (19, 30)),
        ("7:30pm", (19, 30)),
        ("7:30 P.M.", (19, 30)),
        ("12:00 AM", (0, 0)),
        ("12:15 PM", (12, 15)),
        ("6 am", (6, 0)),
        ("  23:59 ", (23, 59)),
        ("24:00", None),
        ("7:60", None),
        ("13:30 PM", None),
        ("0:30 AM", None),
        ("7", None),
        ("seven thirty", None),
        ("", None),
    ],
)
def test_parse_time(text: str, expected: tuple[int, int] | None) -> None:
    assert parse_time(text) == expected


def test_add_alarm_by_typing_a_time() -> None:
    phone = opened("clock", CLOCK + "add_alarm")
    assert phone.focused_field == CLOCK + "time_field"  # the editor opens with the keyboard up
    type_text(phone, "6:05pm")
    phone.apply(Action.press_enter())
    assert Alarm(18, 5, enabled=True) in phone.state.alarms
    assert phone.route == Route.of("clock")
    assert "6:05 PM" in texts(phone)


def test_invalid_time_shows_an_error_and_keeps_the_editor_open() -> None:
    phone = opened("clock", CLOCK + "add_alarm")
    alarms_before = list(phone.state.alarms)
    type_text(phone, "25:61")
    phone.apply(Action.press_enter())
    assert phone.route.screen == "edit"
    assert phone.state.alarms == alarms_before
    error = phone.screen().find(CLOCK + "error")
    assert error is not None and "7:30 AM" in error.widget.text
    assert phone.field_text(CLOCK + "time_field") == "25:61"  # what was typed stays
    tap(phone, CLOCK + "time_field_clear")
    type_text(phone, "07:45")
    phone.apply(Action.press_enter())
    assert Alarm(7, 45, enabled=True) in phone.state.alarms
    assert phone.route == Route.of("clock")


def test_alarm_switch_turns_an_alarm_off_and_on() -> None:
    phone = make_phone()
    phone.state.alarms = [Alarm(7, 30, enabled=True)]
    open_app(phone, "clock")
    tap(phone, CLOCK + "alarm_0730")
    assert phone.state.alarms == [Alarm(7, 30, enabled=False)]
    switch = phone.screen().find(CLOCK + "alarm_0730")
    assert switch is not None and switch.widget.checked is False
    tap(phone, CLOCK + "alarm_0730")
    assert phone.state.alarms == [Alarm(7, 30, enabled=True)]


def test_clock_tabs_switch_screens() -> None:
    phone = opened("clock", CLOCK + "tab_timer", CLOCK + "timer_5")
    assert "05:00" in texts(phone)
    tap(phone, CLOCK + "tab_clock")
    assert "London" in texts(phone)
    phone.apply(Action.press_back())  # tabs do not stack: BACK leaves the app
    assert phone.current_app == "launcher"


def test_keyboard_can_cover_the_save_button() -> None:
    phone = opened("clock", CLOCK + "add_alarm", keyboard_covers_content=True)
    type_text(phone, "5:15 AM")
    screen = phone.screen()
    assert screen.find(CLOCK + "save") is None and screen.find_hidden(CLOCK + "save") is not None
    phone.apply(Action.press_back())  # lowers the keyboard, keeps the editor and its text
    assert phone.route.screen == "edit" and phone.field_text(CLOCK + "time_field") == "5:15 AM"
    tap(phone, CLOCK + "save")
    assert Alarm(5, 15, enabled=True) in phone.state.alarms


def test_without_covering_the_page_shrinks_above_the_keyboard() -> None:
    phone = opened("notes", NOTES + "take_note", keyboard_covers_content=False)
    type_text(phone, "Call the bank")
    tap(phone, NOTES + "save")  # reachable with the keyboard up
    assert Note("Call the bank") in phone.state.notes


# -- contacts -------------------------------------------------------------------------------------
def test_create_contact_with_next_and_done_keys() -> None:
    phone = opened("contacts", CONTACTS + "create_contact")
    assert phone.focused_field == CONTACTS + "name_field"
    type_text(phone, "Ada  Lovelace ")
    phone.apply(Action.press_enter())  # "Next": on to the phone field
    assert phone.focused_field == CONTACTS + "phone_field"
    type_text(phone, "415-555-0100")
    phone.apply(Action.press_enter())  # "Done": saves
    assert Contact("Ada Lovelace", "415-555-0100") in phone.state.contacts
    assert phone.route == Route.of("contacts", "detail", name="Ada Lovelace")
    assert "415-555-0100" in texts(phone)


def test_contact_form_requires_a_name() -> None:
    phone = opened("contacts", CONTACTS + "create_contact", CONTACTS + "phone_field")
    count = len(phone.state.contacts)
    type_text(phone, "555-0100")
    phone.apply(Action.press_back())  # keyboard down so Save shows
    tap(phone, CONTACTS + "save")
    assert len(phone.state.contacts) == count
    assert phone.route.screen == "create" and "Enter a name" in texts(phone)


def test_contact_list_scrolls_to_the_last_contact() -> None:
    phone = opened("contacts")
    last = sorted(c.name for c in phone.state.contacts)[-1]
    row_id = CONTACTS + "contact_" + last.lower().replace(" ", "_")
    assert phone.screen().find(row_id) is None  # 15 contacts do not fit on one screen
    for _ in range(3):
        if phone.screen().find(row_id) is not None:
            break
        phone.apply(Action.swipe((0.8, 0.5), (0.2, 0.5)))
    assert phone.scroll[phone.route] > 0
    tap(phone, row_id)
    assert phone.route == Route.of("contacts", "detail", name=last)


def test_contact_card_message_button_opens_the_conversation() -> None:
    phone = make_phone()
    name = min(c.name for c in phone.state.contacts)  # first in the list
    open_app(phone, "contacts")
    tap(phone, CONTACTS + "contact_" + name.lower().replace(" ", "_"))
    tap(phone, CONTACTS + "message_button")
    assert phone.route == Route.of("messages", "conversation", recipient=name)
    phone.apply(Action.press_back())
    assert phone.route == Route.of("contacts", "detail", name=name)


# -- messages -------------------------------------------------------------------------------------
def test_start_chat_resolves_a_first_name_and_sends() -> None:
    phone = make_phone()
    phone.state.contacts.append(Contact("Rosa Diaz", "212-555-0199"))
    open_app(phone, "messages")
    tap(phone, MESSAGES + "start_chat")
    type_text(phone, "rosa")
    phone.apply(Action.press_enter())
    assert phone.route == Route.of("messages", "conversation", recipient="Rosa Diaz")
    assert phone.focused_field == MESSAGES + "compose"
    type_text(phone, " running   late ")
    phone.apply(Action.press_enter())
    assert phone.state.messages[-1] == Message("Rosa Diaz", "running late")
    assert phone.field_text(MESSAGES + "compose") == ""
    assert "running late" in texts(phone)


def test_send_button_in_an_existing_thread() -> None:
    phone = make_phone()
    recipient = phone.state.messages[0].recipient
    open_app(phone, "messages")
    tap(phone, MESSAGES + "thread_" + recipient.lower().replace(" ", "_"))
    tap(phone, MESSAGES + "compose")
    type_text(phone, "See you at 8")
    phone.apply(Action.press_back())  # lower the keyboard, then press Send
    tap(phone, MESSAGES + "send")
    assert phone.state.messages[-1] == Message(recipient, "See you at 8")


def test_to_field_takes_numbers_and_rejects_unknown_names() -> None:
    phone = make_phone()
    contact = phone.state.contacts[3]
    open_app(phone, "messages")
    tap(phone, MESSAGES + "start_chat")
    type_text(phone, "Nobody Known")
    phone.apply(Action.press_enter())
    assert phone.route.screen == "new"
    assert any("No contact" in t for t in texts(phone))
    tap(phone, MESSAGES + "to_field_clear")
    type_text(phone, contact.phone.replace("-", " "))  # a contact's number, spelled differently
    phone.apply(Action.press_enter())
    assert phone.route == Route.of("messages", "conversation", recipient=contact.name)
    phone.apply(Action.press_back())
    phone.apply(Action.press_back())
    tap(phone, MESSAGES + "start_chat")
    type_text(phone, "+1 (303) 555-0000")
    phone.apply(Action.press_enter())
    assert phone.route.param("recipient") == "+1 (303) 555-0000"


# -- notes ----------------------------------------------------------------------------------------
def test_take_note_saves_non_empty_text_only() -> None:
    phone = opened("notes")
    count = len(phone.state.notes)
    tap(phone, NOTES + "take_note")
    phone.apply(Action.press_enter())  # nothing typed: nothing saved
    assert len(phone.state.notes) == count and phone.route == Route.of("notes")
    tap(phone, NOTES + "take_note")
    type_text(phone, "  Buy milk and eggs ")
    phone.apply(Action.press_enter())
    assert phone.state.notes[-1] == Note("Buy milk and eggs")
    assert phone.route == Route.of("notes")
    assert texts(phone).count("Buy milk and eggs") == 1


def test_back_discards_a_draft_note() -> None:
    phone = opened("notes")
    before = list(phone.state.notes)
    tap(phone, NOTES + "take_note")
    type_text(phone, "draft")
    phone.apply(Action.press_back())
    phone.apply(Action.press_back())
    assert phone.route == Route.of("notes") and phone.state.notes == before


def test_editing_a_note_changes_it_and_emptying_deletes_it() -> None:
    phone = make_phone()
    phone.state.notes = [Note("old text")]
    open_app(phone, "notes")
    tap(phone, NOTES + "note_0")
    assert phone.field_text(NOTES + "note_field") == "old text"
    tap(phone, NOTES + "note_field_clear")
    type_text(phone, "new text")
    phone.apply(Action.press_enter())
    assert phone.state.notes == [Note("new text")]
    tap(phone, NOTES + "note_0")
    tap(phone, NOTES + "note_field_clear")
    phone.apply(Action.press_enter())
    assert phone.state.notes == []


# -- Play Store -----------------------------------------------------------------------------------
def test_install_from_top_charts_then_open() -> None:
    phone = make_phone()
    target = INSTALLABLE_APPS[-1]  # last in the charts: needs a scroll
    phone.state.installed_apps = []
    open_app(phone, "store")
    listing = STORE + "listing_" + target.name
    assert phone.screen().find(listing) is None
    phone.apply(Action.swipe((0.85, 0.5), (0.2, 0.5)))
    tap(phone, listing)
    assert target.label in texts(phone)
    tap(phone, STORE + "install_button")
    assert phone.state.installed_apps == [target.name]
    assert phone.screen().find(STORE + "install_button") is None
    tap(phone, STORE + "open_button")
    assert phone.current_app == target.name
    assert f"Welcome to {target.label}" in texts(phone)
    phone.apply(Action.press_home())
    assert phone.screen().find(LAUNCHER + f"icon_{target.name}") is not None


def test_store_search_finds_apps_by_name_and_category() -> None:
    phone = opened("store", STORE + "search_field")
    type_text(phone, "music")
    phone.apply(Action.press_enter())
    assert phone.route == Route.of("store", "search", query="music")
    assert {"Spotify", "Shazam"} <= set(texts(phone))
    tap(phone, STORE + "search_field_clear")
    type_text(phone, "no such app")
    phone.apply(Action.press_enter())
    assert any("No apps found" in t for t in texts(phone))


def test_there_are_enough_store_apps() -> None:
    assert len(INSTALLABLE_APPS) >= 12
    assert all(not app.preinstalled for app in INSTALLABLE_APPS)
    assert len({app.name for app in INSTALLABLE_APPS}) == len(INSTALLABLE_APPS)


# -- purity and the env ---------------------------------------------------------------------------
def test_building_pages_never_changes_state() -> None:
    phone = make_phone()
    name = phone.state.contacts[0].name
    routes = [
        Route.of("clock"), Route.of("clock", "edit", error="x"), Route.of("clock", "world"),
        Route.of("clock", "timer", minutes=5), Route.of("contacts"),
        Route.of("contacts", "detail", name=name), Route.of("contacts", "create"),
        Route.of("messages"), Route.of("messages", "new"),
        Route.of("messages", "conversation", recipient=name), Route.of("notes"),
        Route.of("notes", "edit", index=0), Route.of("store"),
        Route.of("store", "search", query="a"), Route.of("store", "app", app_name="zoom"),
        Route.of("zoom"), Route.of("zoom", "home"),
    ]  # fmt: skip
    before = copy.deepcopy(phone.state)
    for route in routes:
        phone.apps[route.app].build(phone, route)
        assert phone.state == before, f"building {route} changed the phone's state"


def test_a_message_task_through_the_env_with_real_actions() -> None:
    task = next(t for t in load_suite("general", "train") if t.spec["template"] == "send_message")
    env = PhoneSimEnv(PhoneSimConfig(dynamics=DynamicsConfig.none()), seed=0)
    obs = env.reset(task)
    name, text = task.spec["params"]["name"], task.spec["params"]["text"]

    def tap_element(resource_id: str) -> None:
        element = next(e for e in obs.elements if e.resource_id == resource_id)
        env.step(Action.tap(*element.center_yx))

    tap_element(LAUNCHER + "icon_messages")
    obs = env.observe()
    tap_element(MESSAGES + "start_chat")
    env.step(Action.type_text(name.upper()))
    env.step(Action.press_enter())
    env.step(Action.type_text(text.upper() + "  "))  # case and spacing do not matter
    _, reward, done, info = env.step(Action.press_enter())
    assert reward == 1.0 and done and info["success"]


# -- the suite ------------------------------------------------------------------------------------
def test_general_suite_has_enough_distinct_disjoint_instructions() -> None:
    train = {t.instruction for t in load_suite("general", "train")}
    test = {t.instruction for t in load_suite("general", "test")}
    assert len(train) >= 500 and len(test) >= 200
    assert not train & test


@pytest.mark.parametrize("key", ["name", "text", "app"])
def test_held_out_values_never_reach_train_instructions(key: str) -> None:
    """Values of a shared pool held out for test appear in no train task of any template."""
    mine = {t.name for t in GENERAL_TEMPLATES}

    def values(split: str) -> set[str]:
        return {
            str(t.spec["params"][key])
            for t in load_suite("general", split)
            if t.spec["template"] in mine and key in t.spec["params"]
        }

    held_out = values("test")
    assert held_out and not held_out & values("train")
