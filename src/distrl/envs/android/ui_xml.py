"""A ``uiautomator dump`` (the accessibility tree as XML) as the element list agents read.

A dump nests layout containers several levels deep; an agent needs the things on screen, so a
node becomes a :class:`~distrl.core.observation.UIElement` when it shows text (``text`` or
``content-desc``), takes input (clickable, checkable, an edit field) or is a leaf (an image, a
divider). Containers that only arrange other nodes are skipped. Bounds are pixels
``[x0,y0][x1,y1]``; they are divided by the screen size so element lists do not depend on the
device's resolution (as PhoneSim's do not). Nodes with no area (off screen, collapsed) are
dropped.

Android reports a widget's class, not a PhoneSim "kind"; :func:`kind_of_class` maps the common
framework classes onto the kinds PhoneSim uses (``field``, ``toggle``, ``button``, ``icon``,
``image``, ``item``, ``link``, ``text``). Kinds Android cannot tell apart (a title is a TextView)
collapse onto one.

>>> xml = ('<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0">'
...        '<node class="android.widget.Button" text="OK" resource-id="app:id/ok" '
...        'clickable="true" bounds="[0,100][180,200]" /></hierarchy>')
>>> parse_ui_xml(xml, 360, 400)[0].bbox
(0.0, 0.25, 0.5, 0.5)
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree

from distrl.core.observation import UIElement

_BOUNDS_RE = re.compile(r"^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$")

_FIELD_CLASSES = ("EditText", "AutoCompleteTextView", "MultiAutoCompleteTextView")
_TOGGLE_CLASSES = ("Switch", "SwitchCompat", "SwitchMaterial", "CheckBox", "ToggleButton")
_TOGGLE_CLASSES += ("RadioButton", "CompoundButton", "CheckedTextView")
_BUTTON_CLASSES = ("Button", "MaterialButton", "Chip")
_ICON_CLASSES = ("ImageButton", "FloatingActionButton")
_IMAGE_CLASSES = ("ImageView",)
_TEXT_CLASSES = ("TextView",)


class UIDumpError(ValueError):
    """The device's dump is not a uiautomator hierarchy (the message quotes its start)."""


def kind_of_class(class_name: str, clickable: bool, checkable: bool) -> str:
    """The PhoneSim-style kind of an Android widget class (its short name decides)."""
    short = class_name.rsplit(".", 1)[-1]
    if short in _FIELD_CLASSES:
        return "field"
    if short in _TOGGLE_CLASSES or checkable:
        return "toggle"
    if short in _BUTTON_CLASSES:
        return "button"
    if short in _ICON_CLASSES:
        return "icon"
    if short in _IMAGE_CLASSES:
        return "icon" if clickable else "image"
    if short in _TEXT_CLASSES:
        return "link" if clickable else "text"
    return "item" if clickable else "text"


def parse_bounds(bounds: str) -> tuple[int, int, int, int] | None:
    """``"[x0,y0][x1,y1]"`` as four ints, or None when malformed."""
    match = _BOUNDS_RE.match(bounds.strip())
    if match is None:
        return None
    x0, y0, x1, y1 = (int(group) for group in match.groups())
    return x0, y0, x1, y1


def _flag(node: ElementTree.Element, name: str) -> bool:
    return node.get(name, "false") == "true"


def _clamp(value: float) -> float:
    return min(max(value, 0.0), 1.0)


def _hierarchy_text(xml: str) -> str:
    """The XML document in ``xml``, without noise some devices print around it.

    Document type declarations are refused: a real dump never has one, and entity definitions
    are the way an XML parser is made to blow up (billion laughs).
    """
    start = xml.find("<?xml")
    if start < 0:
        start = xml.find("<hierarchy")
    end = xml.rfind("</hierarchy>")
    if start < 0 or end < 0:
        raise UIDumpError(f"not a uiautomator dump: {xml[:80]!r}")
    document = xml[start : end + len("</hierarchy>")]
    if "<!DOCTYPE" in document or "<!ENTITY" in document:
        raise UIDumpError("uiautomator dump with a DOCTYPE/ENTITY declaration refused")
    return document


def parse_ui_xml(xml: str, width: int, height: int) -> tuple[UIElement, ...]:
    """The on-screen elements of a dump, in document order, bboxes normalised by ``width`` and
    ``height`` (the screen size in pixels)."""
    if width <= 0 or height <= 0:
        raise ValueError(f"screen size must be positive, got {width}x{height}")
    try:
        root = ElementTree.fromstring(_hierarchy_text(xml))
    except ElementTree.ParseError as error:
        raise UIDumpError(f"malformed uiautomator dump: {error}") from error
    elements: list[UIElement] = []
    for node in root.iter("node"):
        bounds = parse_bounds(node.get("bounds", ""))
        if bounds is None:
            continue
        x0, y0, x1, y1 = bounds
        if x1 <= x0 or y1 <= y0:
            continue
        text = node.get("text", "") or node.get("content-desc", "")
        clickable = _flag(node, "clickable")
        checkable = _flag(node, "checkable")
        kind = kind_of_class(node.get("class", ""), clickable, checkable)
        is_leaf = node.find("node") is None
        if not (text or clickable or checkable or kind == "field" or is_leaf):
            continue  # a container that only lays out its children
        elements.append(
            UIElement(
                text=text,
                bbox=(
                    _clamp(x0 / width),
                    _clamp(y0 / height),
                    _clamp(x1 / width),
                    _clamp(y1 / height),
                ),
                clickable=clickable or kind == "field",
                resource_id=node.get("resource-id", ""),
                kind=kind,
                checked=_flag(node, "checked") if checkable else None,
                focused=_flag(node, "focused"),
            )
        )
    return tuple(elements)


def dump_packages(xml: str) -> frozenset[str]:
    """The app packages a dump shows (``package`` of its nodes); empty for an unreadable dump."""
    try:
        root = ElementTree.fromstring(_hierarchy_text(xml))
    except (UIDumpError, ElementTree.ParseError):
        return frozenset()
    return frozenset(p for node in root.iter("node") if (p := node.get("package", "")))
