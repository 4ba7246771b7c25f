"""One headless Chromium that runs MiniWoB++ task pages, built on the ``miniwob`` package.

The package's :class:`~miniwob.selenium_instance.SeleniumInstance` finds Chromium only through the
process-wide ``MINIWOB_CHROME_BINARY`` / ``MINIWOB_CHROMEDRIVER`` variables and fixes one task
page per browser. A device here owns one browser for its whole life and is handed tasks one by
one, and several devices in one process may point at different binaries, so this subclass takes
the binaries as arguments, starts Chromium itself (headless, ``--no-sandbox`` because workers run
as root) and can switch task pages without a restart. Everything else (seeding, ending and
starting episodes, the DOM walker, the action executors) is the package's own.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from miniwob.action import Action as MiniWoBAction
from miniwob.action import ActionSpaceConfig
from miniwob.dom import DOMElement
from miniwob.screenshot import get_screenshot, pil_to_numpy_array
from miniwob.selenium_actions import execute_action_on_chromedriver
from miniwob.selenium_instance import HTML_DIR, SeleniumInstance
from selenium import webdriver
from selenium.webdriver.chrome.service import Service as ChromeService
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.wait import WebDriverWait

from distrl.config.schema import MiniWoBConfig

DEFAULT_CHROME_BINARY = "/usr/bin/chromium"
DEFAULT_CHROMEDRIVER = "/usr/bin/chromedriver"
#: The longest delay ``setTimeout`` accepts (about 24.8 days): "no in-page time limit".
NO_TIME_LIMIT_MS = 2**31 - 1
#: Seconds to wait for a task page's sync cover after loading it.
PAGE_LOAD_SECONDS = 10.0

_CHROME_ARGS = (
    "--headless=new",
    "--no-sandbox",  # workers run as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--disable-dev-shm-usage",  # containers often have a 64 MB /dev/shm
    "--disable-extensions",
    "--mute-audio",
    "--no-first-run",
    "--hide-scrollbars",
)

# One round trip returns everything an observation and a reward need.
_SNAPSHOT_JS = (
    "return {utterance: core.getUtterance(), dom: core.getDOMInfo(),"
    " done: WOB_DONE_GLOBAL, raw_reward: WOB_RAW_REWARD_GLOBAL, reason: WOB_REWARD_REASON};"
)


def resolve_binaries(config: MiniWoBConfig) -> tuple[str, str]:
    """(chromium, chromedriver): the config's paths, else the MINIWOB_* variables, else Debian's."""
    chrome = (
        config.chrome_binary or os.environ.get("MINIWOB_CHROME_BINARY") or DEFAULT_CHROME_BINARY
    )
    driver = config.chromedriver or os.environ.get("MINIWOB_CHROMEDRIVER") or DEFAULT_CHROMEDRIVER
    return chrome, driver


def descendant_pids(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux ``/proc``); empty where that is not available."""
    out: list[int] = []
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children") as handle:
                    children = [int(child) for child in handle.read().split()]
            except OSError:
                continue
            out.extend(children)
            frontier.extend(children)
    return out


