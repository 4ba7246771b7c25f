"""Templates of the ``general`` suite on the system apps (settings, clock, contacts, ...).

Every template with a value pool (people, times, texts, apps) splits it with ``split_values``
under a salt shared by all templates that draw from that pool, so a person, time, text or app held
out for the test split appears in no train instruction of any template. Success checks ignore case
and spacing (and quotes around a typed text), since an agent may type "Running late " for
"running late".
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable

import numpy as np

from distrl.core.action import Action
from distrl.envs.phonesim.apps import build_apps
from distrl.envs.phonesim.apps.clock import Clock, alarm_id
from distrl.envs.phonesim.apps.contacts import Contacts, find_contact, phone_digits
from distrl.envs.phonesim.apps.installable import INSTALLABLE_APPS
from distrl.envs.phonesim.apps.messages import Messages
from distrl.envs.phonesim.apps.notes import Notes
from distrl.envs.phonesim.apps.store import PlayStore
from distrl.envs.phonesim.expert import Expert
from distrl.envs.phonesim.phone import PhoneSim
from distrl.envs.phonesim.state import SETTING_LABELS, SETTINGS, Alarm, Contact, Message, Route
from distrl.envs.phonesim.tasks.base import Params, TaskTemplate, split_values
from distrl.envs.phonesim.world import CONTACT_NAMES, phone_number


class GeneralTemplate(TaskTemplate):
    """A template of the ``general`` suite."""

    suite = "general"


def app_step(
    expert: Expert, app_name: str, screen_step: Callable[[Route], Action | None]
) -> Action:
    """The expert's next action for a task inside one app: clear an interruption, open the app,
    then what ``screen_step`` says for the route shown. Where it has nothing to do (a screen off
    the path, such as one a random tap opened) BACK heads towards the app's main screen."""
    step = expert.interruption() or expert.open_app(app_name)
    if step is None:
        step = screen_step(expert.phone.route)
    return step or Action.press_back()


class ToggleSetting(GeneralTemplate):
    """Turn a quick setting on or off ("Turn on Wi-Fi")."""

    name = "toggle_setting"
    phrasings = (
        "Turn {state} {label}",
        "Switch {state} {label}",
        "Please turn {label} {state}",
        "Can you turn {state} {label} on my phone?",
        "Set {label} to {state}",
    )

    def sample_params(self, rng: np.random.Generator, split: str) -> Params:
        setting = SETTINGS[int(rng.integers(len(SETTINGS)))]
        value = bool(rng.random() < 0.5)
        return {
            "setting": setting,
            "value": value,
            "label": SETTING_LABELS[setting].lower().replace("wi-fi", "Wi-Fi"),
            "state": "on" if value else "off",
        }

    def setup(self, phone: PhoneSim, params: Params, rng: np.random.Generator) -> None:
        for setting in SETTINGS:
            phone.state.settings[setting] = bool(rng.random() < 0.5)
        phone.state.settings[params["setting"]] = not params["value"]

    def is_success(self, phone: PhoneSim, params: Params) -> bool:
        return phone.state.settings[params["setting"]] == params["value"]

    def expert_action(self, expert: Expert, params: Params) -> Action:
        switch = f"com.android.settings:id/switch_{params['setting']}"
        return app_step(
            expert,
            "settings",
            lambda _: expert.tap(switch) or expert.back_until(lambda r: r.screen == "main"),
        )


# -- shared pools and helpers --------------------------------------------------------------------
CLOCK, CONTACTS, MESSAGES, NOTES, STORE = Clock(), Contacts(), Messages(), Notes(), PlayStore()

#: Launcher apps by name with their labels (system apps and store apps alike).
APP_LABELS: dict[str, str] = {
    name: app.label for name, app in build_apps().items() if app.on_home_screen
}
STORE_APP_NAMES: tuple[str, ...] = tuple(app.name for app in INSTALLABLE_APPS)
ALARM_TIMES: tuple[tuple[int, int], ...] = tuple(
    (hour, minute) for hour in range(24) for minute in range(0, 60, 5)
)

MESSAGE_TEXTS: tuple[str, ...] = (
    "running late", "on my way", "see you soon", "call me when you can", "happy birthday!",
    "dinner is ready", "I'll be there in 10 minutes", "can we reschedule?", "thanks for today",
    "good luck with the interview", "the meeting moved to 3 pm", "don't forget the tickets",
    "where are you?", "let's grab coffee tomorrow", "the package arrived", "traffic is terrible",
    "see you at the gym", "can you pick up milk?", "congrats on the new job",
    "what time is the party?", "just landed", "heading home now", "good night",
    "feel better soon", "the door code is 4512", "lunch at noon?", "I'm outside",
    "call you later", "are you free this weekend?", "miss you already", "leaving the office now",
    "parking is full, be there soon", "can I borrow your ladder?", "movie starts at 8",
    "thanks for the gift", "the kids are asleep",
)  # fmt: skip

