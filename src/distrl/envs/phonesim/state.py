"""The simulated phone's persistent data: what tasks change and what success is judged from.

Everything an app stores lives here as plain dataclasses, so a task's success check reads state
directly (never pixels) and a test can set up any situation in one line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SETTINGS = ("wifi", "bluetooth", "airplane_mode", "dark_mode", "location", "do_not_disturb")
SETTING_LABELS = {
    "wifi": "Wi-Fi",
    "bluetooth": "Bluetooth",
    "airplane_mode": "Airplane mode",
    "dark_mode": "Dark theme",
    "location": "Location",
    "do_not_disturb": "Do not disturb",
}


@dataclass
class Alarm:
    hour: int  # 0..23
    minute: int
    enabled: bool = True

    @property
    def label(self) -> str:
        suffix = "AM" if self.hour < 12 else "PM"
        hour12 = self.hour % 12 or 12
        return f"{hour12}:{self.minute:02d} {suffix}"


@dataclass
class Contact:
    name: str
    phone: str


@dataclass
class Message:
    recipient: str  # a contact name or a phone number
    text: str
    #: Received from ``recipient`` rather than sent to them (tasks judge only sent messages).
    incoming: bool = False


@dataclass
class Note:
    text: str


@dataclass(frozen=True)
class Route:
    """One screen on the navigation stack: an app, a screen name and its parameters."""

    app: str
    screen: str = "main"
    params: tuple[tuple[str, Any], ...] = ()

    def param(self, name: str, default: Any = None) -> Any:
        return dict(self.params).get(name, default)

    @classmethod
    def of(cls, app: str, screen: str = "main", **params: Any) -> Route:
        return cls(app, screen, tuple(sorted(params.items())))


@dataclass
class PhoneState:
    """All app data on the phone. Mutated only by app handlers (i.e. by actions)."""

    settings: dict[str, bool] = field(default_factory=lambda: dict.fromkeys(SETTINGS, False))
    alarms: list[Alarm] = field(default_factory=list)
    contacts: list[Contact] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    installed_apps: list[str] = field(default_factory=list)
    #: site domain -> product ids in its cart, in the order added.
    carts: dict[str, list[str]] = field(default_factory=dict)
    #: Every URL the browser finished loading this episode, in order.
    browser_history: list[str] = field(default_factory=list)