def _is_chromium(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return b"chrom" in handle.read()
    except OSError:
        return False


def memory_bytes(pids: list[int]) -> tuple[int, int]:
    """(resident, proportional) memory of ``pids`` in bytes. Resident sums each process's RSS,
    counting pages Chromium's processes share once per process; proportional (PSS) splits
    shared pages among their sharers, so it is the honest cost of one more browser. PSS falls
    back to RSS where ``/proc/<pid>/smaps_rollup`` cannot be read."""
    rss = pss = 0
    page = os.sysconf("SC_PAGE_SIZE")
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm") as handle:
                resident = int(handle.read().split()[1]) * page
        except (OSError, ValueError, IndexError):
            continue
        rss += resident
        pss += _pss_bytes(pid, resident)
    return rss, pss


def _pss_bytes(pid: int, fallback: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return fallback


def task_page(name: str) -> Path:
    """The HTML file of MiniWoB++ task ``name`` (it may not exist)."""
    return HTML_DIR / "miniwob" / f"{name}.html"


@dataclass(frozen=True)
class PageState:
    """What the page shows now: the utterance, the DOM tree and the episode's reward state."""

    utterance: str
    root: DOMElement
    done: bool
    raw_reward: float
    reason: Any


class MiniWoBBrowser(SeleniumInstance):
    """A headless Chromium with one MiniWoB++ task page open; ``start()`` launches it."""

    def __init__(
        self,
        task_name: str,
        chrome_binary: str,
        chromedriver: str,
        width: int,
        height: int,
        time_limit_ms: int = NO_TIME_LIMIT_MS,
    ):
        # A field extractor is the package's utterance parser for its "fields" observation; the
        # env does not use fields, and not every task has one, so pass a trivial one.
        super().__init__(
            index=0, subdomain=task_name, headless=True, field_extractor=lambda utterance: []
        )
        self.task_name = task_name
        self.chrome_binary = chrome_binary
        self.chromedriver = chromedriver
        # The area observed and clicked: the package's 160x210, or more if configured.
        self.task_width = width
        self.task_height = height
        self.time_limit_ms = time_limit_ms
        #: Every process id seen under chromedriver; a killed Chromium's helpers are re-parented
        #: away from it, and :meth:`shutdown` must still find them.
        self.seen_pids: set[int] = set()
        #: This browser's TMPDIR (see :meth:`create_driver`), removed on shutdown.
        self.scratch_dir: str | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    def create_driver(self) -> None:
        """Launch Chromium on the task page (overrides the package's env-variable lookup)."""
        options = webdriver.ChromeOptions()
        for argument in _CHROME_ARGS:
            options.add_argument(argument)
        # Room for the task area and the package's reward display beside it.
        window_width = max(self.window_width, self.task_width + 200)
        window_height = max(self.window_height, self.task_height + 200)
        options.add_argument(f"--window-size={window_width},{window_height}")
        options.binary_location = self.chrome_binary
        # chromedriver's temporary profile and Chromium's singleton-socket folder go to TMPDIR,
        # and Chromium leaves the socket folder behind even after a clean quit: one folder in
        # /tmp per browser ever started. A scratch TMPDIR of our own is removed on shutdown.
        self.scratch_dir = tempfile.mkdtemp(prefix="distrl-chromium-")
        service = ChromeService(
            executable_path=self.chromedriver, env={**os.environ, "TMPDIR": self.scratch_dir}
        )
        self.driver = webdriver.Chrome(service=service, options=options)
        self.driver.set_page_load_timeout(PAGE_LOAD_SECONDS)
        self._fit_viewport()
        self._load_page()
        self.seen_pids.update(self.process_ids())

    def _fit_viewport(self) -> None:
        """Grow the window until the viewport holds the task area (headless window sizes include
        browser chrome, so the viewport is smaller than ``--window-size`` by a build-dependent
        amount); screenshots are cropped from the viewport."""
        inner_w, inner_h = self.driver.execute_script(
            "return [window.innerWidth, window.innerHeight];"
        )
        if inner_w < self.task_width or inner_h < self.task_height:
            size = self.driver.get_window_size()
            self.driver.set_window_size(
                size["width"] + max(0, self.task_width - inner_w),
                size["height"] + max(0, self.task_height - inner_h),
            )

    def _load_page(self) -> None:
        self.driver.get(self.url)
        WebDriverWait(self.driver, PAGE_LOAD_SECONDS).until(
            expected_conditions.element_to_be_clickable((By.ID, self.SYNC_SCREEN_ID))
        )
        self.inner_width, self.inner_height = self.driver.execute_script(
            "return [window.innerWidth, window.innerHeight];"
        )

    def open_task(self, task_name: str) -> None:
        """Load another task's page in this browser (cheaper than a new browser)."""
        if task_name == self.task_name:
            return
        self.url = task_page(task_name).as_uri()
        self.subdomain = self.task_name = task_name
        self._load_page()
        self.seen_pids.update(self.process_ids())

    def begin_task(self, seed: Any = None) -> None:
        """Start an episode with this browser's in-page time limit instead of the task's own."""
        self.driver.execute_script(f"core.EPISODE_MAX_TIME = {int(self.time_limit_ms)};")
        super().begin_task(seed=seed)

    @property
    def driver_pid(self) -> int | None:
        """The chromedriver process id (Chromium runs as its child)."""
        driver = getattr(self, "driver", None)
        process = getattr(getattr(driver, "service", None), "process", None)
        return None if process is None else int(process.pid)

    def process_ids(self) -> list[int]:
        """chromedriver and every process under it (Chromium's browser, renderers, helpers)."""
        root = self.driver_pid
        return [] if root is None else [root, *descendant_pids(root)]

    def shutdown(self) -> None:
        """Quit the browser, also when it is half dead: quit the session if it answers, stop
        chromedriver, then kill whatever it started that is still there (a Chromium whose
        driver died would otherwise live on). Never raises."""
        pids = sorted(self.seen_pids.union(self.process_ids()))
        driver = getattr(self, "driver", None)
        if driver is not None:
            with contextlib.suppress(Exception):
                driver.quit()
            with contextlib.suppress(Exception):
                driver.service.stop()
        for pid in reversed(pids):
            if _is_chromium(pid):  # still there and still ours (not a recycled pid)
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        if self.scratch_dir is not None:
            shutil.rmtree(self.scratch_dir, ignore_errors=True)
            self.scratch_dir = None
        self.died = True

    # -- state and input -------------------------------------------------------------------------
    def snapshot(self) -> PageState:
        state = self.driver.execute_script(_SNAPSHOT_JS)
        return PageState(
            utterance=str(state["utterance"]),
            root=DOMElement(state["dom"]),
            done=bool(state["done"]),
            raw_reward=float(state["raw_reward"] or 0.0),
            reason=state["reason"],
        )

    def screenshot(self) -> np.ndarray:
        """The task area as a ``height x width x 3`` uint8 array."""
        image = get_screenshot(
            self.driver,
            true_width=self.inner_width,
            true_height=self.inner_height,
            crop_width=self.task_width,
            crop_height=self.task_height,
        )
        return pil_to_numpy_array(image)

    def execute(self, action: MiniWoBAction, space: ActionSpaceConfig) -> None:
        execute_action_on_chromedriver(action, self.cached_fields, space, self.driver)

    def is_done(self) -> bool:
        return bool(self.driver.execute_script("return WOB_DONE_GLOBAL;"))
