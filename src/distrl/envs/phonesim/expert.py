"""Building blocks of the scripted expert (the oracle) that solves PhoneSim tasks.

The expert reads the phone's state (privileged) and acts only through the same actions an agent
has. Each helper returns the next :class:`Action` when its sub-goal still needs work and ``None``
when the sub-goal already holds, so a task's solution is a chain::

    return expert.interruption() or expert.open_app("settings") or expert.tap(switch_id)

Because every step re-reads the state, the chain recovers from whatever state the phone is in:
that is what makes the oracle solve a task "from any reachable state".
"""

from __future__ import annotations

from collections.abc import Callable

from distrl.core.action import Action
from distrl.envs.phonesim.layout import ROW_UNIT
from distrl.envs.phonesim.phone import PhoneSim, Screen
from distrl.envs.phonesim.state import Route

WAIT = Action.tap(0.02, 0.5)  # a tap on the status bar: AitW has no no-op, this changes nothing


class Expert:
    """Step-wise helpers over one phone. Create one per step; it is cheap."""

    def __init__(self, phone: PhoneSim):
        self.phone = phone

    @property
    def screen(self) -> Screen:
        return self.phone.screen()

    # -- interruptions --------------------------------------------------------------------------
    def interruption(self) -> Action | None:
        """Deal with whatever is in the way: a loading page, a dialog, a cookie banner."""
        screen = self.screen
        if screen.loading:
            return WAIT
        if screen.popup is not None:
            return self.tap("android:id/button2")
        if screen.banner_site is not None:
            return self.tap("com.android.chrome:id/cookie_accept")
        return None

    # -- taps and scrolling ---------------------------------------------------------------------
    def tap(self, resource_id: str) -> Action | None:
        """Tap the element, first scrolling to it or lowering the keyboard that covers it.

        ``None`` when the element is not on this page at all (the caller navigates first).
        """
        screen = self.screen
        item = screen.find(resource_id)
        if item is not None:
            return Action.tap(*item.center_yx)
        if screen.find_hidden(resource_id) is not None:
            if screen.keyboard_visible:
                return Action.press_back()  # lower the keyboard
            return self.interruption()
        return self.scroll_to(resource_id)

    def scroll_to(self, resource_id: str) -> Action | None:
        """A swipe that brings a body element laid out off-screen towards the middle."""
        layout = self.screen.page_layout
        row_top = 0.0
        for body_row in self.screen.page.body:
            if any(w.resource_id == resource_id for w in body_row.widgets):
                break
            row_top += body_row.height * ROW_UNIT
        else:
            return None
        viewport = layout.viewport_bottom - layout.viewport_top
        current = self.phone.scroll.get(self.phone.route, 0.0)
        wanted = min(max(row_top - viewport / 3, 0.0), layout.max_scroll)
        delta = max(-0.9 * viewport, min(0.9 * viewport, wanted - current))
        if abs(delta) < 1e-3:
            return None
        start = layout.viewport_top + viewport * (0.95 if delta > 0 else 0.05)
        return Action.swipe((start, 0.5), (start - delta, 0.5))

    def visible(self, resource_id: str) -> bool:
        return self.screen.find(resource_id) is not None

    def on_page(self, resource_id: str) -> bool:
        """The element belongs to the current page (visible, covered or scrolled away)."""
        screen = self.screen
        if screen.find(resource_id) is not None or screen.find_hidden(resource_id) is not None:
            return True
        rows = screen.page.header + screen.page.body + screen.page.footer
        return any(w.resource_id == resource_id for r in rows for w in r.widgets)

    # -- navigation -----------------------------------------------------------------------------
    def go_home(self) -> Action:
        return Action.press_home()

    def open_app(self, name: str) -> Action | None:
        """``None`` once ``name`` is the app in front; otherwise the next step of opening it."""
        if self.phone.current_app == name:
            return None
        if self.phone.route != Route.of("launcher") or len(self.phone.stack) > 1:
            return self.go_home()
        package = self.phone.apps["launcher"].package
        return self.tap(f"{package}:id/icon_{name}") or self.go_home()

    def back_until(self, done: Callable[[Route], bool]) -> Action | None:
        """PRESS_BACK until the current route satisfies ``done`` (``None`` once it does)."""
        return None if done(self.phone.route) else Action.press_back()

    # -- text fields ----------------------------------------------------------------------------
    def fill(self, field_id: str, text: str, submit: bool = True) -> Action | None:
        """Focus ``field_id``, make its text exactly ``text`` and (optionally) press ENTER.

        Returns ``None`` when the field holds the text and ``submit`` is false. A field with
        other text is cleared with its clear button first.
        """
        current = self.phone.field_text(field_id)
        if self.phone.focused_field != field_id:
            if current == text and not submit:
                return None
            if current and not text.startswith(current) and self.visible(field_id + "_clear"):
                # Clear (which also focuses) while the field shows: once focused, a field low on
                # the screen can sit under the keyboard with its clear button.
                return self.tap(field_id + "_clear")
            return self.tap(field_id)
        if current == text:
            return Action.press_enter() if submit else None
        if current and not text.startswith(current):
            return self.tap(field_id + "_clear")
        return Action.type_text(text[len(current) :])
