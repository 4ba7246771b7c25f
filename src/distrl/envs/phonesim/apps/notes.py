"""Notes (Keep-like): a list of notes, newest first, and an editor.

"Take a note" opens the editor with the keyboard up. Save (or ENTER, the keyboard's "Done" key)
keeps non-empty text and closes the editor; saving an emptied note deletes it, as Keep discards
empty notes. Unlike Keep, BACK does not save: the simulator gives apps no hook on BACK, so BACK
lowers the keyboard and then leaves the editor without keeping the draft.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from distrl.envs.phonesim.apps.base import App
from distrl.envs.phonesim.state import Note, Route
from distrl.envs.phonesim.widgets import Page, Row, Widget, row

if TYPE_CHECKING:
    from distrl.envs.phonesim.phone import PhoneSim

NOTE_COLORS = (
    (255, 244, 117),
    (204, 255, 144),
    (167, 255, 235),
    (203, 240, 248),
    (253, 207, 232),
    (255, 204, 128),
)


class Notes(App):
    """Keep-like notes: a list, newest first, and an editor with Save."""

    name = "notes"
    label = "Notes"
    package = "com.google.android.keep"
    icon_color = (251, 188, 4)

    # -- handlers -------------------------------------------------------------------------------
    def open_editor(self, phone: PhoneSim, index: int | None) -> None:
        field_id = self.rid("note_field")
        if index is None:
            phone.push(Route.of(self.name, "edit"))
        else:
            phone.push(Route.of(self.name, "edit", index=index))
            phone.set_field(field_id, phone.state.notes[index].text)
        phone.focus(field_id)

    def save(self, phone: PhoneSim, index: int | None) -> None:
        text = phone.field_text(self.rid("note_field")).strip()
        notes = phone.state.notes
        if index is None:
            if text:
                notes.append(Note(text))
        elif 0 <= index < len(notes):
            if text:
                notes[index].text = text
            else:
                del notes[index]
        self.close_screen(phone)

    # -- pages ----------------------------------------------------------------------------------
    def build(self, phone: PhoneSim, route: Route) -> Page:
        if route.screen == "edit":
            return self._editor(phone, route.param("index"))
        return self._list(phone)

    def _list(self, phone: PhoneSim) -> Page:
        body: list[Row] = []
        notes = phone.state.notes
        for index in reversed(range(len(notes))):
            body.append(
                row(
                    Widget(
                        "item",
                        notes[index].text,
                        self.rid(f"note_{index}"),
                        on_tap=lambda i=index: self.open_editor(phone, i),
                        color=NOTE_COLORS[index % len(NOTE_COLORS)],
                    ),
                    height=1.2,
                )
            )
        footer = self.button_footer(
            "+ Take a note", "take_note", lambda: self.open_editor(phone, None)
        )
        return self.list_page("Keep Notes", body, "Notes you add appear here", footer=footer)

    def _editor(self, phone: PhoneSim, index: int | None) -> Page:
        body = [
            row(self.field("note_field", "Note", lambda _: self.save(phone, index))),
            self.muted("Save keeps the note; Back discards it", "hint", height=0.8),
        ]
        title = "New note" if index is None else "Edit note"
        return self.editor_page(phone, title, body, lambda: self.save(phone, index))
