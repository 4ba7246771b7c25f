"""The data a fresh phone starts with: contacts, message threads, notes, alarms, a few store apps.

Drawn from the episode's generator, so every episode's phone differs yet replays from its seed.
The pools are module constants so task templates can split them into train and test values (a
test instruction then names a person, a text or a note the train split never mentions).
"""

from __future__ import annotations

import numpy as np

from distrl.envs.phonesim.apps.installable import INSTALLABLE_APPS
from distrl.envs.phonesim.state import Alarm, Contact, Message, Note, PhoneState

#: Full names; every first name is distinct, so a first name alone identifies a contact.
CONTACT_NAMES: tuple[str, ...] = (
    "Alice Smith", "Ben Carter", "Chloe Nguyen", "Daniel Kim", "Emma Johnson", "Felix Wagner",
    "Grace Lee", "Hannah Brown", "Isaac Patel", "Julia Rossi", "Kevin Brennan", "Laura Martin",
    "Marcus Green", "Nina Alvarez", "Oliver Scott", "Priya Sharma", "Quentin Moreau",
    "Rachel Adams", "Samuel Ortiz", "Tara Wilson", "Umar Haddad", "Victoria Chen",
    "William Foster", "Xavier Dubois", "Yuki Tanaka", "Zoe Campbell", "Aaron Mitchell",
    "Bianca Lopez", "Carlos Mendes", "Diana Fischer", "Ethan Hughes", "Fatima Khan",
    "George Evans", "Helen Park", "Ivan Petrov", "Jasmine Reed", "Kai Yamamoto", "Leo Bianchi",
    "Maya Cohen", "Noah Turner", "Olivia Baker", "Pablo Ruiz", "Ruby Collins", "Sofia Novak",
    "Thomas Wright", "Uma Reddy", "Victor Hale", "Wendy Lin", "Yara Saleh", "Zach Morgan",
    "Amelia Ward", "Bruno Costa", "Clara Schmidt", "Dylan Price", "Elena Popescu", "Finn Murphy",
    "Gabriel Silva", "Hugo Laurent", "Iris Jansen", "Jonah Fields",
)  # fmt: skip

AREA_CODES: tuple[str, ...] = ("212", "303", "312", "415", "503", "617", "646", "702", "808")

#: Short conversations a phone starts with: (received?, text) in order.
THREAD_SCRIPTS: tuple[tuple[tuple[bool, str], ...], ...] = (
    ((True, "Are we still on for lunch tomorrow?"), (False, "Yes! 12:30 at the usual place")),
    ((True, "Can you send me the photos from Saturday?"),),
    ((False, "Happy birthday!!"), (True, "Thank you so much!")),
    ((True, "Running 10 minutes late, sorry"), (False, "No worries")),
    ((True, "Did you see the game last night?"), (False, "Yes, what a finish"),
     (True, "Unbelievable")),
    ((False, "I left the keys under the mat"), (True, "Got them, thanks")),
    ((True, "Don't forget the meeting at 3"),),
    ((True, "The concert tickets are booked"), (False, "Amazing, can't wait")),
    ((False, "Can you water my plants this weekend?"), (True, "Sure, no problem")),
)  # fmt: skip

#: Notes a phone starts with (templates use their own note texts, see tasks/general.py).
STARTING_NOTES: tuple[str, ...] = (
    "Wi-Fi password for the cabin: sunflower42",
    "Gift ideas: scarf, cookbook, headphones",
    "Packing list: charger, passport, adapters",
    "Books to read: Dune, Circe, The Overstory",
    "Car service due in June",
    "Recipe: lemon pasta with garlic and basil",
    "Ideas for the garden: tomatoes, mint, lavender",
)

CONTACTS_PER_PHONE = 15
THREADS_PER_PHONE = (3, 5)
NOTES_PER_PHONE = (2, 4)
STORE_APPS_PER_PHONE = (0, 3)


def phone_number(rng: np.random.Generator) -> str:
    """A US-style number such as ``415-555-0134`` (555 numbers are reserved for fiction)."""
    area = AREA_CODES[int(rng.integers(len(AREA_CODES)))]
    return f"{area}-555-{int(rng.integers(100, 10000)):04d}"


def populate_world(state: PhoneState, rng: np.random.Generator) -> None:
    """Fill a fresh phone with contacts, message threads, notes, two alarms and a few apps."""
    picks = rng.choice(len(CONTACT_NAMES), size=CONTACTS_PER_PHONE, replace=False)
    names = [CONTACT_NAMES[int(i)] for i in picks]
    state.contacts = [Contact(name, phone_number(rng)) for name in names]

    threads = int(rng.integers(THREADS_PER_PHONE[0], THREADS_PER_PHONE[1] + 1))
    scripts = rng.choice(len(THREAD_SCRIPTS), size=threads, replace=False)
    state.messages = [
        Message(name, text, incoming=incoming)
        for name, script in zip(names, scripts, strict=False)
        for incoming, text in THREAD_SCRIPTS[int(script)]
    ]

    count = int(rng.integers(NOTES_PER_PHONE[0], NOTES_PER_PHONE[1] + 1))
    state.notes = [
        Note(STARTING_NOTES[int(i)])
        for i in rng.choice(len(STARTING_NOTES), size=count, replace=False)
    ]

    # A weekday alarm that is on and a weekend one that is off, as most phones have.
    wake = Alarm(int(rng.integers(5, 9)), int(rng.choice([0, 15, 30, 45])), enabled=True)
    weekend = Alarm(int(rng.integers(9, 11)), int(rng.choice([0, 30])), enabled=False)
    state.alarms = [wake, weekend]

    count = int(rng.integers(STORE_APPS_PER_PHONE[0], STORE_APPS_PER_PHONE[1] + 1))
    chosen = rng.choice(len(INSTALLABLE_APPS), size=count, replace=False)
    state.installed_apps = [INSTALLABLE_APPS[int(i)].name for i in chosen]