NOTE_TEXTS: tuple[str, ...] = (
    "Buy milk and eggs", "Call the dentist on Monday", "Book flights to Denver",
    "Pick up dry cleaning", "Gym at 6 pm", "Renew passport", "Water the plants",
    "Pay the electricity bill", "Return library books", "Plan mom's birthday party",
    "Order new running shoes", "Cancel the gym trial", "Email the landlord about the heater",
    "Schedule car inspection", "Buy a birthday card for Sam", "Try the new pizza place",
    "Backup laptop photos", "Send the invoice to Acme", "Read chapter 4 before class",
    "Pack sunscreen for the trip", "Fix the bike tire", "Meal prep on Sunday",
    "Check flight status", "Buy batteries for the smoke alarm", "Call grandma",
    "Donate old clothes", "Update my resume", "Refill prescription",
    "Clean out the garage", "Find a plumber", "Print boarding passes", "Feed the neighbor's cat",
    "Book a haircut", "Get coffee beans", "Pick up the kids at 3", "Renew car insurance",
)  # fmt: skip

#: What a setup adds when a conversation the task needs does not exist yet.
OPENING_TEXTS: tuple[str, ...] = (
    "Hey, are you free later?",
    "Call me when you get this",
    "Did you get my email?",
    "Thanks again for yesterday!",
    "Are you coming on Friday?",
)


def normalize(text: str) -> str:
    """``text`` compared the way a person would: case, spacing and surrounding quotes ignored."""
    return " ".join(text.split()).strip("\"'").strip().casefold()


def pick(rng: np.random.Generator, values: list) -> object:
    return values[int(rng.integers(len(values)))]


def contact_param(rng: np.random.Generator, split: str) -> str:
    """A person for ``split``: held-out names appear in no train instruction of any template."""
    return str(pick(rng, split_values(CONTACT_NAMES, split, "contact_name")))


def ensure_contact(phone: PhoneSim, name: str, rng: np.random.Generator) -> Contact:
    """The contact called ``name``, created with a fresh number when the phone lacks it."""
    contact = find_contact(phone.state.contacts, name)
    if contact is None:
        contact = Contact(name, phone_number(rng))
        phone.state.contacts.append(contact)
    return contact


def shows(phone: PhoneSim, app: str, screen: str, key: str, name: str) -> bool:
    """The phone shows ``app``'s ``screen`` about ``name`` (its route's ``key`` names them)."""
    route = phone.route
    return (
        route.app == app
        and route.screen == screen
        and normalize(route.param(key, "")) == normalize(name)
    )


def conversation_open_with(phone: PhoneSim, name: str) -> bool:
    return shows(phone, MESSAGES.name, "conversation", "recipient", name)


# -- apps ---------------------------------------------------------------------------------------
def install_step(expert: Expert, app_name: str) -> Action:
    """The next step of installing ``app_name`` from the Play Store's top charts."""

    def on_screen(route: Route) -> Action | None:
        if route.screen == "app":  # another app's page: BACK to the charts
            return (
                expert.tap(STORE.rid("install_button"))
                if route.param("app_name") == app_name
                else None
            )
        return expert.tap(STORE.listing_id(app_name))

    return app_step(expert, STORE.name, on_screen)


class OpenApp(GeneralTemplate):
    """Open an app from the home screen ("Open the Clock app"); store apps are installed first."""

    name = "open_app"
    phrasings = (
        "Open the {label} app",
        "Launch {label}",
        "Go to {label}",
        "Start the {label} app",
        "Open {label}",
        "Show me the {label} app",
        "Can you open {label} for me?",
    )

    def sample_params(self, rng: np.random.Generator, split: str) -> Params:
        app = str(pick(rng, split_values(sorted(APP_LABELS), split, "app_name")))
        return {"app": app, "label": APP_LABELS[app]}

    def setup(self, phone: PhoneSim, params: Params, rng: np.random.Generator) -> None:
        app = phone.apps[params["app"]]
        if not app.preinstalled and app.name not in phone.state.installed_apps:
            phone.state.installed_apps.append(app.name)

    def is_success(self, phone: PhoneSim, params: Params) -> bool:
        return phone.current_app == params["app"]

    def expert_action(self, expert: Expert, params: Params) -> Action:
        app = expert.phone.apps[params["app"]]
        if not app.preinstalled and app.name not in expert.phone.state.installed_apps:
            return install_step(expert, app.name)  # uninstalled since: get it back first
        return expert.interruption() or expert.open_app(app.name) or Action.press_home()


