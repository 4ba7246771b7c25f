"""Contacts: an alphabetical list, a detail card per contact and a "Create contact" form.

The detail card's "Message" button opens the Messages conversation with that contact. In the form,
ENTER in the name field moves to the phone field and ENTER there saves (the keyboard's "Next" and
"Done" keys); Save at the bottom does the same when the keyboard is down.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from distrl.envs.phonesim.apps.base import App, slug
from distrl.envs.phonesim.state import Contact, Route
from distrl.envs.phonesim.widgets import Page, Row, Widget, row

if TYPE_CHECKING:
    from distrl.envs.phonesim.phone import PhoneSim

AVATAR_COLORS = (
    (26, 115, 232), (217, 48, 37), (15, 157, 88), (244, 160, 0), (103, 58, 183),
    (0, 137, 123), (233, 30, 99), (121, 85, 72),
)  # fmt: skip


def phone_digits(number: str) -> str:
    """Only the digits of a phone number: what two spellings of one number share."""
    return "".join(ch for ch in number if ch.isdigit())


def avatar_color(name: str) -> tuple[int, int, int]:
    """A colour fixed by the name, as Android gives each contact a letter avatar colour."""
    return AVATAR_COLORS[sum(map(ord, name)) % len(AVATAR_COLORS)]


def find_contact(contacts: list[Contact], name: str) -> Contact | None:
    """The first contact called ``name`` (case and spacing ignored)."""
    wanted = " ".join(name.split()).casefold()
    for contact in contacts:
        if " ".join(contact.name.split()).casefold() == wanted:
            return contact
    return None


class Contacts(App):
    """Contact list, contact cards (with "Message") and the "Create contact" form."""

    name = "contacts"
    label = "Contacts"
    package = "com.android.contacts"
    icon_color = (26, 115, 232)
    popups = ("rate",)

    def contact_id(self, name: str) -> str:
        """The resource id of ``name``'s row in the contact list."""
        return self.rid("contact_" + slug(name))

    # -- handlers -------------------------------------------------------------------------------
    def open_form(self, phone: PhoneSim) -> None:
        phone.push(Route.of(self.name, "create"))
        phone.focus(self.rid("name_field"))

    def save(self, phone: PhoneSim) -> None:
        name = " ".join(phone.field_text(self.rid("name_field")).split())
        number = phone.field_text(self.rid("phone_field")).strip()
        if not name:
            self.show_error(phone, "Enter a name")
            return
        if number and not phone_digits(number):
            self.show_error(phone, "Enter a valid phone number")
            return
        phone.state.contacts.append(Contact(name, number))
        phone.replace(Route.of(self.name, "detail", name=name))  # Android shows the new card

    # -- pages ----------------------------------------------------------------------------------
    def build(self, phone: PhoneSim, route: Route) -> Page:
        if route.screen == "detail":
            return self._detail(phone, route.param("name", ""))
        if route.screen == "create":
            return self._form(phone, route)
        return self._list(phone)

    def _list(self, phone: PhoneSim) -> Page:
        contacts = sorted(phone.state.contacts, key=lambda c: c.name.casefold())
        count = len(contacts)
        body: list[Row] = [self.muted(f"{count} contact{'s' * (count != 1)}", "count", height=0.8)]
        for contact in contacts:
            body.append(
                row(
                    Widget(
                        "item",
                        contact.name,
                        self.contact_id(contact.name),
                        on_tap=lambda n=contact.name: phone.push(
                            Route.of(self.name, "detail", name=n)
                        ),
                        color=avatar_color(contact.name),
                    )
                )
            )
        footer = self.button_footer(
            "+ Create contact", "create_contact", lambda: self.open_form(phone)
        )
        return self.page("Contacts", body, footer=footer)

    def _detail(self, phone: PhoneSim, name: str) -> Page:
        contact = find_contact(phone.state.contacts, name)
        if contact is None:
            missing = row(Widget("text", "Contact not found", self.rid("missing")))
            return self.page("Contacts", [missing], back_arrow=True)
        body = [
            row(
                Widget("spacer", weight=1.2),
                Widget(
                    "image",
                    contact.name[:1].upper(),
                    self.rid("photo"),
                    color=avatar_color(contact.name),
                ),
                Widget("spacer", weight=1.2),
                height=1.8,
            ),
            row(Widget("title", contact.name, self.rid("contact_name")), height=1.2),
            row(
                Widget(
                    "item",
                    contact.phone or "No phone number",
                    self.rid("phone_number"),
                    subtitle="Mobile",
                ),
                height=1.2,
            ),
            row(
                Widget(
                    "button",
                    "Message",
                    self.rid("message_button"),
                    on_tap=lambda: phone.push(
                        Route.of("messages", "conversation", recipient=contact.name)
                    ),
                )
            ),
        ]
        return self.page(contact.name, body, back_arrow=True)

    def _form(self, phone: PhoneSim, route: Route) -> Page:
        phone_field = self.rid("phone_field")
        body = [
            self.muted("Name", "name_label", height=0.7),
            row(self.field("name_field", "Full name", lambda _: phone.focus(phone_field))),
            self.muted("Phone", "phone_label", height=0.7),
            row(self.field("phone_field", "Phone number", lambda _: self.save(phone))),
            *self.error_rows(route),
        ]
        return self.editor_page(phone, "Create contact", body, lambda: self.save(phone))
