"""MiniWoB++ in headless Chromium as a :class:`~distrl.envs.protocol.DeviceEnv`: one browser.

An episode: ``reset(task)`` opens the task's page (starting Chromium on first use, or after a
crash), seeds the page's generator with an episode seed drawn from the task's split and starts
the episode; the observation's instruction is the episode's utterance ("Click on the "OK"
button."), the elements are the page's DOM flattened by :mod:`~distrl.envs.miniwob.dom`, the
screenshot is the 160x210 task area. Each ``step(action)`` runs the action in the page
(:mod:`~distrl.envs.miniwob.actions`) and reads the page back in one round trip.

Ending and reward, as for PhoneSim: the episode ends when the page ends it (the task's own
success or failure check), when the agent declares STATUS_TASK_COMPLETE / IMPOSSIBLE, or at the
task's horizon (``info["truncated"]``). The reward is binary success, 1.0 when the page's raw
reward is positive at the end (``info["raw_reward"]`` keeps the page's value, which is -1 for a
wrong click and partial credit on some tasks); a declared or truncated episode the page has not
ended scores 0.

Time limit: MiniWoB++ pages end an episode after 10 s of wall time (a few tasks allow more), a
limit meant for humans and fast scripted agents. Here steps wait in inference batches, replay
queues and device-latency models, so wall time says nothing about the agent, and by default the
in-page limit is lifted (set to ``setTimeout``'s maximum, ~24.8 days): the horizon bounds the
episode. ``config.time_limit_seconds`` restores a wall-clock limit; a page that times out ends
the episode as a failure with ``info["timed_out"]``.

Faults: any WebDriver error, lost chromedriver connection or dead Chromium during ``reset`` or
``step`` raises :class:`~distrl.core.faults.DeviceCrashed` (a WebDriver timeout raises
:class:`~distrl.core.faults.DeviceHung`; a page that stops answering is noticed after
Selenium's HTTP timeout of 120 s, so a runtime step timeout shorter than that is the faster
guard); the browser is torn down and the next ``reset`` starts a fresh one, so the runtime's
drop-and-reset handles it like an emulator crash.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
from selenium.common.exceptions import TimeoutException, WebDriverException
from urllib3.exceptions import HTTPError as Urllib3Error
from urllib3.exceptions import ReadTimeoutError

from distrl.config.schema import MiniWoBConfig
from distrl.core.action import Action
from distrl.core.faults import DeviceCrashed, DeviceFault, DeviceHung
from distrl.core.observation import NO_SCREENSHOT, Observation, UIElement
from distrl.core.task import Task
from distrl.envs.miniwob.actions import ACTION_SPACE, to_miniwob
from distrl.envs.miniwob.browser import (
    NO_TIME_LIMIT_MS,
    MiniWoBBrowser,
    PageState,
    memory_bytes,
    resolve_binaries,
)
from distrl.envs.miniwob.dom import page_elements
from distrl.envs.miniwob.solver import expert_action
from distrl.envs.miniwob.tasks import SEED_RANGES, check_task_name
from distrl.envs.protocol import StepRules
from distrl.errors import InputError

__all__ = ["MiniWoBEnv", "MiniWoBSetupError", "MiniWoBTaskError"]

#: What a dead or unreachable browser raises through Selenium (a killed chromedriver surfaces as
#: urllib3 / socket errors rather than WebDriver errors).
_BROWSER_ERRORS = (WebDriverException, Urllib3Error, ConnectionError, OSError)


class MiniWoBTaskError(InputError):
    """A task this backend cannot run (wrong backend, unknown MiniWoB++ task)."""


class MiniWoBSetupError(InputError):
    """Chromium or chromedriver is missing."""


class MiniWoBEnv(StepRules):
    """One headless Chromium running MiniWoB++ tasks.

    >>> from distrl.envs.miniwob.tasks import miniwob_tasks
    >>> env = MiniWoBEnv(MiniWoBConfig(tasks=["click-test"]))  # doctest: +SKIP
    >>> obs = env.reset(miniwob_tasks(env.config, "train")[0])  # doctest: +SKIP
    >>> obs.instruction  # doctest: +SKIP
    'Click the button.'
    >>> env.step(env.expert_action())[1:3]  # doctest: +SKIP
    (1.0, True)
    >>> env.close()  # doctest: +SKIP
    """

    def __init__(
        self,
        config: MiniWoBConfig | None = None,
        seed: int = 0,
        device_id: str = "miniwob-0",
    ):
        self.config = config if config is not None else MiniWoBConfig()
        self.seed = seed
        self.device_id = device_id
        self.chrome_binary, self.chromedriver = resolve_binaries(self.config)
        time_limit = self.config.time_limit_seconds
        self.time_limit_ms = (
            NO_TIME_LIMIT_MS if time_limit is None else max(1, int(time_limit * 1000))
        )
        #: False: observations carry a 1x1 black screenshot (for element-only policies; saves
        #: the screenshot's ~10-20 ms per step).
        self.screenshots = self.config.screenshots
        self.browser: MiniWoBBrowser | None = None
        self.browser_starts = 0
        self.episodes = 0
        self.task: Task | None = None
        self.task_name = ""
        self.episode_seed: int | None = None
        self.reset_seconds = 0.0
        self.steps = 0
        self.done = True
        self.crashed = False
        self.actions: list[Action] = []
        self.state: PageState | None = None
        self.elements: tuple[UIElement, ...] = ()

    # -- DeviceEnv -------------------------------------------------------------------------------
    def reset(self, task: Task) -> Observation:
        name = self._task_name(task)
        self.episode_seed = self._episode_seed(task)
        self.episodes += 1
        self.task, self.task_name = task, name
        self.steps, self.done, self.actions = 0, True, []
        started = time.perf_counter()
        try:
            browser = self._browser(name)
            browser.open_task(name)
            browser.mode = str(task.spec.get("data_mode", "train"))
            browser.force_stop()
            browser.begin_task(seed=self.episode_seed)
            observation = self._observe(browser)
        except _BROWSER_ERRORS as error:
            raise self._fault(error, "reset") from error
        except RuntimeError as error:  # the package's "does not load properly" after a start
            raise self._fault(error, "reset") from error
        self.reset_seconds = time.perf_counter() - started
        self.crashed = False
        self.done = False
        return observation

    def step(self, action: Action) -> tuple[Observation, float, bool, dict[str, Any]]:
        if self.crashed:
            raise DeviceCrashed(f"device {self.device_id} is down; reset it to restart")
        if self.done or self.browser is None or self.task is None:
            raise RuntimeError("step() called on a finished episode; call reset(task) first")
        browser = self.browser
        commands = to_miniwob(action, browser.task_width, browser.task_height)
        started = time.perf_counter()
        try:
            for index, command in enumerate(commands):
                # A drag's press may already end the episode; a further click would then hit
                # the page's START cover and begin an episode nobody reset.
                if index > 0 and browser.is_done():
                    break
                browser.execute(command, ACTION_SPACE)
            self.steps += 1
            self.actions.append(action)
            observation = self._observe(browser)
        except _BROWSER_ERRORS as error:
            raise self._fault(error, "step") from error
        seconds = time.perf_counter() - started
        state = self.state
        assert state is not None
        success = state.done and state.raw_reward > 0
        info = self._finish_step(
            action,
            event="+".join(ACTION_SPACE.action_types[c["action_type"]].value for c in commands),
            success=success,
            device_seconds=seconds,
            task_over=state.done,
            raw_reward=state.raw_reward,
            page_done=state.done,
            reason=state.reason,
            timed_out=state.done and state.reason == "timed out",
            task=self.task_name,
            episode_seed=self.episode_seed,
        )
        return observation, float(success), self.done, info

    def close(self) -> None:
        """Quit the browser (a later reset starts a new one)."""
        if self.browser is not None:
            self.browser.shutdown()
            self.browser = None
        self.done = True

    # -- helpers ---------------------------------------------------------------------------------
    def expert_action(self) -> Action:
        """The scripted expert's next action (reads the utterance and the element list)."""
        if self.state is None or self.done:
            raise RuntimeError("expert_action() needs a running episode; call reset(task) first")
        return expert_action(self.task_name, self.state.utterance, self.elements)

    def observe(self) -> Observation:
        """The current observation, read from the page again."""
        if self.browser is None:
            raise RuntimeError("no browser yet; call reset(task) first")
        try:
            return self._observe(self.browser)
        except _BROWSER_ERRORS as error:
            raise self._fault(error, "observe") from error

    def memory_bytes(self) -> tuple[int, int]:
        """(RSS, PSS) in bytes of this device's chromedriver and Chromium processes; (0, 0)
        without a browser. See :func:`~distrl.envs.miniwob.browser.memory_bytes`."""
        return (0, 0) if self.browser is None else memory_bytes(self.browser.process_ids())

    def _observe(self, browser: MiniWoBBrowser) -> Observation:
        self.state = browser.snapshot()
        self.elements = page_elements(self.state.root, browser.task_width, browser.task_height)
        return Observation(
            screenshot=browser.screenshot() if self.screenshots else NO_SCREENSHOT,
            instruction=self.state.utterance,
            elements=self.elements,
            previous_actions=tuple(self.actions),
        )

    def _task_name(self, task: Task) -> str:
        if task.backend != "miniwob":
            raise MiniWoBTaskError(
                f"task {task.task_id} is for backend {task.backend!r}, not miniwob"
            )
        name = task.spec.get("task")
        if not isinstance(name, str):
            raise MiniWoBTaskError(f"task {task.task_id}: spec needs a 'task' name, got {name!r}")
        try:
            return check_task_name(name)
        except InputError as error:
            raise MiniWoBTaskError(f"task {task.task_id}: {error}") from None

    def _episode_seed(self, task: Task) -> int:
        """``spec["seed"]`` if pinned, else a draw from ``spec["seeds"]`` (default: the task's
        split range), reproducible from this device's seed and episode count."""
        if "seed" in task.spec:
            return int(task.spec["seed"])
        start, stop = task.spec.get("seeds", SEED_RANGES.get(task.split, SEED_RANGES["train"]))
        draw = np.random.default_rng([self.seed, self.episodes]).integers(int(start), int(stop))
        return int(draw)

    def _browser(self, task_name: str) -> MiniWoBBrowser:
        """The running browser, or a fresh one (first reset, or after a crash)."""
        if self.browser is not None and not self.crashed and not self.browser.died:
            return self.browser
        if self.browser is not None:
            self.browser.shutdown()
            self.browser = None
        for path, what, key in (
            (self.chrome_binary, "Chromium", "chrome_binary"),
            (self.chromedriver, "chromedriver", "chromedriver"),
        ):
            if not os.access(path, os.X_OK):
                raise MiniWoBSetupError(
                    f"{what} not found at {path}; install it (Debian: apt-get install chromium "
                    f"chromium-driver) or set env.miniwob.{key} or MINIWOB_{key.upper()}"
                )
        browser = MiniWoBBrowser(
            task_name,
            self.chrome_binary,
            self.chromedriver,
            self.config.width,
            self.config.height,
            self.time_limit_ms,
        )
        self.browser = browser  # before start(): a failed start still gets shut down
        self.browser_starts += 1
        browser.start()
        return browser

    def _fault(self, error: BaseException, during: str) -> DeviceFault:
        """Tear the browser down and say why; the next reset starts a new one."""
        self.crashed = True
        self.done = True
        if self.browser is not None:
            self.browser.shutdown()
            self.browser = None
        hung = isinstance(error, (TimeoutException, ReadTimeoutError))
        kind = DeviceHung if hung else DeviceCrashed
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return kind(f"device {self.device_id}: browser failed during {during}: {message}")