class InstallApp(GeneralTemplate):
    """Install a store app from the Play Store ("Install Spotify")."""

    name = "install_app"
    phrasings = (
        "Install {label}",
        "Download {label} from the Play Store",
        "Get the {label} app",
        "Install the {label} app on my phone",
        "Find {label} in the Play Store and install it",
        "I want {label} on my phone",
        "Can you install {label} for me?",
    )

    def sample_params(self, rng: np.random.Generator, split: str) -> Params:
        app = str(pick(rng, split_values(STORE_APP_NAMES, split, "app_name")))
        return {"app": app, "label": APP_LABELS[app]}

    def setup(self, phone: PhoneSim, params: Params, rng: np.random.Generator) -> None:
        if params["app"] in phone.state.installed_apps:
            phone.state.installed_apps.remove(params["app"])

    def is_success(self, phone: PhoneSim, params: Params) -> bool:
        return params["app"] in phone.state.installed_apps

    def expert_action(self, expert: Expert, params: Params) -> Action:
        return install_step(expert, params["app"])


# -- clock --------------------------------------------------------------------------------------
def alarm_time_param(rng: np.random.Generator, split: str) -> tuple[int, int]:
    label = str(
        pick(rng, split_values([f"{h}:{m:02d}" for h, m in ALARM_TIMES], split, "alarm_time"))
    )
    hour, minute = label.split(":")
    return int(hour), int(minute)


class AlarmTemplate(GeneralTemplate):
    """A task about the alarm at one time, written in the instruction as :meth:`time_text` says."""

    def sample_params(self, rng: np.random.Generator, split: str) -> Params:
        hour, minute = alarm_time_param(rng, split)
        return {"hour": hour, "minute": minute, "time": self.time_text(rng, hour, minute)}

    def time_text(self, rng: np.random.Generator, hour: int, minute: int) -> str:
        """How the instruction writes the time (the label as the Clock app shows it by default)."""
        return Alarm(hour, minute).label

    @staticmethod
    def alarm_on(phone: PhoneSim, params: Params) -> bool:
        """Some alarm at the task's time is switched on."""
        wanted = (params["hour"], params["minute"])
        return any(a.enabled and (a.hour, a.minute) == wanted for a in phone.state.alarms)


class SetAlarm(AlarmTemplate):
    """Add an alarm ("Set an alarm for 6:45 AM"), the time written as 6:45 AM, 6:45am or 18:45."""

    name = "set_alarm"
    phrasings = (
        "Set an alarm for {time}",
        "Wake me up at {time}",
        "Create an alarm at {time}",
        "Add an alarm for {time}",
        "I need an alarm at {time}",
        "Set my alarm to {time} please",
        "Can you set an alarm for {time}?",
    )

    def time_text(self, rng: np.random.Generator, hour: int, minute: int) -> str:
        label = Alarm(hour, minute).label
        style = int(rng.integers(4))
        return (label, label, label.replace(" ", "").lower(), f"{hour:02d}:{minute:02d}")[style]

    def setup(self, phone: PhoneSim, params: Params, rng: np.random.Generator) -> None:
        wanted = (params["hour"], params["minute"])
        phone.state.alarms = [a for a in phone.state.alarms if (a.hour, a.minute) != wanted]

    def is_success(self, phone: PhoneSim, params: Params) -> bool:
        return self.alarm_on(phone, params)

    def expert_action(self, expert: Expert, params: Params) -> Action:
        label = Alarm(params["hour"], params["minute"]).label

        def on_screen(route: Route) -> Action | None:
            if route.screen == "edit":
                return expert.fill(CLOCK.rid("time_field"), label, submit=True)
            return expert.tap(CLOCK.rid("add_alarm")) or expert.tap(CLOCK.rid("tab_alarm"))

        return app_step(expert, CLOCK.name, on_screen)


