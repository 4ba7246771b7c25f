"""Scripted experts for a few MiniWoB++ tasks: utterance + element list -> next AitW action.

The experts read the same element list the agent sees (not the page's script), so every tap
they make lands on a listed element and can be imitated by a policy that points at elements.
Each returns the next step only, judged from the current screen, so it recovers from the
detours a noisy oracle takes: a field already focused is typed into, a checkbox ticked by
mistake is unticked, a half-typed text is completed. A field holding text the target does not
start with cannot be fixed with AitW actions (there is no "clear"), and then, like a missing
target, the expert gives up with STATUS_TASK_IMPOSSIBLE, which ends the episode as a failure.

>>> from distrl.core.observation import UIElement
>>> ok = UIElement("OK", (0.1, 0.5, 0.3, 0.6), True, "b1", "button")
>>> expert_action("click-button", 'Click on the "OK" button.', [ok]).touch_yx
(0.55, 0.2)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from distrl.core.action import Action
from distrl.core.observation import UIElement
from distrl.errors import InputError

__all__ = ["SUPPORTED_TASKS", "UnsupportedExpertTask", "expert_action"]

Elements = Sequence[UIElement]
Solver = Callable[[str, Elements], Action]

_QUOTED_RE = re.compile(r'"([^"]*)"')
_SELECT_RE = re.compile(r"^Select (.*) and click Submit\.$")
_ORDINALS = {"1st": 0, "2nd": 1, "3rd": 2}


class UnsupportedExpertTask(InputError):
    """No scripted expert for this task."""


def _tap(element: UIElement) -> Action:
    y, x = element.center_yx
    return Action.tap(min(max(y, 0.0), 1.0), min(max(x, 0.0), 1.0))


def _quoted(utterance: str) -> str | None:
    match = _QUOTED_RE.search(utterance)
    return match.group(1) if match else None


def _first(elements: Elements, kind: str, text: str | None = None) -> UIElement | None:
    for element in elements:
        if element.kind == kind and (text is None or element.text.strip() == text):
            return element
    return None


def _tap_first(elements: Elements, kind: str, text: str | None = None) -> Action:
    element = _first(elements, kind, text)
    return _tap(element) if element is not None else Action.impossible()


def _fill(field: UIElement, target: str) -> Action | None:
    """The next action that makes ``field`` hold ``target``; None when it already does."""
    if field.text == target:
        return None
    if not field.focused:
        return _tap(field)
    if target.startswith(field.text):
        return Action.type_text(target[len(field.text) :])
    return Action.impossible()


def _fill_then_submit(elements: Elements, targets: Sequence[str]) -> Action:
    """Fill the page's fields in order with ``targets``, then press the Submit button."""
    fields = [element for element in elements if element.kind == "field"]
    if len(fields) < len(targets):
        return Action.impossible()
    for field, target in zip(fields, targets, strict=False):
        action = _fill(field, target)
        if action is not None:
            return action
    submit = next((e for e in elements if e.kind == "button" and e.text.lower() == "submit"), None)
    return _tap(submit) if submit is not None else Action.impossible()


def _click_test(utterance: str, elements: Elements) -> Action:
    return _tap_first(elements, "button")


def _click_button(utterance: str, elements: Elements) -> Action:
    # 'Click on the "Okay" button.' (click-button) or 'Click button ONE.' (click-test-2)
    label = _quoted(utterance) or utterance.rstrip(".").split()[-1]
    return _tap_first(elements, "button", label)


def _click_link(utterance: str, elements: Elements) -> Action:
    # 'Click on the link "dolor".' or 'Click on Tab #2.'
    label = _quoted(utterance) or utterance.rstrip(".").removeprefix("Click on ")
    return _tap_first(elements, "link", label)


def _click_dialog(utterance: str, elements: Elements) -> Action:
    # jQuery UI's title-bar close button: an "x" icon whose (hidden) caption is "Close".
    return _tap_first(elements, "button", "Close")


def _focus_text(utterance: str, elements: Elements) -> Action:
    # 'Focus into the textbox.' or 'Focus into the 2nd input textbox.'
    fields = [element for element in elements if element.kind == "field"]
    ordinal = next((i for word, i in _ORDINALS.items() if word in utterance.split()), 0)
    return _tap(fields[ordinal]) if ordinal < len(fields) else Action.impossible()


def _enter_text(utterance: str, elements: Elements) -> Action:
    # 'Enter "Ronda" into the text field and press Submit.'
    target = _quoted(utterance)
    if target is None:
        return Action.impossible()
    # enter-text-2: 'Type "KAYLA" in all lower case letters in the text input and press Submit.'
    if "all lower case" in utterance:
        target = target.lower()
    elif "all upper case" in utterance:
        target = target.upper()
    return _fill_then_submit(elements, [target])


def _enter_password(utterance: str, elements: Elements) -> Action:
    # 'Enter the password "x7" into both text fields and press submit.'
    password = _quoted(utterance)
    if password is None:
        return Action.impossible()
    return _fill_then_submit(elements, [password, password])


def _select_and_submit(utterance: str, elements: Elements) -> Action:
    # 'Select ab, xyz and click Submit.', 'Select nothing and click Submit.' (checkboxes) or
    # 'Select ab and click Submit.' (click-option: radio buttons)
    match = _SELECT_RE.match(utterance)
    if match is None:
        return Action.impossible()
    wanted = set() if match.group(1) == "nothing" else set(match.group(1).split(", "))
    for element in elements:
        if element.kind == "toggle" and bool(element.checked) != (element.text in wanted):
            return _tap(element)
    return _tap_first(elements, "button", "Submit")


_SOLVERS: dict[str, Solver] = {
    "click-test": _click_test,
    "click-test-2": _click_button,
    "click-button": _click_button,
    "click-link": _click_link,
    "click-tab": _click_link,
    "click-dialog": _click_dialog,
    "click-checkboxes": _select_and_submit,
    "click-option": _select_and_submit,
    "focus-text": _focus_text,
    "focus-text-2": _focus_text,
    "enter-text": _enter_text,
    "enter-text-2": _enter_text,
    "enter-password": _enter_password,
}
#: Tasks with a scripted expert.
SUPPORTED_TASKS: tuple[str, ...] = tuple(sorted(_SOLVERS))


def expert_action(task_name: str, utterance: str, elements: Elements) -> Action:
    """The expert's next action on ``task_name`` given the screen; raises
    :class:`UnsupportedExpertTask` for a task without an expert."""
    solver = _SOLVERS.get(task_name)
    if solver is None:
        raise UnsupportedExpertTask(
            f"no scripted MiniWoB++ expert for task {task_name!r}; "
            f"experts exist for: {', '.join(SUPPORTED_TASKS)}"
        )
    return solver(utterance, elements)
