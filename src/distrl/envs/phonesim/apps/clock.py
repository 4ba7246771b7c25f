"""Clock: alarms (list with on/off switches, an editor that takes a typed time), world clock, timer.

The alarm editor takes the time as text ("7:30", "07:30", "7:30 AM", "19:30", "7:30pm"), which
an agent types in one action; input it cannot read shows an error and keeps the editor open.
ENTER in the time field saves, as the keyboard's "Done" key does on Android; the Save button
does the same but sits at the bottom, where the keyboard may cover it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from distrl.envs.phonesim.apps.base import MUTED_COLOR, App
from distrl.envs.phonesim.state import Alarm, Route
from distrl.envs.phonesim.widgets import Page, Row, Widget, row

if TYPE_CHECKING:
    from distrl.envs.phonesim.phone import PhoneSim

TIME_ERROR = "Enter a time like 7:30 AM or 19:30"
TABS = (("main", "Alarm"), ("world", "Clock"), ("timer", "Timer"))
#: The world clock, for a phone whose local time (the status bar's 9:41) is US Pacific.
WORLD_CLOCKS = (("New York", "12:41 PM"), ("London", "5:41 PM"), ("Tokyo", "1:41 AM, tomorrow"))
TIMER_PRESETS = (1, 5, 10, 15)

_TIME = re.compile(r"^\s*(\d{1,2})\s*(?:[:.]\s*(\d{2}))?\s*(?:([ap])\.?\s*m\.?)?\s*$", re.I)


def parse_time(text: str) -> tuple[int, int] | None:
    """``(hour, minute)`` on the 24-hour clock, or ``None`` for text that is not a time.

    >>> parse_time("7:30pm"), parse_time("07:30"), parse_time("12:05 AM"), parse_time("25:00")
    ((19, 30), (7, 30), (0, 5), None)
    """
    match = _TIME.match(text)
    if match is None:
        return None
    hour, minute, meridiem = match.group(1), match.group(2), match.group(3)
    if minute is None and meridiem is None:
        return None  # a bare "7" is more likely a typo than seven o'clock
    h, m = int(hour), int(minute or 0)
    if m > 59:
        return None
    if meridiem is None:
        return (h, m) if h <= 23 else None
    if not 1 <= h <= 12:
        return None
    return (h % 12 + (12 if meridiem.lower() == "p" else 0), m)


def alarm_id(hour: int, minute: int) -> str:
    """The resource-id name of the switch of the alarm at ``hour:minute``."""
    return f"alarm_{hour:02d}{minute:02d}"


class Clock(App):
    """Alarms with on/off switches and a typed-time editor; world clock and timer tabs."""

    name = "clock"
    label = "Clock"
    package = "com.google.android.deskclock"
    icon_color = (66, 133, 244)
    popups = ("notifications",)

    # -- handlers -------------------------------------------------------------------------------
    def save_alarm(self, phone: PhoneSim, text: str) -> None:
        """Add the alarm typed in the editor (or switch on an existing one at that time)."""
        parsed = parse_time(text)
        if parsed is None:
            self.show_error(phone, TIME_ERROR)
            return
        hour, minute = parsed
        for alarm in phone.state.alarms:
            if (alarm.hour, alarm.minute) == (hour, minute):
                alarm.enabled = True
                break
        else:
            phone.state.alarms.append(Alarm(hour, minute, enabled=True))
        self.close_screen(phone)

    def toggle_alarm(self, phone: PhoneSim, hour: int, minute: int) -> None:
        for alarm in phone.state.alarms:
            if (alarm.hour, alarm.minute) == (hour, minute):
                alarm.enabled = not alarm.enabled
                return

    def open_editor(self, phone: PhoneSim) -> None:
        phone.push(Route.of(self.name, "edit"))
        phone.focus(self.rid("time_field"))  # the keyboard comes up with the editor

    # -- pages ----------------------------------------------------------------------------------
    def build(self, phone: PhoneSim, route: Route) -> Page:
        if route.screen == "edit":
            return self._editor(phone, route)
        if route.screen == "world":
            return self._world(phone)
        if route.screen == "timer":
            return self._timer(phone, route)
        return self._alarms(phone)

    def _tabs(self, phone: PhoneSim, current: str) -> Row:
        tabs = []
        for screen, text in TABS:
            kind = "button" if screen == current else "chip"
            tabs.append(
                Widget(
                    kind,
                    text,
                    self.rid(f"tab_{text.lower()}"),
                    on_tap=lambda s=screen: phone.replace(Route.of(self.name, s)),
                )
            )
        return row(*tabs)

    def _alarms(self, phone: PhoneSim) -> Page:
        body: list[Row] = []
        seen: set[str] = set()
        for alarm in sorted(phone.state.alarms, key=lambda a: (a.hour, a.minute)):
            resource = alarm_id(alarm.hour, alarm.minute)
            if resource in seen:
                continue  # one switch per time; saving an existing time re-enables it
            seen.add(resource)
            body.append(
                row(
                    Widget(
                        "toggle",
                        alarm.label,
                        self.rid(resource),
                        checked=alarm.enabled,
                        on_tap=lambda h=alarm.hour, m=alarm.minute: self.toggle_alarm(phone, h, m),
                    ),
                    height=1.3,
                )
            )
        footer = self.button_footer("+ Add alarm", "add_alarm", lambda: self.open_editor(phone))
        header = [self._tabs(phone, "main")]
        return self.list_page("Clock", body, "No alarms", header=header, footer=footer)

    def _editor(self, phone: PhoneSim, route: Route) -> Page:
        field_id = self.rid("time_field")
        body = [
            row(Widget("text", "Alarm time", self.rid("time_label"))),
            row(
                self.field(
                    "time_field",
                    "Hour:minute, e.g. 7:30 AM",
                    lambda text: self.save_alarm(phone, text),
                )
            ),
            *self.error_rows(route),
            self.muted("Examples: 6:45 AM, 19:30, 7:30pm", "hint"),
        ]
        return self.editor_page(
            phone, "Add alarm", body, lambda: self.save_alarm(phone, phone.field_text(field_id))
        )

    def _world(self, phone: PhoneSim) -> Page:
        body = [
            row(Widget("title", "9:41 AM", self.rid("local_time")), height=1.5),
            self.muted("Tuesday, May 21 - Los Angeles", "local_date"),
        ]
        for city, time in WORLD_CLOCKS:
            body.append(
                row(
                    Widget(
                        "item", city, self.rid("city_" + city.split()[0].lower()), subtitle=time
                    ),
                    height=1.2,
                )
            )
        return self.page("Clock", body, header=[self._tabs(phone, "world")])

    def _timer(self, phone: PhoneSim, route: Route) -> Page:
        minutes = int(route.param("minutes", 0))
        shown = f"{minutes:02d}:00" if minutes else "00:00"
        body = [
            row(Widget("title", shown, self.rid("timer_display")), height=1.5),
            self.muted("Running" if minutes else "Pick a duration", "timer_state"),
        ]
        if minutes:
            body.append(
                row(
                    Widget(
                        "button",
                        "Cancel timer",
                        self.rid("timer_cancel"),
                        color=MUTED_COLOR,
                        on_tap=lambda: phone.replace(Route.of(self.name, "timer")),
                    )
                )
            )
        else:
            body.append(
                row(
                    *(
                        Widget(
                            "chip",
                            f"{m} min",
                            self.rid(f"timer_{m}"),
                            on_tap=lambda m=m: phone.replace(
                                Route.of(self.name, "timer", minutes=m)
                            ),
                        )
                        for m in TIMER_PRESETS
                    )
                )
            )
        return self.page("Clock", body, header=[self._tabs(phone, "timer")])