class DisableAlarm(AlarmTemplate):
    """Switch off an alarm that is on ("Turn off my 7:30 AM alarm")."""

    name = "disable_alarm"
    phrasings = (
        "Turn off my {time} alarm",
        "Disable the {time} alarm",
        "Switch off the alarm set for {time}",
        "I don't need the {time} alarm tomorrow, turn it off",
        "Deactivate my {time} alarm",
        "Turn the {time} alarm off",
    )

    def time_text(self, rng: np.random.Generator, hour: int, minute: int) -> str:
        label = Alarm(hour, minute).label
        return label if rng.random() < 0.75 else label.replace(" ", "").lower()

    def setup(self, phone: PhoneSim, params: Params, rng: np.random.Generator) -> None:
        wanted = (params["hour"], params["minute"])
        for alarm in phone.state.alarms:
            if (alarm.hour, alarm.minute) == wanted:
                alarm.enabled = True
                return
        phone.state.alarms.append(Alarm(*wanted, enabled=True))

    def is_success(self, phone: PhoneSim, params: Params) -> bool:
        return not self.alarm_on(phone, params)

    def expert_action(self, expert: Expert, params: Params) -> Action:
        switch = CLOCK.rid(alarm_id(params["hour"], params["minute"]))
        return app_step(
            expert, CLOCK.name, lambda _: expert.tap(switch) or expert.tap(CLOCK.rid("tab_alarm"))
        )


# -- contacts -----------------------------------------------------------------------------------
class AddContact(GeneralTemplate):
    """Create a contact with a name and number ("Add a contact named Ana Ruiz, 415-555-0101")."""

    name = "add_contact"
    phrasings = (
        "Add a contact named {name} with the number {number}",
        "Create a new contact: {name}, {number}",
        "Save {number} as {name} in my contacts",
        "Add {name} to my contacts, phone number {number}",
        "Make a contact for {name} with phone {number}",
        "Store {name}'s number {number} in Contacts",
        "New contact {name}, mobile {number}",
    )

    def sample_params(self, rng: np.random.Generator, split: str) -> Params:
        return {"name": contact_param(rng, split), "number": phone_number(rng)}

    def setup(self, phone: PhoneSim, params: Params, rng: np.random.Generator) -> None:
        wanted = normalize(params["name"])
        phone.state.contacts = [c for c in phone.state.contacts if normalize(c.name) != wanted]

    def is_success(self, phone: PhoneSim, params: Params) -> bool:
        wanted = (normalize(params["name"]), phone_digits(params["number"]))
        return any(
            (normalize(c.name), phone_digits(c.phone)) == wanted for c in phone.state.contacts
        )

    def expert_action(self, expert: Expert, params: Params) -> Action:
        def on_screen(route: Route) -> Action | None:
            if route.screen == "create":
                return expert.fill(CONTACTS.rid("name_field"), params["name"], submit=False) or (
                    expert.fill(CONTACTS.rid("phone_field"), params["number"], submit=True)
                )
            return expert.tap(CONTACTS.rid("create_contact")) if route.screen == "main" else None

        return app_step(expert, CONTACTS.name, on_screen)


class ShowContactScreen(GeneralTemplate):
    """Show an app's screen about one contact, which a tap on the contact's row in the app's main
    list opens. Subclasses say which app, screen and route parameter, and the row's id."""

    app = ""
    screen = ""
    route_key = ""

    @abstractmethod
    def row_id(self, name: str) -> str:
        """The resource id of ``name``'s row on the app's main screen."""

    def sample_params(self, rng: np.random.Generator, split: str) -> Params:
        return {"name": contact_param(rng, split)}

    def is_success(self, phone: PhoneSim, params: Params) -> bool:
        return shows(phone, self.app, self.screen, self.route_key, params["name"])

    def expert_action(self, expert: Expert, params: Params) -> Action:
        row = self.row_id(params["name"])
        return app_step(
            expert, self.app, lambda route: expert.tap(row) if route.screen == "main" else None
        )


class LookupContact(ShowContactScreen):
    """Show a contact's card ("Look up Alice Smith's phone number")."""

    name = "lookup_contact"
    app, screen, route_key = CONTACTS.name, "detail", "name"
    row_id = staticmethod(CONTACTS.contact_id)
    phrasings = (
        "Show me {name}'s contact details",
        "Find {name} in my contacts",
        "Look up {name}'s phone number",
        "Open the contact card for {name}",
        "Pull up {name} in Contacts",
        "What is {name}'s phone number?",
        "Open {name}'s contact",
    )

    def setup(self, phone: PhoneSim, params: Params, rng: np.random.Generator) -> None:
        ensure_contact(phone, params["name"], rng)


