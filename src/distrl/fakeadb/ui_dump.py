"""A PhoneSim screen written the way ``uiautomator dump`` writes an Android screen.

The layout mirrors a real dump: an XML declaration, ``<hierarchy rotation="0">``, one full-screen
``FrameLayout`` node holding a node per element, and on every node the attributes uiautomator
writes (``index``, ``text``, ``resource-id``, ``class``, ``package``, ``content-desc``, the
boolean flags, ``bounds`` in whole pixels). Each PhoneSim kind is given the framework class an
Android app would use for it, so the backend's parser meets the same class names as on a phone.
"""

from __future__ import annotations

from collections.abc import Sequence
from xml.sax.saxutils import quoteattr

from distrl.core.observation import UIElement

#: The class an Android app would report for each PhoneSim widget kind.
KIND_CLASSES = {
    "field": "android.widget.EditText",
    "toggle": "android.widget.Switch",
    "button": "android.widget.Button",
    "chip": "android.widget.Button",
    "icon": "android.widget.ImageButton",
    "clear": "android.widget.ImageButton",
    "nav": "android.widget.ImageView",
    "image": "android.widget.ImageView",
    "item": "android.widget.LinearLayout",
    "dialog": "android.widget.FrameLayout",
    "banner": "android.widget.FrameLayout",
    "spacer": "android.view.View",
}
_DEFAULT_CLASS = "android.widget.TextView"
_ROOT_PACKAGE = "com.android.systemui"


def _package_of(resource_id: str, fallback: str) -> str:
    return resource_id.split(":id/", 1)[0] if ":id/" in resource_id else fallback


def _bounds(bbox: tuple[float, float, float, float], width: int, height: int) -> str:
    x0, y0, x1, y1 = bbox
    return f"[{round(x0 * width)},{round(y0 * height)}][{round(x1 * width)},{round(y1 * height)}]"


def _flag(value: bool) -> str:
    return "true" if value else "false"


def elements_to_xml(
    elements: Sequence[UIElement], width: int, height: int, package: str = _ROOT_PACKAGE
) -> str:
    """The uiautomator dump of a screen showing ``elements`` (``package``: the app in front)."""
    lines = [
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>",
        '<hierarchy rotation="0">',
        f'<node index="0" text="" resource-id="" class="android.widget.FrameLayout" '
        f'package={quoteattr(package)} content-desc="" checkable="false" checked="false" '
        'clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" '
        'long-clickable="false" password="false" selected="false" '
        f'bounds="[0,0][{width},{height}]">',
    ]
    for index, element in enumerate(elements):
        checkable = element.checked is not None
        lines.append(
            f"<node index={quoteattr(str(index))} text={quoteattr(element.text)} "
            f"resource-id={quoteattr(element.resource_id)} "
            f"class={quoteattr(KIND_CLASSES.get(element.kind, _DEFAULT_CLASS))} "
            f'package={quoteattr(_package_of(element.resource_id, package))} content-desc="" '
            f'checkable="{_flag(checkable)}" checked="{_flag(bool(element.checked))}" '
            f'clickable="{_flag(element.clickable)}" enabled="true" '
            f'focusable="{_flag(element.clickable)}" focused="{_flag(element.focused)}" '
            'scrollable="false" long-clickable="false" password="false" selected="false" '
            f'bounds="{_bounds(element.bbox, width, height)}" />'
        )
    lines += ["</node>", "</hierarchy>"]
    return "".join(lines)
