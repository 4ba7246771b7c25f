"""AitW actions as MiniWoB++ browser actions.

One AitW action becomes a short sequence of ``miniwob`` actions (dicts of its action space),
executed in order by the package's own Selenium executors:

* a **tap** ``[y, x]`` clicks at ``(x * width, y * height)`` CSS pixels of the task area
  (``CLICK_COORDS``);
* a **swipe** is a mouse drag, pressed at the touch point and released at the lift point
  (``MOUSEDOWN_COORDS`` then ``MOUSEUP_COORDS``: the release moves the pressed pointer, which is
  what MiniWoB++'s drag tasks and text selection read), followed by a mouse-wheel scroll at the
  touch point by the finger's vertical travel (finger up -> content scrolls down, as a touch
  swipe scrolls a phone screen). A drag where nothing is draggable and a scroll where nothing
  scrolls both do nothing, so one action serves both kinds of task;
* **TYPE** sends the text as keystrokes to the focused element (``TYPE_TEXT``), appending to
  what the field holds, as ``adb shell input text`` does;
* **PRESS_ENTER** presses Enter (``PRESS_KEY``);
* **PRESS_BACK**, **PRESS_HOME** and **INVALID** do nothing (``NONE``): a web page has no back
  or home button. They are valid steps that cost one step of the horizon (INVALID is counted as
  invalid by the env);
* **STATUS_TASK_COMPLETE / IMPOSSIBLE** do nothing in the page; the env ends the episode.

>>> from distrl.core.action import Action
>>> click = to_miniwob(Action.tap(0.5, 0.25), 160, 210)[0]
>>> ACTION_SPACE.action_types[click["action_type"]].value, click["coords"].tolist()
('CLICK_COORDS', [40.0, 105.0])
"""

from __future__ import annotations

import numpy as np
from miniwob.action import Action as MiniWoBAction
from miniwob.action import ActionSpaceConfig, ActionTypes

from distrl.core.action import Action, ActionType

__all__ = ["ACTION_SPACE", "ENTER_KEY", "SCROLL_STEP_PX", "to_miniwob"]

ENTER_KEY = "<Enter>"
#: Pixels per wheel action; a swipe scrolls by whole multiples of it (at least one).
SCROLL_STEP_PX = 25

#: The subset of miniwob's action space the mapping uses. ``scroll_time=0``: a wheel action
#: returns at once instead of animating for the package's default 150 ms.
ACTION_SPACE = ActionSpaceConfig(
    action_types=[
        ActionTypes.NONE,
        ActionTypes.CLICK_COORDS,
        ActionTypes.MOUSEDOWN_COORDS,
        ActionTypes.MOUSEUP_COORDS,
        ActionTypes.SCROLL_UP_COORDS,
        ActionTypes.SCROLL_DOWN_COORDS,
        ActionTypes.PRESS_KEY,
        ActionTypes.TYPE_TEXT,
    ],
    scroll_amount=SCROLL_STEP_PX,
    scroll_time=0,
    allowed_keys=[ENTER_KEY],
)


def _make(action_type: ActionTypes, **fields: object) -> MiniWoBAction:
    return {"action_type": ACTION_SPACE.action_types.index(action_type), **fields}


def _coords(point_yx: tuple[float, float], width: int, height: int) -> np.ndarray:
    """CSS pixels (left, top) of a normalised ``[y, x]`` point, kept inside the task area (a
    point at exactly 1.0 would otherwise land one pixel outside it)."""
    y, x = point_yx
    left = min(x * width, width - 0.5)
    top = min(y * height, height - 0.5)
    return np.array([left, top], dtype=np.float32)


def to_miniwob(action: Action, width: int, height: int) -> tuple[MiniWoBAction, ...]:
    """The miniwob actions that carry out ``action`` on a ``width`` x ``height`` task area."""
    kind = action.action_type
    if kind is ActionType.DUAL_POINT:
        touch = _coords(action.touch_yx, width, height)
        if action.is_tap:
            return (_make(ActionTypes.CLICK_COORDS, coords=touch),)
        lift = _coords(action.lift_yx, width, height)
        out = [
            _make(ActionTypes.MOUSEDOWN_COORDS, coords=touch),
            _make(ActionTypes.MOUSEUP_COORDS, coords=lift),
        ]
        travel = float(touch[1] - lift[1])  # > 0: the finger moved up, content scrolls down
        notches = max(1, round(abs(travel) / SCROLL_STEP_PX)) if abs(travel) >= 1.0 else 0
        wheel = ActionTypes.SCROLL_DOWN_COORDS if travel > 0 else ActionTypes.SCROLL_UP_COORDS
        out.extend(_make(wheel, coords=touch) for _ in range(notches))
        return tuple(out)
    if kind is ActionType.TYPE:
        return (_make(ActionTypes.TYPE_TEXT, text=action.text),)
    if kind is ActionType.PRESS_ENTER:
        return (_make(ActionTypes.PRESS_KEY, key=ACTION_SPACE.allowed_keys.index(ENTER_KEY)),)
    # PRESS_BACK, PRESS_HOME, INVALID and the STATUS actions change nothing in the page.
    return (_make(ActionTypes.NONE),)
