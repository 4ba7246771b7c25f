"""uiautomator dumps become element lists: a hand-written Android dump, and fake-adb's own."""

from __future__ import annotations

import pytest

from distrl.agents import OracleAgent
from distrl.core.observation import UIElement
from distrl.envs.android.ui_xml import (
    UIDumpError,
    dump_packages,
    kind_of_class,
    parse_bounds,
    parse_ui_xml,
)
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.fakeadb.ui_dump import KIND_CLASSES, elements_to_xml

# Shaped like a Pixel's dump of the Settings app (1080x2400): nested layouts, a status bar from
# systemui, a content-desc-only button, an EditText with its hint, a checked Switch, an invisible
# node and a layout container that only arranges its children.
ANDROID_DUMP = """\
<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">\
<node index="0" text="" resource-id="" class="android.widget.FrameLayout" \
package="com.android.settings" content-desc="" checkable="false" checked="false" \
clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" \
long-clickable="false" password="false" selected="false" bounds="[0,0][1080,2400]">\
<node index="0" text="12:30" resource-id="com.android.systemui:id/clock" \
class="android.widget.TextView" package="com.android.systemui" content-desc="" \
checkable="false" checked="false" clickable="false" enabled="true" focusable="false" \
focused="false" scrollable="false" long-clickable="false" password="false" selected="false" \
bounds="[42,0][150,120]" />\
<node index="1" text="" resource-id="com.android.settings:id/main_content" \
class="android.widget.LinearLayout" package="com.android.settings" content-desc="" \
checkable="false" checked="false" clickable="false" enabled="true" focusable="false" \
focused="false" scrollable="true" long-clickable="false" password="false" selected="false" \
bounds="[0,120][1080,2274]">\
<node index="0" text="" resource-id="" class="android.widget.ImageButton" \
package="com.android.settings" content-desc="Navigate up" checkable="false" checked="false" \
clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" \
long-clickable="false" password="false" selected="false" bounds="[0,120][147,267]" />\
<node index="1" text="Search settings" resource-id="com.android.settings:id/search_src_text" \
class="android.widget.EditText" package="com.android.settings" content-desc="" \
checkable="false" checked="false" clickable="true" enabled="true" focusable="true" \
focused="true" scrollable="false" long-clickable="true" password="false" selected="false" \
bounds="[147,140][1040,247]" />\
<node index="2" text="" resource-id="" class="android.widget.LinearLayout" \
package="com.android.settings" content-desc="" checkable="false" checked="false" \
clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" \
long-clickable="false" password="false" selected="false" bounds="[0,300][1080,480]">\
<node index="0" text="Wi-Fi &amp; network" resource-id="android:id/title" \
class="android.widget.TextView" package="com.android.settings" content-desc="" \
checkable="false" checked="false" clickable="false" enabled="true" focusable="false" \
focused="false" scrollable="false" long-clickable="false" password="false" selected="false" \
bounds="[63,330][700,400]" />\
<node index="1" text="" resource-id="android:id/switch_widget" class="android.widget.Switch" \
package="com.android.settings" content-desc="" checkable="true" checked="true" \
clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" \
long-clickable="false" password="false" selected="false" bounds="[900,350][1017,430]" />\
</node>\
<node index="3" text="Hidden" resource-id="" class="android.widget.TextView" \
package="com.android.settings" content-desc="" checkable="false" checked="false" \
clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" \
long-clickable="false" password="false" selected="false" bounds="[0,0][0,0]" />\
</node></node></hierarchy>"""


def test_android_dump_becomes_the_elements_on_screen() -> None:
    elements = parse_ui_xml(ANDROID_DUMP, 1080, 2400)
    assert [e.text for e in elements] == [
        "12:30",
        "Navigate up",
        "Search settings",
        "",
        "Wi-Fi & network",
        "",
    ]
    clock, up, search, row, title, switch = elements
    assert clock == UIElement(
        "12:30", (42 / 1080, 0.0, 150 / 1080, 120 / 2400), False, "com.android.systemui:id/clock"
    )
    assert (up.kind, up.clickable) == ("icon", True)
    assert (search.kind, search.focused, search.resource_id) == (
        "field",
        True,
        "com.android.settings:id/search_src_text",
    )
    assert (row.kind, row.clickable) == ("item", True)
    assert (title.kind, title.checked) == ("text", None)
    assert (switch.kind, switch.checked) == ("toggle", True)
    assert search.contains(*search.center_yx)
    assert dump_packages(ANDROID_DUMP) == {"com.android.settings", "com.android.systemui"}


def test_bounds_and_classes() -> None:
    assert parse_bounds("[0,120][1080,2274]") == (0, 120, 1080, 2274)
    assert parse_bounds("[0,120]") is None
    assert kind_of_class("android.widget.EditText", True, False) == "field"
    assert kind_of_class("android.widget.CheckBox", True, True) == "toggle"
    assert kind_of_class("android.widget.TextView", True, False) == "link"
    assert kind_of_class("androidx.recyclerview.widget.RecyclerView", False, False) == "text"


def test_noise_around_the_dump_is_ignored_and_bad_dumps_are_refused() -> None:
    noisy = "WARNING: linker: something\n" + ANDROID_DUMP + "\nUI hierchary dumped to: /dev/tty"
    assert len(parse_ui_xml(noisy, 1080, 2400)) == 6
    with pytest.raises(UIDumpError):
        parse_ui_xml("ERROR: null root node returned by UiTestAutomationBridge.", 1080, 2400)
    with pytest.raises(UIDumpError, match="DOCTYPE"):
        parse_ui_xml(
            '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><hierarchy>&a;</hierarchy>',
            10,
            10,
        )
    with pytest.raises(UIDumpError, match="malformed"):
        parse_ui_xml("<hierarchy><node></hierarchy>", 10, 10)


def _screens() -> list[tuple[PhoneSimEnv, tuple[UIElement, ...]]]:
    """Element lists of PhoneSim screens along oracle episodes (popups, keyboards, lists)."""
    env = PhoneSimEnv(seed=3)
    screens = []
    for task in load_suite("general", "train")[:6] + load_suite("webshop", "train")[:2]:
        env.reset(task)
        agent = OracleAgent(env)
        screens.append(env.phone.elements())
        while not env.done:
            env.step(agent.act(env.observe()))
            screens.append(env.phone.elements())
    return screens


def test_fake_adb_dump_round_trips_through_the_parser() -> None:
    width, height = 360, 720
    checked_any = 0
    for elements in _screens():
        parsed = parse_ui_xml(elements_to_xml(elements, width, height), width, height)
        assert len(parsed) == len(elements)
        for original, back in zip(elements, parsed, strict=True):
            assert back.text == original.text
            assert back.resource_id == original.resource_id
            assert back.clickable == original.clickable
            assert back.checked == original.checked
            assert back.focused == original.focused
            expected_class = KIND_CLASSES.get(original.kind, "android.widget.TextView")
            assert back.kind == kind_of_class(
                expected_class, original.clickable, original.checked is not None
            )
            for got, want, size in zip(back.bbox, original.bbox, (width, height) * 2, strict=True):
                assert abs(got - want) <= 0.5 / size + 1e-9
            checked_any += original.checked is not None
    assert checked_any > 0
