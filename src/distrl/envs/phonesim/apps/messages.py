"""Messages: conversations by recipient, a conversation screen and a "Start chat" screen.

A conversation is every message to or from one recipient (a contact's name, or a number that no
contact has). "Start chat" opens a "To" field with the keyboard up: ENTER resolves what was typed
to a contact (full name, first name or number) or a raw number and opens that conversation with
the compose field focused; ENTER in the compose field sends, like the keyboard's send key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from distrl.envs.phonesim.apps.base import App, slug
from distrl.envs.phonesim.apps.contacts import avatar_color, phone_digits
from distrl.envs.phonesim.state import Message, PhoneState, Route
from distrl.envs.phonesim.widgets import Page, Row, Widget, row

if TYPE_CHECKING:
    from distrl.envs.phonesim.phone import PhoneSim

ERROR_COLOR = (217, 48, 37)
MUTED_COLOR = (128, 128, 128)
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
    for contact in state.contacts:
        if contact.name.casefold() == query:
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

    def popup_kinds(self) -> tuple[str, ...]:
        return ("notifications",)

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
        if not body:
            body.append(
                row(Widget("text", "No conversations yet", self.rid("empty"), color=MUTED_COLOR))
            )
        return Page(
            title="Messages",
            package=self.package,
            body=body,
            footer=[
                row(
                    Widget(
                        "button",
                        "+ Start chat",
                        self.rid("start_chat"),
                        on_tap=lambda: self.start_chat(phone),
                    )
                )
            ],
        )

    def _new(self, phone: PhoneSim, route: Route) -> Page:
        to_field = Widget(
            "field",
            resource_id=self.rid("to_field"),
            placeholder="To: name or phone number",
            on_submit=lambda text: self.submit_recipient(phone, text),
        )
        body: list[Row] = []
        if route.param("error"):
            body.append(
                row(Widget("text", route.param("error"), self.rid("error"), color=ERROR_COLOR))
            )
        body.append(
            row(
                Widget("text", "All contacts", self.rid("contacts_label"), color=MUTED_COLOR),
                height=0.8,
            )
        )
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
        return Page(
            title="New conversation",
            package=self.package,
            back_arrow=True,
            header=[row(to_field)],
            body=body,
        )

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
        if not body:
            body.append(
                row(Widget("text", f"Say hi to {first_name}", self.rid("empty"), color=MUTED_COLOR))
            )
        return Page(
            title=recipient,
            package=self.package,
            back_arrow=True,
            body=body,
            footer=[
                row(
                    Widget(
                        "field",
                        resource_id=self.rid("compose"),
                        placeholder="Text message",
                        on_submit=lambda _: self.send(phone, recipient),
                        weight=3.5,
                    ),
                    Widget(
                        "button",
                        "Send",
                        self.rid("send"),
                        on_tap=lambda: self.send(phone, recipient),
                    ),
                )
            ],
        )