# -- messages -----------------------------------------------------------------------------------
class SendMessage(GeneralTemplate):
    """Text a contact ("Send a message to Alice Smith saying 'running late'")."""

    name = "send_message"
    phrasings = (
        'Send a message to {name} saying "{text}"',
        "Text {name}: {text}",
        'Message {name} "{text}"',
        'Send {name} a text that says "{text}"',
        'Tell {name} "{text}" in Messages',
        'Write "{text}" to {name} in a text message',
        "Let {name} know by SMS: {text}",
    )

    def sample_params(self, rng: np.random.Generator, split: str) -> Params:
        text = str(pick(rng, split_values(MESSAGE_TEXTS, split, "message_text")))
        return {"name": contact_param(rng, split), "text": text}

    def setup(self, phone: PhoneSim, params: Params, rng: np.random.Generator) -> None:
        ensure_contact(phone, params["name"], rng)
        phone.state.messages = [m for m in phone.state.messages if not self._matches(m, params)]

    @staticmethod
    def _matches(message: Message, params: Params) -> bool:
        return (
            not message.incoming
            and normalize(message.recipient) == normalize(params["name"])
            and normalize(message.text) == normalize(params["text"])
        )

    def is_success(self, phone: PhoneSim, params: Params) -> bool:
        return any(self._matches(m, params) for m in phone.state.messages)

    def expert_action(self, expert: Expert, params: Params) -> Action:
        name = params["name"]

        def on_screen(route: Route) -> Action | None:
            if conversation_open_with(expert.phone, name):
                return expert.fill(MESSAGES.rid("compose"), params["text"], submit=True)
            if route.screen == "new":
                return expert.fill(MESSAGES.rid("to_field"), name, submit=True)
            if route.screen == "main":
                return expert.tap(MESSAGES.thread_id(name)) or expert.tap(
                    MESSAGES.rid("start_chat")
                )
            return None

        return app_step(expert, MESSAGES.name, on_screen)


class OpenConversation(ShowContactScreen):
    """Show the conversation with a contact ("Show my messages with Ben Carter")."""

    name = "open_conversation"
    app, screen, route_key = MESSAGES.name, "conversation", "recipient"
    row_id = staticmethod(MESSAGES.thread_id)
    phrasings = (
        "Show my messages with {name}",
        "Open my conversation with {name}",
        "Open the chat with {name} in Messages",
        "Let me see my texts with {name}",
        "Go to my message thread with {name}",
        "Pull up my text conversation with {name}",
        "What did {name} text me? Open the chat",
    )

    def setup(self, phone: PhoneSim, params: Params, rng: np.random.Generator) -> None:
        contact = ensure_contact(phone, params["name"], rng)
        messages = phone.state.messages
        if not any(m.recipient == contact.name for m in messages):
            text = OPENING_TEXTS[int(rng.integers(len(OPENING_TEXTS)))]
            # Anywhere in the history, so the thread is not always the newest one.
            messages.insert(
                int(rng.integers(len(messages) + 1)), Message(contact.name, text, incoming=True)
            )


# -- notes --------------------------------------------------------------------------------------
class CreateNote(GeneralTemplate):
    """Write a note ("Take a note: buy milk and eggs")."""

    name = "create_note"
    phrasings = (
        "Take a note: {text}",
        'Create a note that says "{text}"',
        'Write down "{text}" in my notes',
        "Make a new note: {text}",
        'Add a note saying "{text}"',
        'Jot down "{text}"',
        'Save a note with the text "{text}"',
    )

    def sample_params(self, rng: np.random.Generator, split: str) -> Params:
        return {"text": str(pick(rng, split_values(NOTE_TEXTS, split, "note_text")))}

    def setup(self, phone: PhoneSim, params: Params, rng: np.random.Generator) -> None:
        wanted = normalize(params["text"])
        phone.state.notes = [n for n in phone.state.notes if normalize(n.text) != wanted]

    def is_success(self, phone: PhoneSim, params: Params) -> bool:
        wanted = normalize(params["text"])
        return any(normalize(n.text) == wanted for n in phone.state.notes)

    def expert_action(self, expert: Expert, params: Params) -> Action:
        def on_screen(route: Route) -> Action | None:
            if (
                route.screen == "edit" and route.param("index") is None
            ):  # a new note, not an old one
                return expert.fill(NOTES.rid("note_field"), params["text"], submit=True)
            return expert.tap(NOTES.rid("take_note")) if route.screen == "main" else None

        return app_step(expert, NOTES.name, on_screen)


GENERAL_TEMPLATES: tuple[TaskTemplate, ...] = (
    ToggleSetting(),
    OpenApp(),
    InstallApp(),
    SetAlarm(),
    DisableAlarm(),
    AddContact(),
    LookupContact(),
    SendMessage(),
    OpenConversation(),
    CreateNote(),
)
