"""The DOM -> element list mapping: checked against the live page and on hand-built trees."""

from __future__ import annotations

from typing import Any

import pytest
from miniwob.dom import DOMElement

from distrl.core.action import Action
from distrl.envs.miniwob.dom import page_elements

_RECTS_JS = """
return Array.from(document.querySelectorAll(arguments[0])).map(function (e) {
  var r = e.getBoundingClientRect();
  return {text: e.textContent.trim(), id: e.id, box: [r.left, r.top, r.right, r.bottom]};
});
"""


def _page_rects(env, selector: str) -> list[dict[str, Any]]:
    return env.browser.driver.execute_script(_RECTS_JS, selector)


def _normalised(box: list[float]) -> tuple[float, ...]:
    x0, y0, x1, y1 = box
    return (x0 / 160, y0 / 210, x1 / 160, y1 / 210)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_named_button_is_listed_where_the_page_draws_it(miniwob_env, train_tasks, pinned, seed):
    obs = miniwob_env.reset(pinned(train_tasks["click-button"], seed))
    label = obs.instruction.split('"')[1]
    listed = [e for e in obs.elements if e.kind == "button" and e.text == label]
    drawn = [r for r in _page_rects(miniwob_env, "#area button") if r["text"] == label]
    assert listed and len(listed) == len(drawn)
    for element, rect in zip(listed, drawn, strict=True):
        assert element.bbox == pytest.approx(_normalised(rect["box"]), abs=1e-3)
        assert element.clickable
    tap = miniwob_env.expert_action()
    assert any(e.contains(*tap.touch_yx) for e in listed)


def test_wrappers_are_not_listed_and_boxes_lie_in_the_task_area(miniwob_env, train_tasks):
    for name in ("click-test", "click-link", "click-tab", "enter-password"):
        obs = miniwob_env.reset(train_tasks[name])
        ids = {e.resource_id for e in obs.elements}
        assert not ids & {"wrap", "area", "query", "form", "boxes", "sync-task-cover"}
        for element in obs.elements:
            x0, y0, x1, y1 = element.bbox
            assert 0.0 <= x0 < x1 <= 1.0 and 0.0 <= y0 < y1 <= 1.0
        assert len(obs.elements) <= 30


def test_links_and_text_runs(miniwob_env, train_tasks):
    obs = miniwob_env.reset(train_tasks["click-link"])
    links = [e for e in obs.elements if e.kind == "link"]
    drawn = _page_rects(miniwob_env, "#area .alink")
    assert [e.text for e in links] == [r["text"] for r in drawn]
    assert all(e.clickable for e in links)
    runs = [e for e in obs.elements if e.kind == "text"]
    assert runs and not any(e.clickable for e in runs)  # bare text runs take no clicks


def test_labelled_checkboxes_are_one_element_with_the_label_text(miniwob_env, train_tasks):
    obs = miniwob_env.reset(train_tasks["click-checkboxes"])
    boxes = [e for e in obs.elements if e.kind == "toggle"]
    labels = _page_rects(miniwob_env, "#boxes label")
    assert [e.text for e in boxes] == [r["text"] for r in labels]
    assert all(e.checked is False for e in boxes)
    assert not [e for e in obs.elements if e.text == boxes[0].text and e.kind != "toggle"]
    obs, *_ = miniwob_env.step(Action.tap(*boxes[0].center_yx))  # tap the label's middle
    assert next(e for e in obs.elements if e.kind == "toggle").checked is True


def test_fields_report_focus_and_value(miniwob_env, train_tasks):
    obs = miniwob_env.reset(train_tasks["enter-password"])
    fields = [e for e in obs.elements if e.kind == "field"]
    assert [f.resource_id for f in fields] == ["password", "verify"]
    assert not any(f.focused for f in fields)
    obs, *_ = miniwob_env.step(Action.tap(*fields[1].center_yx))
    obs, *_ = miniwob_env.step(Action.type_text("s3cret"))
    fields = [e for e in obs.elements if e.kind == "field"]
    assert [(f.text, f.focused) for f in fields] == [("", False), ("s3cret", True)]


# -- hand-built trees (no browser) ---------------------------------------------------------------
def _node(tag: str, box: tuple[float, float, float, float], ref: int, **extra: Any) -> dict:
    left, top, width, height = box
    node = {"tag": tag, "left": left, "top": top, "width": width, "height": height, "ref": ref}
    node.update({"children": [], "id": "", "classes": ""}, **extra)
    return node


def test_offscreen_elements_are_dropped_and_overhanging_ones_clipped():
    inside = _node("BUTTON", (10, 60, 40, 20), 4, text="OK")
    overhang = _node("SPAN", (140, 200, 40, 20), 5, text="edge")
    outside = _node("SPAN", (200, 60, 40, 20), 6, text="reward display")
    area = _node("DIV", (0, 50, 160, 160), 3, id="area", children=[inside, overhang, outside])
    root = _node("BODY", (0, 0, 500, 320), 1, children=[area])
    elements = page_elements(DOMElement(root), 160, 210)
    assert [e.text for e in elements] == ["OK", "edge"]
    assert elements[0].bbox == (0.0625, round(60 / 210, 4), 0.3125, round(80 / 210, 4))
    assert elements[1].bbox[2:] == (1.0, 1.0)


def test_a_button_with_inner_spans_is_one_element_named_by_its_text():
    icon = _node("SPAN", (20, 60, 10, 10), 5, text="")
    caption = _node("SPAN", (30, 60, 20, 10), 6, text="Close")
    button = _node("BUTTON", (20, 60, 40, 20), 4, children=[icon, caption], focused=True)
    root = _node("BODY", (0, 0, 500, 320), 1, children=[button])
    (element,) = page_elements(DOMElement(root), 160, 210)
    assert (element.text, element.kind, element.focused) == ("Close", "button", True)
