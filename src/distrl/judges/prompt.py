"""The chat request a VLM judge sends: instruction, action history and the last screenshots.

The judge sees what a person looking over the agent's shoulder would: the instruction, a numbered
list of what the agent did and the final screens. Actions are written as their AitW type name
plus a readable gloss (``3. TYPE "coffee"``), which a model reads more easily than the canonical
``Action Decision:`` line and which keeps the history one line per action.

Screenshots go as ``image_url`` parts with ``data:image/png;base64,...`` URLs (every
OpenAI-compatible server accepts them; no upload step), downscaled so the longest side is at most
``max_image_side``: a 1080x2400 phone screen costs far more tokens than the verdict is worth.

The answer format is fixed (a last line ``Status: success`` or ``Status: failure``) so that
:func:`~distrl.judges.verdict.parse_verdict` can read it; the parser also copes when a model
ignores the format.

>>> from distrl.core.action import Action
>>> describe_action(Action.tap(0.5, 0.25))
'DUAL_POINT tap at (y=0.500, x=0.250)'
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

from distrl.config.schema import VLMJudgeConfig
from distrl.core.action import Action, ActionType
from distrl.core.task import Task

#: Longest action history written out in full; earlier actions are summarised as a count.
MAX_HISTORY = 40

SYSTEM_TEXT = (
    "You evaluate whether an agent operating a smartphone completed the task it was given. "
    "You get the task instruction, the list of actions the agent took, and the last "
    "screenshots of the phone, oldest first; the last screenshot shows the screen now.\n"
    "Judge from the screenshots: the agent's own claim that it is done is not evidence. "
    "The task counts as completed only if the final screen shows that the instruction was "
    "carried out (for a question, that the answer is visible on screen).\n"
    "Think briefly, then end your reply with exactly one line of the form\n"
    "Status: success\n"
    "or\n"
    "Status: failure"
)


@dataclass(frozen=True)
class JudgePrompt:
    """One judgement's request: the chat ``messages`` plus what identifies it for the cache.

    ``text`` is every text part joined (system and user); ``screenshots_png`` are the PNG bytes of
    the screenshots as sent. Model, text and screenshots together determine the answer of a
    deterministic judge, so they make the cache key.
    """

    messages: list[dict[str, Any]]
    text: str
    screenshots_png: tuple[bytes, ...]


def _point(point: tuple[float, float]) -> str:
    return f"(y={point[0]:.3f}, x={point[1]:.3f})"


def describe_action(action: Action) -> str:
    """One line: the AitW action type and what it did, in words."""
    kind = action.action_type
    if kind is ActionType.DUAL_POINT:
        if action.is_tap:
            return f"DUAL_POINT tap at {_point(action.touch_yx)}"
        return f"DUAL_POINT swipe from {_point(action.touch_yx)} to {_point(action.lift_yx)}"
    if kind is ActionType.TYPE:
        # repr-free quoting: a JSON-ish literal keeps newlines and quotes on one visible line.
        escaped = action.text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return f'TYPE "{escaped}"'
    if kind is ActionType.STATUS_TASK_COMPLETE:
        return "STATUS_TASK_COMPLETE (the agent declared the task done)"
    if kind is ActionType.STATUS_TASK_IMPOSSIBLE:
        return "STATUS_TASK_IMPOSSIBLE (the agent declared the task impossible)"
    if kind is ActionType.INVALID:
        return f"INVALID (unparseable output: {action.invalid_reason})"
    return kind.value  # PRESS_BACK, PRESS_HOME, PRESS_ENTER say what they do


def action_history(actions: Sequence[Action]) -> str:
    """The numbered history, one action a line; the oldest are elided past :data:`MAX_HISTORY`."""
    if not actions:
        return "(no actions yet)"
    first = max(0, len(actions) - MAX_HISTORY)
    lines = [f"({first} earlier actions omitted)"] if first else []
    lines += [f"{i + 1}. {describe_action(a)}" for i, a in enumerate(actions) if i >= first]
    return "\n".join(lines)


def encode_screenshot(screenshot: np.ndarray, max_side: int) -> bytes:
    """PNG bytes of ``screenshot`` (HxWx3 uint8), downscaled to fit ``max_side``."""
    pixels = np.asarray(screenshot)
    if pixels.ndim != 3 or pixels.shape[2] != 3 or pixels.dtype != np.uint8:
        raise ValueError(
            f"screenshots must be HxWx3 uint8 arrays, got {pixels.dtype} of shape {pixels.shape}"
        )
    image = Image.fromarray(np.ascontiguousarray(pixels))
    if max(image.size) > max_side:
        scale = max_side / max(image.size)
        size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
        image = image.resize(size, Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def png_data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def build_prompt(
    task: Task,
    screenshots: Sequence[np.ndarray],
    actions: Sequence[Action],
    config: VLMJudgeConfig,
) -> JudgePrompt:
    """The request for one judgement: the last ``config.screenshots`` screenshots, downscaled."""
    if not screenshots:
        raise ValueError("a VLM judgement needs at least one screenshot (the current screen)")
    shown = list(screenshots)[-config.screenshots :]
    pngs = tuple(encode_screenshot(s, config.max_image_side) for s in shown)
    intro = (
        f"Task instruction: {task.instruction}\n\n"
        f"Actions taken by the agent, oldest first:\n{action_history(actions)}\n\n"
        f"Below are the last {len(pngs)} screenshot(s), oldest first."
    )
    content: list[dict[str, Any]] = [{"type": "text", "text": intro}]
    texts = [SYSTEM_TEXT, intro]
    for index, png in enumerate(pngs, start=1):
        label = f"Screenshot {index} of {len(pngs)}" + (
            " (the current screen):" if index == len(pngs) else ":"
        )
        content.append({"type": "text", "text": label})
        content.append({"type": "image_url", "image_url": {"url": png_data_url(png)}})
        texts.append(label)
    closing = (
        f'Did the agent complete the task "{task.instruction}"? '
        "End with the line 'Status: success' or 'Status: failure'."
    )
    content.append({"type": "text", "text": closing})
    texts.append(closing)
    messages = [
        {"role": "system", "content": SYSTEM_TEXT},
        {"role": "user", "content": content},
    ]
    return JudgePrompt(messages=messages, text="\n".join(texts), screenshots_png=pngs)
