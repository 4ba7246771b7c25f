"""Messages: conversations by recipient, a conversation screen and a "Start chat" screen.

A conversation is every message to or from one recipient (a contact's name, or a number that no
contact has). "Start chat" opens a "To" field with the keyboard up: ENTER resolves what was typed
to a contact (full name, first name or number) or a raw number and opens that conversation with
the compose field focused; ENTER in the compose field sends, like the keyboard's send key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from distrl.envs.phonesim.apps.base import App, slug
from distrl.envs.phonesim.apps.contacts import avatar_color, find_contact, phone_digits
from distrl.envs.phonesim.state import Message, PhoneState, Route
from distrl.envs.phonesim.widgets import Page, Row, Widget, row

if TYPE_CHECKING:
    from distrl.envs.phonesim.phone import PhoneSim

_NUMBER_CHARS = frozenset("0123456789+-(). ")


def threads(state: PhoneState) -> list[tuple[str, Message]]:
    """``(recipient, last message)`` per conversation, most recent first."""
    last: dict[str, Message] = {}
    for message in state.messages:
        last.pop(message.recipient, None)  # re-insert so dict order follows recency
        last[message.recipient] = message
    return list(reversed(last.items()))


def resolve_recipient(state: PhoneState, text: str) -> str | None:
    """The recipient ``text`` names: a contact (by full name, unique first name or number), or
    the number itself when no contact has it; ``None`` when it is neither."""
    query = " ".join(text.split()).casefold()
    if not query:
        return None
    contact = find_contact(state.contacts, text)
    if contact is not None:
        return contact.name
    by_first = [c for c in state.contacts if c.name.casefold().split()[:1] == [query]]
    if len(by_first) == 1:
        return by_first[0].name
    number = phone_digits(text)
    if len(number) >= 3 and set(text.strip()) <= _NUMBER_CHARS:
        for contact in state.contacts:
            if phone_digits(contact.phone) == number:
                return contact.name
        return text.strip()
    return None


class Messages(App):
    """Conversation list, conversations with a compose field, and "Start chat"."""

    name = "messages"
    label = "Messages"
    package = "com.google.android.apps.messaging"
    icon_color = (11, 87, 208)
    popups = ("notifications",)

    def thread_id(self, recipient: str) -> str:
        """The resource id of the conversation with ``recipient`` in the conversation list."""
        return self.rid("thread_" + slug(recipient))

    # -- handlers -------------------------------------------------------------------------------
    def start_chat(self, phone: PhoneSim) -> None:
        phone.push(Route.of(self.name, "new"))
        phone.focus(self.rid("to_field"))

    def open_conversation(self, phone: PhoneSim, recipient: str, *, replace: bool) -> None:
        route = Route.of(self.name, "conversation", recipient=recipient)
        if replace:
            phone.replace(route)
            phone.focus(self.rid("compose"))  # a new chat is for writing at once
        else:
            phone.push(route)

    def submit_recipient(self, phone: PhoneSim, text: str) -> None:
        recipient = resolve_recipient(phone.state, text)
        if recipient is None:
            self.show_error(phone, f'No contact or number matches "{text.strip()}"')
            return
        self.open_conversation(phone, recipient, replace=True)

    def send(self, phone: PhoneSim, recipient: str) -> None:
        text = " ".join(phone.field_text(self.rid("compose")).split())
        if text:
            phone.state.messages.append(Message(recipient, text))
            phone.set_field(self.rid("compose"), "")

    # -- pages ----------------------------------------------------------------------------------
    def build(self, phone: PhoneSim, route: Route) -> Page:
        if route.screen == "conversation":
            return self._conversation(phone, route.param("recipient", ""))
        if route.screen == "new":
            return self._new(phone, route)
        return self._list(phone)

    def _list(self, phone: PhoneSim) -> Page:
        body: list[Row] = []
        for recipient, last in threads(phone.state):
            preview = last.text if last.incoming else "You: " + last.text
            body.append(
                row(
                    Widget(
                        "item",
                        recipient,
                        self.thread_id(recipient),
                        subtitle=preview,
                        on_tap=lambda r=recipient: self.open_conversation(phone, r, replace=False),
                        color=avatar_color(recipient),
                    ),
                    height=1.3,
                )
            )
        footer = self.button_footer("+ Start chat", "start_chat", lambda: self.start_chat(phone))
        return self.list_page("Messages", body, "No conversations yet", footer=footer)

    def _new(self, phone: PhoneSim, route: Route) -> Page:
        to_field = self.field(
            "to_field",
            "To: name or phone number",
            lambda text: self.submit_recipient(phone, text),
        )
        body = [*self.error_rows(route), self.muted("All contacts", "contacts_label", height=0.8)]
        for contact in sorted(phone.state.contacts, key=lambda c: c.name.casefold()):
            body.append(
                row(
                    Widget(
                        "item",
                        contact.name,
                        self.rid("suggest_" + slug(contact.name)),
                        subtitle=contact.phone,
                        color=avatar_color(contact.name),
                        on_tap=lambda n=contact.name: self.open_conversation(
                            phone, n, replace=True
                        ),
                    ),
                    height=1.2,
                )
            )
        return self.page("New conversation", body, header=[row(to_field)], back_arrow=True)

    def _conversation(self, phone: PhoneSim, recipient: str) -> Page:
        first_name = recipient.split()[0] if recipient else recipient
        body: list[Row] = []
        for index, message in enumerate(phone.state.messages):
            if message.recipient != recipient:
                continue
            bubble = Widget(
                "item",
                message.text,
                self.rid(f"message_{index}"),
                subtitle=first_name if message.incoming else "You",
                weight=5,
            )
            spacer = Widget("spacer")
            body.append(
                row(*((bubble, spacer) if message.incoming else (spacer, bubble)), height=1.2)
            )
        compose = self.field(
            "compose", "Text message", lambda _: self.send(phone, recipient), weight=3.5
        )
        send = Widget(
            "button", "Send", self.rid("send"), on_tap=lambda: self.send(phone, recipient)
        )
        return self.list_page(
            recipient,
            body,
            f"Say hi to {first_name}",
            footer=[row(compose, send)],
            back_arrow=True,
        )
