"""``distrl view``: the report of real run folders, checked in a real headless Chromium.

Two run folders are built once per module: a play run stored with screenshots (plus one
hand-made trajectory whose instruction, typed text and action text carry ``<script>`` payloads),
and a screenshot-less run with a curve and TensorBoard scalars, as training writes them. The
overlay checks are references (the pixel at a tap point has the overlay colour), not smoke tests.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from distrl.cli.view_cmd import run as view_command
from distrl.config.schema import RunConfig
from distrl.core.action import Action
from distrl.core.observation import Observation, UIElement
from distrl.core.task import Task
from distrl.core.trajectory import Step, Trajectory
from distrl.errors import InputError
from distrl.runtime.play import play
from distrl.store import TrajectoryStore
from distrl.viewer import build_view
from distrl.viewer.overlay import (
    OVERLAY_COLOUR,
    WIREFRAME_LABEL_HEIGHT,
    WIREFRAME_SIZE,
    draw_action,
    wireframe,
)
from distrl.viewer.serve import make_server

PLAY_EPISODES = 5
SCREEN = (720, 360)  # height, width of the hand-made screenshots
TAP_YX = (0.25, 0.5)
SCRIPT_INSTRUCTION = "<script>window.__pwned = 1;</script>Open <b>Settings</b> & check"
SCRIPT_TYPED = '<img src=x onerror="window.__pwned = 2">'
SCRIPT_ACTION_TEXT = '</pre><script>window.__pwned = 3;</script>Action Decision: "x"'
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


def _tap_pixel(size_wh: tuple[int, int], top: int = 0) -> tuple[int, int]:
    """Where a tap at TAP_YX lands on an image of ``size_wh`` whose screen starts at ``top``."""
    width, height = size_wh
    return (round(TAP_YX[1] * (width - 1)), top + round(TAP_YX[0] * (height - 1)))


def _hostile_trajectory() -> Trajectory:
    """A two-step trajectory whose texts are HTML/JS payloads, stored newest of its run."""
    screen = np.full((*SCREEN, 3), 200, dtype=np.uint8)
    elements = (UIElement("Settings", (0.3, 0.2, 0.7, 0.3), True, "id/settings", "icon"),)
    task = Task("hostile-0", SCRIPT_INSTRUCTION, "general", "test", spec={"template": "xss_probe"})
    observation = Observation(screen, SCRIPT_INSTRUCTION, elements)
    steps = [
        Step(observation, Action.tap(*TAP_YX), 0.0, False, -0.5, 1.25, 3, SCRIPT_ACTION_TEXT),
        Step(observation, Action.type_text(SCRIPT_TYPED), 1.0, True, -0.1, 0.5, 4),
    ]
    return Trajectory(
        task,
        steps,
        success=True,
        worker_id="worker-7",
        trajectory_id="hostile-0",
        started_at=4.0e9,
        finished_at=4.0e9 + 1,  # the newest trajectory of the run
        final_observation=observation,
        metadata={"learner_version": "5"},
    )


def _play_run(root: Path, save_screenshots: bool) -> Path:
    cfg = RunConfig()
    cfg.run_root = str(root)
    cfg.seed = 3
    cfg.play.policy = "noisy"
    cfg.play.episodes = PLAY_EPISODES
    cfg.play.save_screenshots = save_screenshots
    return play(cfg).run_dir


@pytest.fixture(scope="module")
def play_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = _play_run(tmp_path_factory.mktemp("play"), save_screenshots=True)
    TrajectoryStore(run_dir / "trajectories", save_screenshots=True).append([_hostile_trajectory()])
    return run_dir


@pytest.fixture(scope="module")
def train_like_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Screenshot-less trajectories, a curve and TensorBoard scalars: what training leaves."""
    from torch.utils.tensorboard import SummaryWriter

    run_dir = _play_run(tmp_path_factory.mktemp("train"), save_screenshots=False)
    curve = [{"minutes": m, "updates": 10 * m, "success": 0.1 * m} for m in range(4)]
    (run_dir / "curve.json").write_text(json.dumps(curve))
    with SummaryWriter(str(run_dir / "tensorboard")) as writer:
        for update in range(5):
            writer.add_scalar("learner/loss", 1.0 / (update + 1), update)
            writer.add_scalar("learner/staleness_mean", update % 3, update)
            writer.add_scalar("curriculum/weight/open_app", 0.1 * update, update)
            writer.add_scalar("curriculum/success/open_app", 0.2 * update, update)
    return run_dir


@pytest.fixture(scope="module")
def play_view(play_run: Path):
    return build_view(play_run)


@pytest.fixture(scope="module")
def train_view(train_like_run: Path):
    return build_view(train_like_run)


# -- overlays (references) -------------------------------------------------------------------------


