"""MiniWoB++ DOM trees as the short element list an agent reads.

The ``miniwob`` package walks the page into a tree of :class:`~miniwob.dom.DOMElement` (visible
elements with their client rectangles; text between elements becomes ``t`` pseudo-elements). An
accessibility dump of the same page would list what a user can read or press, not layout boxes,
so the tree is flattened to:

* controls (buttons, links, inputs, text areas, selects) as **one** element each, whatever they
  contain: a button's icon and caption spans become the button's text;
* a checkbox or radio button wrapped in a ``<label>`` as one element with the label's text and
  the label's box, since a click anywhere on a label toggles its control;
* leaves that carry text (paragraphs, spans, ``t`` text runs) or draw something (img, svg);
* nothing else: the ``body``/``#wrap``/``#area`` wrappers and other containers add only boxes
  around what is already listed, and would make every tap hit several elements.

Boxes are normalised by the task area (``width`` x ``height`` CSS pixels from the page's top-left
corner, what the screenshot shows) and clipped to it; elements entirely outside it are dropped.
The list is in document order, so an element is listed after the ones it is drawn over, the
order :func:`distrl.policies.features.resolve_tap` expects.
"""

from __future__ import annotations

from miniwob.dom import DOMElement

from distrl.core.observation import UIElement

__all__ = ["CONTROL_TAGS", "element_kind", "page_elements"]

#: Tags that are one control each (``input_*`` tags carry the input type, e.g. ``input_text``).
CONTROL_TAGS = frozenset({"button", "a", "textarea", "select"})
_FIELD_INPUTS = frozenset(
    {"text", "password", "email", "number", "search", "tel", "url", "date", "time"}
)
_BUTTON_INPUTS = frozenset({"button", "submit", "reset"})
_TOGGLE_INPUTS = frozenset({"checkbox", "radio"})
_IMAGE_TAGS = frozenset({"img", "svg", "canvas", "circle", "rect", "polygon", "ellipse", "path"})
_TITLE_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


def _is_control(element: DOMElement) -> bool:
    return element.tag in CONTROL_TAGS or element.tag.startswith("input_")


def element_kind(element: DOMElement) -> str:
    """The element's kind in PhoneSim's words (``button``, ``field``, ``toggle``, ``link``...),
    so a policy trained on both backends shares kind embeddings."""
    tag = element.tag
    if tag.startswith("input_"):
        input_type = tag[len("input_") :]
        if input_type in _TOGGLE_INPUTS:
            return "toggle"
        if input_type in _BUTTON_INPUTS:
            return "button"
        return "field" if input_type in _FIELD_INPUTS else "widget"
    if tag == "textarea":
        return "field"
    if tag == "a" or "alink" in element.classes.split():
        return "link"
    if tag in ("button", "select", "li"):
        return {"button": "button", "select": "widget", "li": "item"}[tag]
    if tag in _IMAGE_TAGS:
        return "image"
    if tag in _TITLE_TAGS:
        return "title"
    return "text"


def _leaf_texts(element: DOMElement) -> list[str]:
    if element.is_leaf:
        return [element.text.strip()] if element.text and element.text.strip() else []
    return [text for child in element.children for text in _leaf_texts(child)]


def _text(element: DOMElement) -> str:
    """What a screen reader would say: the field's content for inputs, else the visible text."""
    if isinstance(element.value, str) and element.tag != "select":
        return element.value
    return " ".join(_leaf_texts(element))


def _control_in_label(label: DOMElement) -> DOMElement | None:
    """The one checkbox or radio a ``<label>`` wraps, if it wraps exactly one control."""
    controls = [child for child in label.subtree_elements[1:] if _is_control(child)]
    if len(controls) == 1 and controls[0].tag[len("input_") :] in _TOGGLE_INPUTS:
        return controls[0]
    return None


class _Flattener:
    def __init__(self, width: int, height: int):
        self.width = float(width)
        self.height = float(height)
        self.out: list[UIElement] = []

    def bbox(self, *elements: DOMElement) -> tuple[float, float, float, float] | None:
        """The union of the elements' boxes, normalised and clipped; None when nothing of it is
        inside the task area."""
        x0 = max(0.0, min(e.left for e in elements) / self.width)
        y0 = max(0.0, min(e.top for e in elements) / self.height)
        x1 = min(1.0, max(e.right for e in elements) / self.width)
        y1 = min(1.0, max(e.bottom for e in elements) / self.height)
        if x1 <= x0 or y1 <= y0:
            return None
        return (round(x0, 4), round(y0, 4), round(x1, 4), round(y1, 4))

    def emit(
        self, element: DOMElement, text: str, box_of: tuple[DOMElement, ...], clickable: bool
    ) -> None:
        bbox = self.bbox(*box_of)
        if bbox is None:
            return
        checked = element.value if isinstance(element.value, bool) else None
        self.out.append(
            UIElement(
                text=text,
                bbox=bbox,
                clickable=clickable,
                resource_id=element.id or f"ref-{element.ref}",
                kind=element_kind(element),
                checked=checked,
                focused=bool(element.focused),
            )
        )

    def visit(self, element: DOMElement) -> None:
        if element.tag == "label":
            control = _control_in_label(element)
            if control is not None:
                texts = [t for child in element.children for t in _leaf_texts(child)]
                self.emit(control, " ".join(texts), (element, control), clickable=True)
                return
        if _is_control(element):
            self.emit(element, _text(element), (element,), clickable=True)
            return
        if element.is_leaf:
            text = _text(element)
            if text or element.tag in _IMAGE_TAGS:
                # A real element can carry a click handler (MiniWoB++'s links are spans); a bare
                # text run cannot, a click on it goes to its parent.
                self.emit(element, text, (element,), clickable=element.tag != "t")
            return
        for child in element.children:
            self.visit(child)


def page_elements(root: DOMElement, width: int, height: int) -> tuple[UIElement, ...]:
    """The element list of the page under ``root`` (the package's ``body`` element), for a task
    area of ``width`` x ``height`` CSS pixels."""
    flattener = _Flattener(width, height)
    for child in root.children:
        flattener.visit(child)
    return tuple(flattener.out)