def test_tap_marks_the_tap_point_with_the_overlay_colour() -> None:
    blank = Image.new("RGB", (360, 720), (255, 255, 255))
    drawn = draw_action(blank, Action.tap(*TAP_YX))
    assert drawn.getpixel(_tap_pixel(drawn.size)) == OVERLAY_COLOUR
    assert drawn.getpixel((5, 5)) == (255, 255, 255)  # the mark stays local
    assert blank.getpixel(_tap_pixel(blank.size)) == (255, 255, 255)  # input left untouched


def test_swipe_arrow_covers_its_midpoint() -> None:
    blank = Image.new("RGB", (360, 720), (255, 255, 255))
    drawn = draw_action(blank, Action.swipe((0.8, 0.5), (0.2, 0.5)))
    assert drawn.getpixel((round(0.5 * 359), round(0.5 * 719))) == OVERLAY_COLOUR


def test_wireframe_is_fixed_size_and_taps_land_below_its_label() -> None:
    elements = [UIElement("OK", (0.1, 0.1, 0.9, 0.2), True, "id/ok", "button")]
    image = wireframe(elements)
    assert image.size == (WIREFRAME_SIZE[0], WIREFRAME_SIZE[1] + WIREFRAME_LABEL_HEIGHT)
    drawn = draw_action(image, Action.tap(*TAP_YX), top_inset=WIREFRAME_LABEL_HEIGHT)
    assert drawn.getpixel(_tap_pixel(WIREFRAME_SIZE, WIREFRAME_LABEL_HEIGHT)) == OVERLAY_COLOUR


def test_badge_actions_draw_something() -> None:
    blank = Image.new("RGB", (360, 720), (255, 255, 255))
    for action in (Action.press_back(), Action.complete(), Action.invalid("no marker")):
        assert np.asarray(draw_action(blank, action)).min() < 255


# -- the report model ------------------------------------------------------------------------------


def test_report_lists_newest_first_with_stored_step_images(play_view) -> None:
    report = play_view.report
    assert (report.trajectories_shown, report.trajectories_total) == (PLAY_EPISODES + 1,) * 2
    newest = report.trajectories[0]
    assert newest.trajectory_id == "hostile-0" and newest.screenshots_stored
    assert [s.staleness for s in newest.steps[:2]] == [2, 1]  # learner version 5 - policy 3, 4
    # End to end: the stored step image carries the tap mark exactly at the tap point.
    image = Image.open(play_view.index.parent / newest.steps[0].image)
    assert image.size == (SCREEN[1], SCREEN[0])
    assert image.getpixel(_tap_pixel(image.size)) == OVERLAY_COLOUR


def test_screenshot_less_run_gets_wireframes_and_plots(train_view) -> None:
    report = train_view.report
    assert report.trajectories and not any(t.screenshots_stored for t in report.trajectories)
    titles = [plot.title for plot in report.plots]
    assert titles[0] == "Test success" and "Learner losses" in titles and "Staleness" in titles
    assert {"Curriculum weights", "Curriculum success"} <= set(titles)  # per task family
    assert "Success replay" not in titles  # no such tags in this run
    for plot in report.plots:
        assert (train_view.index.parent / plot.image).stat().st_size > 0
    step = report.trajectories[0].steps[0]
    with Image.open(train_view.index.parent / step.image) as image:
        assert image.size == (WIREFRAME_SIZE[0], WIREFRAME_SIZE[1] + WIREFRAME_LABEL_HEIGHT)
    assert "wireframe (no screenshot stored)" in train_view.index.read_text(encoding="utf-8")


def test_max_trajectories_keeps_the_newest(play_run: Path, tmp_path: Path) -> None:
    result = build_view(play_run, tmp_path / "out", max_trajectories=2)
    assert (result.trajectories_shown, result.trajectories_total) == (2, PLAY_EPISODES + 1)
    assert result.report.trajectories[0].trajectory_id == "hostile-0"
    page = result.index.read_text(encoding="utf-8")
    assert f"Showing the newest 2 of {PLAY_EPISODES + 1} trajectories." in page
    assert page.count('class="traj"') == 2


def test_payloads_are_escaped_in_the_page(play_view) -> None:
    page = play_view.index.read_text(encoding="utf-8")
    assert "<script>window.__pwned" not in page and "<img src=x" not in page
    assert "&lt;script&gt;window.__pwned = 1;&lt;/script&gt;" in page


# -- the command -----------------------------------------------------------------------------------


def _args(run_dir: Path, out: Path | None = None, **extra: object) -> argparse.Namespace:
    values = {"max_trajectories": 300, "serve": False, "view_port": 8765, "json": True, **extra}
    return argparse.Namespace(run_dir=str(run_dir), view_out=out and str(out), **values)


def test_command_prints_json(play_run: Path, tmp_path: Path, capsys) -> None:
    assert view_command(_args(play_run, tmp_path / "v"), []) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == {
        "report": str(tmp_path / "v" / "index.html"),
        "trajectories_shown": PLAY_EPISODES + 1,
        "trajectories_total": PLAY_EPISODES + 1,
    }


def test_command_errors_name_the_folder(train_like_run: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        view_command(_args(tmp_path / "missing"), [])
    (tmp_path / "stuff").mkdir()
    with pytest.raises(InputError, match="is not a run folder"):
        view_command(_args(tmp_path / "stuff"), [])
    # No trajectories: an error, but the curves are still rendered.
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(train_like_run / "curve.json", bare / "curve.json")
    with pytest.raises(InputError, match="no stored trajectories"):
        view_command(_args(bare), [])
    assert (bare / "view" / "img" / "plot-curve.png").exists()
    assert "No stored trajectories." in (bare / "view" / "index.html").read_text(encoding="utf-8")


def test_server_binds_loopback_and_serves_the_report(play_view) -> None:
    server = make_server(play_view.index.parent, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        assert host == "127.0.0.1"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=5) as reply:
            assert reply.status == 200 and b'id="traj-list"' in reply.read()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# -- in a real browser -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(chromium: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"):
        options.add_argument(flag)
    # Chromium leaves its singleton-socket folder in TMPDIR even after a clean quit: keep it in
    # pytest's temporary folder rather than /tmp.
    scratch = tmp_path_factory.mktemp("chromium-tmp")
    service = Service(str(CHROMEDRIVER), env={**os.environ, "TMPDIR": str(scratch)})
    driver = webdriver.Chrome(service=service, options=options)
    try:
        yield driver
    finally:
        driver.quit()


def _visible(driver) -> int:
    from selenium.webdriver.common.by import By

    return sum(
        1 for e in driver.find_elements(By.CSS_SELECTOR, "#traj-list .traj") if e.is_displayed()
    )


def _wait_for_image(driver, css: str) -> int:
    from selenium.webdriver.support.ui import WebDriverWait

    script = f"var i = document.querySelector({css!r}); return i && i.complete && i.naturalWidth;"
    return WebDriverWait(driver, 10).until(lambda d: d.execute_script(script))


def test_page_in_chromium(browser, play_view, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    report = play_view.report
    browser.get(play_view.index.as_uri())
    entries = browser.find_elements(By.CSS_SELECTOR, "#traj-list .traj")
    assert len(entries) == report.trajectories_shown

    failures = sum(not t.success for t in report.trajectories)
    Select(browser.find_element(By.ID, "f-success")).select_by_value("failure")
    assert _visible(browser) == failures
    assert browser.find_element(By.ID, "f-count").text == f"{failures} of {len(entries)} listed"
    Select(browser.find_element(By.ID, "f-success")).select_by_value("")
    Select(browser.find_element(By.ID, "f-worker")).select_by_value("worker-7")
    assert _visible(browser) == 1
    Select(browser.find_element(By.ID, "f-worker")).select_by_value("")
    Select(browser.find_element(By.ID, "f-family")).select_by_value("xss_probe")
    assert _visible(browser) == 1
    Select(browser.find_element(By.ID, "f-family")).select_by_value("")
    assert _visible(browser) == len(entries)

    # Open the hostile trajectory: its payloads show as text and never run.
    browser.find_element(By.CSS_SELECTOR, '.traj[data-worker="worker-7"]').click()
    detail = browser.find_element(By.ID, "t0000")
    assert detail.is_displayed()
    assert detail.find_element(By.CSS_SELECTOR, ".instruction").text == SCRIPT_INSTRUCTION
    assert SCRIPT_TYPED in detail.find_element(By.CSS_SELECTOR, "pre.typed").text
    assert detail.find_element(By.CSS_SELECTOR, "pre.action-text").text == SCRIPT_ACTION_TEXT
    assert browser.execute_script("return window.__pwned === undefined;")
    assert _wait_for_image(browser, "#t0000 .step img") == SCREEN[1]

    browser.save_screenshot(str(tmp_path / "page.png"))
    with Image.open(tmp_path / "page.png") as shot:
        assert shot.size[0] > 0 and np.asarray(shot).std() > 0


def test_wireframe_page_in_chromium(browser, train_view) -> None:
    from selenium.webdriver.common.by import By

    browser.get(train_view.index.as_uri() + "#t0001")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#traj-list .traj")) == PLAY_EPISODES
    assert _wait_for_image(browser, "#t0001 .step img") == WIREFRAME_SIZE[0]
    assert "wireframe (no screenshot stored)" in browser.find_element(By.ID, "t0001").text.lower()
    assert _wait_for_image(browser, ".plots img") > 0
