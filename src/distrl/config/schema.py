"""The typed run configuration: one tree of validated sections, the only place raw values are read.

Every section is a :class:`ConfigSection` (pydantic, unknown keys rejected, assignments
re-validated), so a typo in a preset or a ``key=value`` override fails loudly at start-up instead of
silently falling back to a default hours into a run. Each field carries its range and a
description; :mod:`distrl.config.loader` turns pydantic's errors into one-line messages from those
alone, so adding a field never means writing a new check.

To add a section (``train``, ``policy``, ``algo``, ...) define a ``ConfigSection`` subclass and add
it to :class:`RunConfig` with ``Field(default_factory=...)``: presets, overrides, error messages and
:func:`~distrl.config.loader.config_to_yaml` pick it up without further code.

>>> cfg = RunConfig()
>>> cfg.env.phonesim.dynamics.popup_prob
0.25
>>> RunConfig(env={"phonesim": {"dynamics": DynamicsConfig.none()}}).env.phonesim.dynamics.popups
False
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from distrl.plugins import ALGORITHMS, ENV_BACKENDS, JUDGES, POLICIES, PluginKind

#: Longest string any config value may be (paths, URLs, names).
MAX_TEXT_CHARS = 4096
#: Longest run folder name (file systems allow 255 bytes per path component).
MAX_RUN_NAME_CHARS = 200
#: ``train.lr_schedule``'s values (:mod:`distrl.runtime.lr_schedule`).
LrScheduleKind = Literal["constant", "linear"]
#: The rewording edits (distrl.algos.phrasing_augmentation.ALL_EDITS).
PhrasingEditKind = Literal["delete", "swap", "insert", "mask"]


class ConfigSection(BaseModel):
    """Base of every config section: strict about keys, lenient about empty sections.

    ``extra="forbid"`` turns a misspelt key into an error; ``validate_assignment`` keeps a config
    valid when code edits it after loading; ``allow_inf_nan=False`` keeps ``.inf``/``.nan`` (valid
    YAML floats) out of timings and probabilities, where they would only break arithmetic later.
    Every number has an upper bound too, every list a longest length and every string
    ``MAX_TEXT_CHARS``: a value far past anything sensible (``batch_size=10**20``) fails here, at
    start-up, not minutes later when it is first used (the schema tests check that no field is
    left unbounded).
    """

    model_config = ConfigDict(
        extra="forbid",
        validate_assignment=True,
        allow_inf_nan=False,
        str_max_length=MAX_TEXT_CHARS,
    )

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul_characters(cls, value: Any) -> Any:
        """No string may hold a NUL: paths, names and URLs become C strings on their way to the
        operating system, which would fail on one with an error far from the setting."""
        texts = value if isinstance(value, list) else [value]
        if any(isinstance(text, str) and "\x00" in text for text in texts):
            raise ValueError("text cannot contain a NUL character")
        return value

    @model_validator(mode="before")
    @classmethod
    def _empty_subsections_mean_defaults(cls, data: Any) -> Any:
        """Treat ``section:`` with nothing under it (YAML null) as "all defaults".

        A preset whose only lines under a section are commented out parses to ``None``; rejecting
        that as "expected a mapping" would punish commenting, so such sub-sections are dropped and
        their defaults apply.
        """
        if not isinstance(data, dict):
            return data
        cleaned = dict(data)
        for name, field in cls.model_fields.items():
            annotation = field.annotation
            is_section = isinstance(annotation, type) and issubclass(annotation, BaseModel)
            if is_section and name in cleaned and cleaned[name] is None:
                del cleaned[name]
        return cleaned


def _plugin_name(kind: PluginKind) -> Any:
    """A name field of an extension point: a built-in name, ``module:attribute`` or an entry
    point (:mod:`distrl.plugins`; a module:attribute is imported when used, not here)."""
    return Annotated[str, AfterValidator(kind.check)]


BackendName = _plugin_name(ENV_BACKENDS)
PolicyName = _plugin_name(POLICIES)
AlgorithmName = _plugin_name(ALGORITHMS)
JudgeName = _plugin_name(JUDGES)


def _probability(default: float, description: str) -> Any:
    """A probability field: always in [0, 1]."""
    return Field(default=default, ge=0.0, le=1.0, description=description)


class DynamicsConfig(ConfigSection):
    """PhoneSim's "in the wild" dynamics: the distractions that make real device control hard.

    Each switch turns one kind of distraction on or off; its probability says how often it strikes.
    Training with them on and evaluating with them off (or the reverse) measures robustness.

    >>> DynamicsConfig.none().ads
    False
    """

    popups: bool = Field(default=True, description="Show pop-up dialogs that must be dismissed.")
    popup_prob: float = _probability(0.25, "Chance of a pop-up per app or page opened.")
    cookie_banners: bool = Field(default=True, description="Show cookie banners on web pages.")
    loading_screens: bool = Field(
        default=True, description="Show loading screens that last several steps."
    )
    loading_prob: float = _probability(0.3, "Chance that opening an app or page shows a loader.")
    loading_max_steps: int = Field(
        default=3, ge=1, le=10, description="Longest a loading screen lasts, in steps."
    )
    ads: bool = Field(default=True, description="Insert ads into search result lists.")
    ad_prob: float = _probability(0.35, "Chance that a result slot holds an ad.")
    layout_variation: bool = Field(
        default=True, description="Vary element positions and order between episodes."
    )
    theme_variation: bool = Field(
        default=True, description="Vary colours and themes (light/dark) between episodes."
    )
    keyboard_covers_content: bool = Field(
        default=True, description="The on-screen keyboard hides the lower part of the screen."
    )

    @classmethod
    def none(cls) -> DynamicsConfig:
        """A phone without distractions: every on/off switch off (probabilities keep defaults).

        Derived from the field types so a switch added later is covered too.
        """
        switches = {name: False for name, f in cls.model_fields.items() if f.annotation is bool}
        return cls(**switches)


class LatencyConfig(ConfigSection):
    """Emulator latency and fault model, so PhoneSim costs time like a real emulator.

    Defaults follow DigiRL's emulator environment: ~5 s for the screen to settle before each
    screenshot, 4 s more before typing, ~30 s after an emulator (re)start, and a hosted VLM judge
    call every step; hence ~7 s a step and ~45 s a reset, both lognormal (long tail). Off by
    default so tests and development run at CPU speed; ``time_scale`` compresses modelled time into
    real sleeping without changing the ratios that make asynchrony pay off.
    """

    enabled: bool = Field(default=False, description="Model emulator latency and faults at all.")
    time_scale: float = Field(
        default=1.0,
        ge=0.0,
        le=10.0,
        description="Real seconds slept per modelled second (0.01 compresses 100x; 0 = no sleep).",
    )
    step_seconds: float = Field(
        default=7.0,
        gt=0.0,
        le=3600.0,
        description="Mean modelled seconds per step (settle + judge).",
    )
    step_sigma: float = Field(
        default=0.35, ge=0.0, le=5.0, description="Lognormal sigma of step time (0 = constant)."
    )
    type_extra_seconds: float = Field(
        default=4.0, ge=0.0, le=600.0, description="Extra modelled seconds before a TYPE action."
    )
    reset_seconds: float = Field(
        default=45.0,
        gt=0.0,
        le=3600.0,
        description="Mean modelled seconds per reset (snapshot boot).",
    )
    reset_sigma: float = Field(
        default=0.5, ge=0.0, le=5.0, description="Lognormal sigma of reset time (0 = constant)."
    )
    device_speed_sigma: float = Field(
        default=0.3,
        ge=0.0,
        le=5.0,
        description="Lognormal sigma of a per-device speed factor (heterogeneous hardware).",
    )
    crash_prob: float = _probability(0.0, "Chance per step that the device crashes.")
    hang_prob: float = _probability(0.0, "Chance per step that the device hangs.")
    hang_timeout_seconds: float = Field(
        default=120.0,
        gt=0.0,
        le=86400.0,
        description="Modelled seconds a hung step blocks before it is declared dead.",
    )


class PhoneSimConfig(ConfigSection):
    """The embedded simulated phone: screen size, dynamics and latency."""

    width: int = Field(default=360, ge=120, le=2160, description="Screen width in pixels.")
    height: int = Field(default=720, ge=200, le=4000, description="Screen height in pixels.")
    screenshots: bool = Field(
        default=True,
        description="Render a screenshot every step (off: 1x1 black placeholders, faster steps "
        "and 0.78 MB less per step; training turns it off for policies that read only the "
        "element list).",
    )
    dynamics: DynamicsConfig = Field(
        default_factory=DynamicsConfig, description="In-the-wild distractions."
    )
    latency: LatencyConfig = Field(
        default_factory=LatencyConfig, description="Emulator latency and fault model."
    )


class EmulatorConfig(ConfigSection):
    """An emulator pool started from the user's Android SDK (unset binary: use running devices)."""

    binary: str | None = Field(
        default=None,
        max_length=4096,
        description="Path to the SDK's `emulator` binary; None: use devices the adb server "
        "already lists (phones, running emulators, fake-adb).",
    )
    avd: str | None = Field(
        default=None, max_length=256, description="AVD name to boot (`emulator -avd NAME`)."
    )
    count: int = Field(default=1, ge=1, le=64, description="Emulators to start.")
    first_port: int = Field(
        default=5554, ge=5554, le=5682, description="Console port of the first emulator (even)."
    )
    snapshot: str = Field(
        default="distrl",
        max_length=256,
        description="Snapshot loaded on every reset (saved once after boot).",
    )
    boot_timeout_seconds: float = Field(
        default=180.0,
        gt=0,
        le=3600.0,
        description="Time an emulator gets to report boot completed.",
    )
    extra_args: list[str] = Field(
        default_factory=list,
        max_length=64,
        description="Extra emulator arguments (e.g. ['-gpu', 'swiftshader']).",
    )


class AndroidConfig(ConfigSection):
    """Real Android devices through an adb server (``env.backend=android``)."""

    adb_host: str = Field(default="127.0.0.1", description="Host of the adb server.")
    adb_port: int = Field(default=5037, ge=1, le=65535, description="Port of the adb server.")
    serials: list[str] | None = Field(
        default=None,
        max_length=1024,
        description="Device serials to use; None: every device that is online.",
    )
    reset: Literal["snapshot", "home"] = Field(
        default="home",
        description="snapshot: load the emulator snapshot (needs `emulator`); home: press HOME "
        "and stop the apps the last episode opened.",
    )
    settle_seconds: float = Field(
        default=0.0,
        ge=0,
        le=600.0,
        description="Wait after an action before the screenshot (DigiRL waited 5 s on emulators).",
    )
    command_timeout_seconds: float = Field(
        default=30.0,
        gt=0,
        le=3600.0,
        description="Timeout of one adb command; past it the device is hung.",
    )
    emulator: EmulatorConfig = Field(
        default_factory=EmulatorConfig, description="Emulator pool from the Android SDK."
    )


class MiniWoBConfig(ConfigSection):
    """MiniWoB++ tasks in headless Chromium (``env.backend=miniwob``)."""

    tasks: list[str] = Field(
        default_factory=lambda: [
            "click-test",
            "click-button",
            "click-link",
            "focus-text",
            "enter-text",
        ],
        min_length=1,
        max_length=256,
        description="MiniWoB++ task names, as in the miniwob package (e.g. click-button).",
    )
    chrome_binary: str | None = Field(
        default=None,
        description="Chromium binary; None: $MINIWOB_CHROME_BINARY, else /usr/bin/chromium.",
    )
    chromedriver: str | None = Field(
        default=None,
        description="ChromeDriver; None: $MINIWOB_CHROMEDRIVER, else /usr/bin/chromedriver.",
    )
    horizon: int = Field(
        default=10, ge=1, le=1000, description="Steps before an episode is truncated."
    )
    screenshots: bool = Field(
        default=True,
        description="Capture a screenshot every step (off: ~3x faster steps, black screenshots; "
        "for policies that read only the element list).",
    )
    time_limit_seconds: float | None = Field(
        default=None,
        gt=0,
        le=3600.0,
        description="The page's own time limit (None: lifted; the horizon bounds episodes, since "
        "queueing and batched inference make wall-clock time no measure of the agent).",
    )
    width: int = Field(default=160, ge=160, le=2000, description="Task area width in CSS pixels.")
    height: int = Field(default=210, ge=210, le=2000, description="Task area height in CSS pixels.")


class GymEnvConfig(ConfigSection):
    """Any gymnasium env as devices (``env.backend=gym:ENV_ID``, e.g. gym:distrl/PhoneSim-v0)."""

    action: Literal["auto", "text", "dict"] = Field(
        default="auto",
        description="How actions are sent: text (the canonical action string, for a Text action "
        "space), dict (distrl's Dict action space) or auto (from the env's action space).",
    )
    tasks: int = Field(
        default=100,
        ge=1,
        le=1_000_000,
        description="Tasks per split; task i resets the env with its own seed (the test split's "
        "seeds lie apart from the train split's).",
    )
    horizon: int = Field(
        default=20, ge=1, le=1000, description="Steps before an episode is truncated."
    )


class EnvConfig(ConfigSection):
    """Which device backend runs which tasks."""

    backend: BackendName = Field(
        default="phonesim",
        max_length=1000,
        description="Device backend: phonesim (built in), android (adb), miniwob (MiniWoB++), "
        "gym:ENV_ID (any registered gymnasium env), or a plug-in: module:attribute or an entry "
        "point of group distrl.envs (docs/guide.md#plug-ins).",
    )
    suite: Literal["general", "webshop"] = Field(
        default="general", description="Task suite: AitW-style 'general' or 'webshop'."
    )
    split: Literal["train", "test"] = Field(default="train", description="Task split to draw from.")
    task_file: str | None = Field(
        default=None, description="JSONL file of tasks; when set it overrides suite and split."
    )
    phonesim: PhoneSimConfig = Field(
        default_factory=PhoneSimConfig, description="PhoneSim backend settings."
    )
    android: AndroidConfig = Field(
        default_factory=AndroidConfig, description="Android (adb) backend settings."
    )
    miniwob: MiniWoBConfig = Field(
        default_factory=MiniWoBConfig, description="MiniWoB++ backend settings."
    )
    gym: GymEnvConfig = Field(
        default_factory=GymEnvConfig, description="gymnasium backend settings (gym:ENV_ID)."
    )
    screenshot_encoding: Literal["png", "raw"] = Field(
        default="png",
        description="How devices hand out screenshots for a policy that reads them (and so how "
        "the replay, Ray and the store keep them): png, encoded losslessly at the device and "
        "decoded whenever the policy reads one (a PhoneSim screen: 23 KiB a step instead of "
        "760 KiB, ~20-30 ms to encode on a busy core); raw arrays (no CPU cost, unbounded).",
    )
    screenshot_max_side: int | None = Field(
        default=None,
        ge=16,
        le=8192,
        description="Downscale device screenshots to this longest side before anyone sees them "
        "(policy, replay, store); None: the device's resolution. Set it near the policy's own "
        "policy.vlm.screenshot_max_side: pixels beyond that are dropped by the prompt anyway.",
    )


class PlayConfig(ConfigSection):
    """Scripted play (``distrl play``): exercise a backend and make trajectories without RL."""

    policy: Literal["oracle", "noisy", "random"] = Field(
        default="oracle",
        description="oracle solves each task; noisy adds random slips; random acts at random.",
    )
    noise: float = _probability(0.3, "Noisy oracle: chance of a random action instead.")
    episodes: int = Field(default=20, ge=1, le=1_000_000, description="Episodes to play.")
    save_screenshots: bool = Field(
        default=False, description="Save screenshots with the trajectories (large)."
    )


#: Named DPER weight settings (w1 on mean |delta|, w2 on mean rho, w3 on mean entropy),
#: docs/design.md §7.6: ``current`` is this project's default, ``paper`` the paper's released code.
DPER_WEIGHTS: dict[str, tuple[float, float, float]] = {
    "current": (1.0, 0.1, 0.1),
    "paper": (50.0, 1.0, 0.01),
}


class ARideConfig(ConfigSection):
    """A-RIDE's constants (docs/design.md §7): Retrace critic, advantage policy update, DPER."""

    gamma: float = Field(default=0.95, gt=0, le=1, description="Discount factor.")
    lam: float = Field(default=0.95, ge=0, le=1, description="Retrace lambda (trace decay).")
    c_bar: float = Field(
        default=1.0, gt=0, le=100.0, description="Trace clip: c_t = lam * min(c_bar, rho)."
    )
    rho_bar: float = Field(
        default=1.0,
        gt=0,
        le=100.0,
        description="Clip of the importance ratio on TD errors and the policy.",
    )
    entropy_coef: float = Field(
        default=0.001, ge=0, le=10.0, description="beta: entropy bonus weight."
    )
    value_coef: float = Field(default=0.5, ge=0, le=100.0, description="Weight of the critic loss.")
    policy_objective: Literal["truncated_is", "ppo_clip", "clipped_is", "binarized_is"] = Field(
        default="clipped_is",
        description="truncated_is: -min(rho_bar, rho) A log pi (docs/design.md §7.5); ppo_clip: "
        "PPO's clipped surrogate on the same ratio; clipped_is: truncated IS whose "
        "negative-advantage steps stop once rho < 1 - ppo_clip_eps; binarized_is: "
        "-min(rho_bar, rho) 1[A > 0] log pi on the raw advantage (the paper's released actor).",
    )
    ppo_clip_eps: float = Field(default=0.2, gt=0, lt=1, description="PPO ratio clip epsilon.")
    normalize_advantages: bool = Field(
        default=True,
        description="Standardise advantages over the batch's valid steps before clamping.",
    )
    advantage_clip: float = Field(
        default=5.0,
        gt=0,
        le=1000.0,
        description="Advantages are clamped to [-clip, clip] for stability.",
    )
    max_log_ratio: float = Field(
        default=5.0, gt=0, le=50.0, description="log(pi/mu) is capped here before exponentiating."
    )
    dper_weights: Literal["current", "paper", "custom"] = Field(
        default="current",
        description="DPER priority weights (w1 on mean |delta|, w2 on mean rho, w3 on mean "
        "entropy): current (1, 0.1, 0.1), paper (50, 1, 0.01: the paper's released code) or "
        "custom (priority_w1..3). current stays the default: 3 seeds on the quick setting showed "
        "no difference between them or uniform sampling (docs/design.md §7.6).",
    )
    priority_w1: float = Field(
        default=1.0, ge=0, le=100.0, description="DPER weight of mean |delta|."
    )
    priority_w2: float = Field(default=0.1, ge=0, le=100.0, description="DPER weight of mean rho.")
    priority_w3: float = Field(
        default=0.1, ge=0, le=100.0, description="DPER weight of mean entropy."
    )
    prioritized: bool = Field(
        default=True,
        description="Sample the replay by priority (DPER); false samples uniformly (an ablation).",
    )
    # DPER's sampling constants (Schaul et al.'s alpha and beta range): draws ~ p^alpha,
    # importance weights (N P)^-beta with beta annealed linearly from start to end over the run.
    priority_alpha: float = Field(default=0.6, ge=0, le=10.0, description="DPER: P(i) ~ p_i^alpha.")
    priority_beta_start: float = Field(default=0.4, ge=0, le=1.0, description="DPER: first beta.")
    priority_beta_end: float = Field(default=1.0, ge=0, le=1.0, description="DPER: final beta.")
    priority_beta_steps: int | None = Field(
        None,
        ge=0,
        le=1_000_000_000,
        description="DPER: beta's annealing span in updates; None: the run's budget "
        "(train.max_updates when set, else train.minutes of wall clock).",
    )
    step_cost: float = Field(default=0.01, ge=0, le=10.0, description="Reward cost of every step.")
    step_cost_on_failure: bool = Field(
        default=True,
        description="Charge the step cost in failed episodes too. Off: only successful episodes "
        "pay it (they still prefer short paths), so a task nobody has solved yet does not teach "
        "the policy to end its episodes at once (docs/design.md §7.12).",
    )
    invalid_penalty: float = Field(
        default=0.1, ge=0, le=10.0, description="Penalty of an invalid action."
    )
    repeat_penalty: float = Field(
        default=0.05,
        ge=0,
        le=10.0,
        description="Penalty for repeating the previous action verbatim.",
    )
    window: int = Field(
        default=8, ge=1, le=1000, description="Steps per replay window (Retrace n)."
    )
    critic_warmup_updates: int = Field(
        default=0,
        ge=0,
        le=10_000_000,
        description="The learner's first N updates fit the critic alone (no policy term, no "
        "entropy bonus): after a warm start the policy is cloned but the critic is new, and its "
        "first advantages are noise that pulls the cloned policy away (docs/design.md §7.8). "
        "A critic that shares the actor's layers still moves them; policy.vlm.critic=separate "
        "leaves the actor untouched.",
    )
    demo_bc_coef: float = Field(
        default=0.0,
        ge=0.0,
        le=100.0,
        description="Weight of a cloning term on the batch's demonstration steps "
        "(train.demo_fraction): the mean of -log pi(demonstrated action), added to the loss so "
        "that RL cannot pull a cloned policy away from what it was shown (docs/design.md "
        "§7.8); 0 turns it off.",
    )

    @model_validator(mode="after")
    def _custom_weights_need_custom(self) -> ARideConfig:
        """Weights changed from their defaults beside a named setting would be silently ignored:
        refuse them. (Unchanged ones are allowed: a saved config.yaml spells every field out.)"""
        weights = (self.priority_w1, self.priority_w2, self.priority_w3)
        if self.dper_weights != "custom" and weights != DPER_WEIGHTS["current"]:
            raise ValueError(
                "aride.priority_w1..3 are read only with aride.dper_weights=custom "
                f"(now {self.dper_weights})"
            )
        return self

    @property
    def priority_weights(self) -> tuple[float, float, float]:
        """(w1, w2, w3) of the DPER priority ``w1 mean|delta| + w2 mean(rho) + w3 mean(H)``."""
        if self.dper_weights == "custom":
            return (self.priority_w1, self.priority_w2, self.priority_w3)
        return DPER_WEIGHTS[self.dper_weights]


class ExploreConfig(ConfigSection):
    """Exploration mechanisms for tasks a from-scratch policy almost never stumbles on (typing:
    docs/design.md §7.12). Each is generic (no task-specific code, no expert) and off by default."""

    candidate_prior: float = Field(
        default=0.0,
        ge=0.0,
        le=10.0,
        description="Small policy: add -a*log(1+rank) to the TYPE head's logit of the rank-th "
        "candidate text (the extractor lists the spans most often typed first: quoted text, "
        "times, numbers), a Zipf prior that makes the instruction's quoted span likely from the "
        "first episode; 0 turns it off. Part of the policy, so acting and scoring agree.",
    )
    novelty_bonus: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        description="Intrinsic reward for a step that changes the screen: bonus/sqrt(n), n the "
        "number of times this task has seen that kind of change (which kinds of element changed "
        "how: focus, text, checked, appeared, gone), added to the shaped reward as the replay "
        "cuts windows; 0 turns it off.",
    )
    novelty_decay_episodes: int = Field(
        default=2000,
        ge=1,
        le=10_000_000,
        description="The novelty bonus falls linearly to 0 over this many trajectories reaching "
        "the replay, so late training optimises success alone.",
    )
    type_needs_focus: bool = Field(
        default=False,
        description="Small policy: offer TYPE only on screens where an element has the input "
        "focus. Typing with nothing focused changes nothing on PhoneSim, MiniWoB++ or Android, "
        "so the TYPE logit then learns only where typing acts, and tasks without a field no "
        "longer pull it down for the tasks that need one (docs/design.md §7.12). It trusts the "
        "element list to show the focused field, as MiniWoB++'s DOM and an Android dump do; "
        "PhoneSim hides a field the keyboard covers (webshop's site search), where it would "
        "take typing away.",
    )
    focused_type_prior: float = Field(
        default=0.0,
        ge=0.0,
        le=10.0,
        description="Small policy: add this to the TYPE kind's logit on screens where an "
        "element has the input focus (a focused field is where people type next). The click "
        "tasks' successes push TAP up on every screen, so after a from-scratch policy taps a "
        "field it taps again instead of typing; the prior keeps TYPE likely there until "
        "learning moves it. Part of the policy, so acting and scoring agree; 0 turns it off "
        "(docs/design.md §7.12).",
    )
    empty_field_type_prior: float = Field(
        default=0.0,
        ge=0.0,
        le=10.0,
        description="Small policy: add this to the TYPE kind's logit on screens where the "
        "focused element shows no text yet. The focus stays in a field after typing, so "
        "focused_type_prior keeps pushing TYPE there and a second text is appended to the "
        "first (measured on MiniWoB++, one seed: 42 of the 46 enter-text episodes that typed "
        "typed two to seven times, none succeeded); this prior lifts TYPE "
        "only until the field holds text. A field that shows a hint as its text counts as "
        "filled, so the prior does nothing there. Adds to focused_type_prior; 0 turns it off "
        "(docs/design.md §7.12).",
    )


class DigiRLConfig(ConfigSection):
    """The DigiRL baseline's constants (docs/design.md §7): MC critics, curriculum, AWR filter."""

    gamma: float = Field(default=0.95, gt=0, le=1, description="Discount of the MC success target.")
    lam: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Advantage mix: lam^k * R + (1 - lam^k) * one-step TD, k steps before the end.",
    )
    advantage_threshold: float = Field(
        default=0.0,
        ge=-100.0,
        le=100.0,
        description="Actor trains on steps whose advantage exceeds this.",
    )
    top_fraction: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="Curriculum: fraction of each batch's windows, ranked by R - V(instruction, "
        "s0), that trains the actor.",
    )
    value_coef: float = Field(
        default=0.5, ge=0, le=100.0, description="Weight of the two critic losses."
    )


class TrainConfig(ConfigSection):
    """Online training (``distrl train``): devices, budget, learner and evaluation settings."""

    algo: AlgorithmName = Field(
        default="aride",
        max_length=1000,
        description="aride (ours), digirl (DigiRL baseline), fbc (filtered behaviour cloning), "
        "or a plug-in: module:attribute or an entry point of group distrl.algos.",
    )
    runtime: Literal["serial", "ray"] = Field(
        default="serial",
        description="serial: worker, replay and learner in one process (debugging, tests); "
        "ray: the same parts as Ray actors (see the ray section).",
    )
    mode: Literal["async", "sync"] = Field(
        default="async",
        description="ray runtime: async (workers never wait; the learner trains as data comes) "
        "or sync (DigiRL-style rounds: collect episodes_per_round, barrier, train "
        "updates_per_round, broadcast). The serial runtime always runs rounds.",
    )
    devices: int = Field(
        default=8, ge=1, le=4096, description="Devices in all (split over the workers)."
    )
    minutes: float = Field(
        default=20.0,
        gt=0,
        le=10_080.0,
        description="Wall-clock budget of the training phase alone: it starts after the warm "
        "start and does not count the final evaluation (see total_minutes).",
    )
    total_minutes: float | None = Field(
        default=None,
        gt=0,
        le=10_080.0,
        description="Wall-clock budget of the whole command (warm start, training and final "
        "evaluation, of this session when resumed): training stops early enough to leave the "
        "final evaluation the time the last one took (None: only `minutes` bounds training).",
    )
    max_updates: int | None = Field(
        default=None,
        ge=1,
        le=1_000_000_000,
        description="Stop after this many updates (None: budget only).",
    )
    episodes_per_round: int = Field(
        default=8, ge=1, le=100_000, description="Episodes collected between rounds of updates."
    )
    updates_per_round: int = Field(
        default=4, ge=1, le=100_000, description="Learner updates per round."
    )
    batch_size: int = Field(default=32, ge=1, le=65_536, description="Windows per update.")
    torch_threads: int | None = Field(
        default=None,
        ge=1,
        le=1024,
        description="PyTorch threads of the process that runs the command (the serial runtime's "
        "learner and acting, the warm start's cloning, evaluation; Ray actors set their own); "
        "None: torch's default, one per core. 1 suits models whose ops are too small to split: "
        "on the busy 2-core machine the vlm-quick warm start took 42 s with 1 and 241 s with 2.",
    )
    learner_processes: int = Field(
        default=1,
        ge=1,
        le=64,
        description="ray runtime: the learner's data-parallel width, one process (and GPU when the "
        "cluster has GPUs) each; every update's batch is split over them and their gradients "
        "averaged (NCCL on GPUs, gloo on CPU).",
    )
    lr: float = Field(default=3e-4, gt=0, le=1.0, description="Adam learning rate.")
    lr_schedule: LrScheduleKind = Field(
        default="constant",
        description="The learning rate over the run: constant, or linear (train.lr at the "
        "training loop's start, falling to 0 as the run's budget runs out: train.minutes, "
        "train.total_minutes or train.max_updates, whichever ends the run), so the policy a run "
        "ends with settles instead of moving a full step per update to the last one; "
        "docs/design.md §7.16.",
    )
    grad_clip: float = Field(default=1.0, gt=0, le=1e6, description="Gradient norm clip.")
    replay_capacity: int = Field(
        default=20000, ge=1, le=10_000_000, description="Windows the replay holds."
    )
    min_replay: int = Field(
        default=64, ge=1, le=10_000_000, description="Windows needed before updating."
    )
    max_staleness: int = Field(
        default=50,
        ge=0,
        le=1_000_000_000,  # a benchmark sets 10**9: never stale
        description="Drop windows acted by weights this many versions old.",
    )
    freeze_behaviour: bool = Field(
        default=False,
        description="Workers keep acting with the initial weights while the learner trains "
        "(benchmarks: every mode then collects the same episode distribution).",
    )
    max_inserts_per_sample: float | None = Field(
        default=None,
        gt=0,
        le=1e6,
        description="Backpressure: workers hold off while the replay has taken more than this "
        "many windows per window the learner sampled (None: never hold off).",
    )
    max_samples_per_insert: float | None = Field(
        default=8.0,
        gt=0,
        le=1e6,
        description="Async mode: the learner holds off while it has drawn more than this many "
        "windows per window inserted, so a fast learner beside slow devices does not overfit a "
        "small, fresh replay (serial and sync rounds fix their own ratio; None: never wait).",
    )
    warm_start_episodes: int = Field(
        default=0,
        ge=0,
        le=1_000_000,
        description="Noisy-oracle demonstrations to clone before RL (0: none).",
    )
    demo_noise: float = _probability(0.5, "Random-action rate of the demonstrating oracle.")
    demos: str | None = Field(
        default=None,
        max_length=4096,
        description="Warm start from the demonstrations of a `distrl collect-demos` run folder "
        "instead of collecting them (warm_start_episodes is then ignored).",
    )
    bc_steps: int = Field(
        default=100, ge=0, le=10_000_000, description="Behaviour-cloning steps of the warm start."
    )
    bc_batch_size: int = Field(
        default=64, ge=1, le=65_536, description="Steps per behaviour-cloning batch."
    )
    bc_lr: float = Field(default=1e-3, gt=0, le=1.0, description="Behaviour-cloning learning rate.")
    bc_copy_augmentation: float = _probability(
        0.0,
        "Share of cloned steps whose words copied from the instruction (a name tapped, a text "
        "typed) are swapped for other words of the demonstrations, in the instruction, the "
        "element list and the action alike, so a small model learns to copy instead of "
        "memorising the train split's names. The screenshot keeps the original word: for "
        "models that read the element list, not the pixels (0: off).",
    )
    bc_phrasing_augmentation: float = _probability(
        0.0,
        "Share of cloned steps whose instruction is reworded: its template words (not a word "
        "the action writes or the screen shows, not a name, number or quoted text) deleted, "
        "swapped and joined by other template words of the demonstrations, so a small model "
        "learns the words that decide a task instead of the train split's exact phrasings "
        "(0: off).",
    )
    demo_phrasing_augmentation: float = _probability(
        0.0,
        "Share of the demonstration windows drawn for a batch's demonstration share "
        "(train.demo_fraction) whose instruction is reworded as train.bc_phrasing_augmentation "
        "rewords cloned steps, so the rewording goes on during online training. Only "
        "demonstrations are reworded: the demonstrator's actions do not depend on the wording, "
        "a policy's own do (0: off).",
    )
    task_phrasing_augmentation: float = _probability(
        0.0,
        "Share of train episodes whose instruction, as the policy sees it, is reworded before "
        "the episode starts: template words deleted, swapped or joined by other template words "
        "of the train tasks, never a word of the task's parameters (a name, a setting, a "
        "product). PhoneSim only, which judges a task by its parameters, not its wording; "
        "evaluation episodes are never reworded (0: off).",
    )
    phrasing_edits: list[PhrasingEditKind] = Field(
        default_factory=lambda: ["delete", "swap", "insert"],
        min_length=1,
        description="The edits the three phrasing augmentations draw one of per reworded "
        "instruction: delete, swap and insert template words, and mask (word dropout: template "
        "words become the unknown word a VLM with policy.vlm.mask_unseen_words reads every "
        "unseen word as; it needs that setting).",
    )
    demo_fraction: float = Field(
        default=0.0,
        ge=0.0,
        lt=1.0,
        description="Share of every update's windows drawn from the warm-start demonstrations, "
        "kept beside the replay (never evicted, never stale), so that skills the weak warm "
        "start missed (multi-step typing) keep successful examples (0: online data only).",
    )
    eval_every_minutes: float = Field(
        default=2.0, gt=0, le=100_000.0, description="Test-split eval period."
    )
    eval_episodes: int = Field(default=50, ge=1, le=100_000, description="Episodes per evaluation.")
    final_eval_episodes: int = Field(
        default=320,
        ge=1,
        le=100_000,
        description="Greedy episodes of the run's last evaluation (the final policy: the success "
        "a run quotes, standard error <= 0.028 at 320).",
    )
    checkpoint_every_minutes: float = Field(
        default=2.0, gt=0, le=100_000.0, description="Checkpoint period."
    )
    averaged_policy_decay: float = Field(
        default=0.0,
        ge=0.0,
        lt=1.0,
        description="Evaluate and save an exponential moving average of the learner's weights "
        "(this decay per update; Polyak averaging) instead of the newest weights, so the greedy "
        "policy a run quotes and deploys does not flip with each update's noise; workers still "
        "act with the newest weights, whose log-probs the replay records (0: off). 0.99 "
        "averages about the last 100 updates; docs/design.md §7.15.",
    )

    @model_validator(mode="after")
    def _replay_can_fill(self) -> TrainConfig:
        if self.min_replay > self.replay_capacity:
            raise ValueError(
                f"train.min_replay={self.min_replay} exceeds train.replay_capacity="
                f"{self.replay_capacity}: the replay could never fill enough to train"
            )
        if self.demo_phrasing_augmentation > 0 and self.demo_fraction == 0:
            raise ValueError(
                f"train.demo_phrasing_augmentation={self.demo_phrasing_augmentation:g} rewords "
                "the demonstration windows of each batch, but train.demo_fraction is 0, so no "
                "batch draws any; set train.demo_fraction above 0 or leave the rewording off"
            )
        return self


class CurriculumConfig(ConfigSection):
    """Task-level curriculum (docs/design.md §7.13): train tasks drawn by learning progress."""

    enabled: bool = Field(
        default=False,
        description="Draw train tasks by learning progress per task family (PhoneSim template, "
        "MiniWoB++ task) instead of uniformly: more weight to families with intermediate or "
        "changing success, less to solved and hopeless ones.",
    )
    window: int = Field(
        default=20,
        ge=2,
        le=100_000,
        description="Recent finished train episodes per family the success statistics cover.",
    )
    min_episodes: int = Field(
        default=4,
        ge=1,
        le=100_000,
        description="Episodes a family needs in its window before its success counts; until "
        "then it gets the largest weight (it is explored first).",
    )
    floor: float = Field(
        default=0.2,
        gt=0.0,
        le=1.0,
        description="Share of draws spread uniformly over every family, so that no family is "
        "forgotten (each gets at least floor / families; 1: uniform over families).",
    )
    # Not a floor: it weighs unsolved families against the others inside the (1 - floor) share.
    unsolved_score: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        description="Score of a family with no success in its window (0: like a solved one, "
        "drawn only at the floor). Above 0 keeps families the policy has not solved yet in the "
        "draws, for tasks whose first success takes many attempts (typing from scratch).",
    )


class SuccessReplayConfig(ConfigSection):
    """Success replay (docs/design.md §7.14): rare successes kept past the staleness bound."""

    share: float = Field(
        default=0.0,
        ge=0.0,
        lt=1.0,
        description="Share of every batch's windows drawn from the success store: successful "
        "trajectories kept beyond the staleness bound, replayed off-policy with their behaviour "
        "log-probs (0: off).",
    )
    capacity: int = Field(
        default=200,
        ge=1,
        le=1_000_000,
        description="Successful trajectories the store holds; when full, the family holding "
        "the most gives up its oldest, so rare families keep theirs (with a policy that reads "
        "screenshots each holds its screens: mind the memory).",
    )


class RayConfig(ConfigSection):
    """Placement of the ray runtime: where Ray runs, how devices are split, fault handling."""

    address: str | None = Field(
        default=None,
        description="Join this Ray cluster ('auto' or host:port); None starts a local Ray bound "
        "to 127.0.0.1.",
    )
    num_cpus: int | None = Field(
        default=None,
        ge=1,
        le=4096,
        description="CPUs of the local Ray (None: all of this machine's).",
    )
    workers: int = Field(
        default=2,
        ge=1,
        le=4096,
        description="Worker actors; train.devices are split evenly over them.",
    )
    device_resource: str = Field(
        default="distrl_device",
        description="Custom Ray resource, one unit per device slot: workers are placed on nodes "
        "that offer it (`ray start --resources='{\"distrl_device\": 8}'`).",
    )
    step_timeout_seconds: float = Field(
        default=300.0,
        gt=0,
        le=86_400.0,
        description="Real seconds a device reset or step may take before the device is declared "
        "hung, replaced and its episode dropped.",
    )
    flush_seconds: float = Field(
        default=2.0,
        ge=0,
        le=3600.0,
        description="The replay stores arriving trajectories as one Parquet shard per period.",
    )
    call_timeout_seconds: float = Field(
        default=600.0, gt=0, le=86_400.0, description="Longest wait on any single call to an actor."
    )
    learner_threads: int | None = Field(
        default=None,
        ge=1,
        le=1024,
        description="PyTorch threads of a one-process learner (None: every CPU of its node). Ray "
        "pins an actor that reserves 1 CPU to 1 thread; the devices are latency-bound and acting "
        "is cheap, so the learner's compute is where the cores pay.",
    )
    dashboard: bool = Field(default=False, description="Start Ray's dashboard (local Ray only).")
    task_events_kept: int = Field(
        default=10_000,
        ge=0,
        le=10_000_000,
        description="Task attempts a local Ray's GCS keeps for its dashboard and state API "
        "(RAY_task_events_max_num_task_in_gcs; an environment variable already set wins). "
        "Ray's own 100,000 made the GCS the one process still growing in a 30-minute async "
        "run (83 -> 295 MiB PSS, a worker's replay calls and weight polls are tasks); "
        "local Ray only, a joined cluster keeps its settings.",
    )


class InferenceConfig(ConfigSection):
    """Where a ray run's workers get their actions: their own policy copy, or a shared batched
    inference service (docs/design.md §2.1)."""

    mode: Literal["local", "service"] = Field(
        default="local",
        description="local: each worker acts with its own policy copy; service: workers hold no "
        "model and ask an inference service actor (a GPU when the cluster has one) that batches "
        "the requests of many workers. train.runtime=ray only.",
    )
    replicas: int = Field(
        default=1,
        ge=1,
        le=256,
        description="Inference service actors (mode=service); workers are spread over them.",
    )
    max_batch_size: int = Field(
        default=64,
        ge=1,
        le=65_536,
        description="Most observations in one batch: a batch starts once this many wait.",
    )
    max_wait_ms: float = Field(
        default=5.0,
        ge=0,
        le=60_000.0,
        description="Longest a request waits for others to share its batch (milliseconds).",
    )
    retry_seconds: float = Field(
        default=120.0,
        ge=0,
        le=86_400.0,
        description="How long a worker retries an act call while a dead service restarts before "
        "it drops the episodes waiting for that action.",
    )


class VLMJudgeConfig(ConfigSection):
    """A VLM success judge on any OpenAI-compatible chat endpoint (docs/design.md §6)."""

    base_url: str = Field(
        default="http://127.0.0.1:8000/v1", description="Endpoint base URL (ends in /v1)."
    )
    model: str = Field(default="gpt-4o-mini", description="Model name sent with each request.")
    api_key_env: str = Field(
        default="OPENAI_API_KEY", description="Environment variable that holds the API key."
    )
    screenshots: int = Field(
        default=2, ge=1, le=16, description="Last screenshots sent with each judgement."
    )
    max_image_side: int = Field(
        default=768, ge=64, le=4096, description="Screenshots are downscaled to this longest side."
    )
    timeout_seconds: float = Field(
        default=60.0, gt=0, le=3600.0, description="Timeout of one request."
    )
    max_retries: int = Field(default=4, ge=0, le=100, description="Retries of a failed request.")
    backoff_seconds: float = Field(
        default=1.0,
        ge=0,
        le=600.0,
        description="First retry delay; doubles per retry (with jitter).",
    )
    requests_per_minute: float = Field(
        default=60.0, gt=0, le=1e6, description="Client-side rate limit across threads."
    )
    cache_dir: str | None = Field(
        default=None, description="Verdict cache folder; None: an in-memory cache only."
    )


class JudgeConfig(ConfigSection):
    """How episodes are judged: from device state (PhoneSim, MiniWoB++) or by a VLM."""

    kind: JudgeName = Field(
        default="state",
        max_length=1000,
        description="state: the backend's own success check; vlm: the VLM judge below; or a "
        "plug-in judge: module:attribute or an entry point of group distrl.judges.",
    )
    vlm: VLMJudgeConfig = Field(default_factory=VLMJudgeConfig, description="VLM judge settings.")


class SmallPolicySettings(ConfigSection):
    """The small pointer policy's run-time trade-offs (``policy.kind=small``)."""

    recompute_activations: bool = Field(
        default=True,
        description="Keep only each encoder layer's input for the backward pass and recompute "
        "the rest there: the same gradients for less memory and more CPU. Measured on "
        "`train --preset quick --minutes 3` (2 cores, 3 seeds): peak RSS 0.96 GB against "
        "1.21 GB, 16% fewer updates in the same minutes, an identical run at equal updates "
        "(docs/results.md, Footprint). Turn off where memory is plentiful and updates are the "
        "bottleneck.",
    )
    score_groups: int = Field(
        default=8,
        ge=1,
        le=64,
        description="The learner scores a batch as up to this many groups of observations of "
        "similar token count (at least 32 each), each padded only to its own longest; 1 pads the "
        "whole batch to its longest observation. Same scores, less padding: docs/design.md §5 "
        "gives the measured gain.",
    )


class VLMPolicyConfig(ConfigSection):
    """The multimodal LLM policy (``policy.kind=vlm``): which model, LoRA, sampling, critic.

    Exactly one of ``tiny`` (a few-MB model with random weights and a tokenizer trained in-process:
    tests and CPU smoke runs) or ``path`` (a local transformers checkpoint of any vision-language
    model and its processor, e.g. Qwen2-VL, SmolVLM, Idefics3) chooses the base model.
    """

    path: str | None = Field(
        default=None,
        description="Local folder of a transformers vision-language model and its processor "
        "(loaded offline with AutoModelForImageTextToText / AutoProcessor).",
    )
    tiny: bool = Field(
        default=False, description="Build the tiny random-weight VLM locally instead of a path."
    )
    seed: int = Field(
        default=0,
        ge=0,
        le=2**32 - 1,
        description="Seed of the tiny base's weights and of the new LoRA/critic.",
    )
    tiny_width: int = Field(
        default=96,
        ge=8,
        le=4096,
        multiple_of=8,  # 4 heads, each of an even size (rotary embedding)
        description="Width (hidden size) of the tiny model's language model, a multiple of 8 "
        "(4 attention heads of an even size); 96 gives 0.45M parameters with the built-in "
        "suites' vocabulary, most of them the embedding.",
    )
    tiny_layers: int = Field(
        default=2, ge=1, le=64, description="Decoder layers of the tiny model's language model."
    )
    tiny_subword_buckets: int = Field(
        default=0,
        ge=0,
        le=1_000_000,
        description="Character n-gram buckets of the tiny model's token vectors (0: off): a "
        "word's vector adds the mean of its 3-5 letter n-grams' vectors, so 'note', 'notes' and "
        "'Notes' share most of theirs (fastText's subword vectors; policy/vlm/subwords.py). "
        "Costs buckets x tiny_width parameters.",
    )
    lora: bool = Field(default=True, description="Train LoRA adapters (off: train every weight).")
    lora_r: int = Field(default=8, ge=1, le=1024, description="LoRA rank.")
    lora_alpha: float = Field(
        default=16.0, gt=0, le=10_000.0, description="LoRA scaling numerator."
    )
    lora_dropout: float = Field(
        default=0.0,
        ge=0.0,
        lt=1.0,
        description="LoRA dropout (only active if the policy is put in train mode; act and "
        "score_actions run in eval mode so that their log-probs agree).",
    )
    target_modules: list[str] = Field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"],
        min_length=1,
        max_length=256,
        description="Module names (suffixes) that get LoRA adapters.",
    )
    temperature: float = Field(
        default=1.0, gt=0.0, le=10.0, description="Sampling temperature (log-probs use it too)."
    )
    max_new_tokens: int = Field(
        default=64, ge=1, le=1024, description="Longest generated action text, in tokens."
    )
    history: int = Field(
        default=4, ge=0, le=32, description="Previous actions written into the prompt."
    )
    screenshot_max_side: int = Field(
        default=448, ge=28, le=4096, description="Screenshots are downscaled to this longest side."
    )
    element_list: bool = Field(
        default=False,
        description="Write the screen's UI elements (index, kind, text) into the prompt beside "
        "the screenshot and let the model tap an element by reference (TAP_ELEMENT). Off by "
        "default: the AitW screenshot-only prompt is what pretrained GUI VLMs and existing "
        "adapters were trained on, and pixel-only backends have no element list; on in the "
        "vlm-quick preset (docs/design.md §5).",
    )
    element_list_max: int = Field(
        default=50,
        ge=1,
        le=1000,
        description="Elements listed in the prompt (the first ones of the screen); only these "
        "can be tapped by reference.",
    )
    element_reference: Literal["index", "name", "title"] = Field(
        default="index",
        description="How the action text names a tapped element (with element_list): index "
        '("element": 3), name ("name": Clock: the element\'s text, where it is non-empty, at '
        "most 6 words and names no element listed before it; the index otherwise) or title "
        "(the same with the element's title, its text up to the first ' · ': a conversation row "
        "'Ana Silva · Call me when you get this' is tapped as Ana Silva, not by index). A name "
        "is copied from the instruction more easily than an index is looked up by a model "
        "learning from scratch; every form parses in every mode.",
    )
    element_match_marks: bool = Field(
        default=False,
        description="With element_list: end the line of each element whose words are at least "
        'half in the instruction with "[in instruction]", the small policy\'s word-overlap '
        "feature as text, so that a tiny model finds held-out names it cannot yet copy "
        "(docs/design.md §5).",
    )
    name_placeholders: bool = Field(
        default=False,
        description="With element_list: replace the instruction's names (runs of capitalised "
        "words where no sentence starts) by Name1, Name2, ... in the instruction and in every "
        "element's text, and put them back in typed texts before they reach the device, so "
        "train and test prompts differ in no name the model has not been trained on "
        "(docs/design.md §5).",
    )
    text_placeholders: bool = Field(
        default=False,
        description="With name_placeholders: the texts the instruction dictates (quoted spans, "
        "and what follows a colon when it holds none of the instruction's names) become Text1, "
        "Text2, ... the same way, so a held-out note or message is typed as the same Text1 as "
        "every train one (docs/design.md §5).",
    )
    site_placeholders: bool = Field(
        default=False,
        description="With name_placeholders: the web addresses the instruction names "
        '("maps.com") become Site1, Site2, ... the same way, so a held-out website is typed as '
        "the same Site1 as every train one (docs/design.md §5).",
    )
    mask_unseen_words: bool = Field(
        default=False,
        description="With tiny: every prose word of the instruction that no train instruction "
        "holds (its tokenizer's texts) and the screen does not show is read as the unknown "
        "word <unk>, so a held-out phrasing reads as a train one with words missing; pair it "
        "with train.phrasing_edits including mask, which teaches what such a word means "
        "(docs/design.md §5).",
    )
    admissible_actions: bool = Field(
        default=False,
        description="Decode only admissible action texts (with element_list): a tap on a listed "
        "element, TYPE of a candidate span of the instruction, two swipes, the argument-free "
        "actions; the distribution is renormalised over them in acting and scoring alike "
        "(docs/design.md §5).",
    )
    critic: Literal["head", "separate"] = Field(
        default="head",
        description="head: value MLPs on the VLM's pooled prompt features (shared trunk); "
        "separate: an independent small network over the element list.",
    )
    dtype: Literal["auto", "float32", "bfloat16"] = Field(
        default="auto", description="Weights dtype; auto: bfloat16 on CUDA, float32 on CPU."
    )
    device: Literal["auto", "cpu", "cuda"] = Field(
        default="auto", description="Where the model runs; auto: CUDA when visible."
    )
    max_batch_size: int = Field(
        default=64,
        ge=1,
        le=4096,
        description="Observations per forward pass (larger batches are split).",
    )
    score_groups: int = Field(
        default=8,
        ge=1,
        le=64,
        description="The learner scores a batch's prompts as up to this many groups of similar "
        "token count (at least 4 each), each padded only to its own longest; 1 pads the whole "
        "batch to its longest prompt. Same scores, less padding: docs/design.md §5.",
    )
    cpu_threads: int | None = Field(
        default=None,
        ge=1,
        le=1024,
        description="torch threads for the policy's forward passes on CPU; None: 1 for the tiny "
        "model (its ops are too small to split: 2 threads ran 10-25x slower on a busy 2-core "
        "machine), torch's own setting otherwise.",
    )
    grad_accumulation: int = Field(
        default=1,
        ge=1,
        le=1024,
        description="Micro-batches per learner update and process (train.learner_processes).",
    )

    @model_validator(mode="after")
    def _admissible_taps_need_the_list(self) -> VLMPolicyConfig:
        # Taps are admissible by element reference; without the list a tap is free coordinates.
        if self.admissible_actions and not self.element_list:
            raise ValueError(
                "policy.vlm.admissible_actions=true needs policy.vlm.element_list=true (the "
                "admissible taps are references to listed elements)"
            )
        if self.element_match_marks and not self.element_list:
            raise ValueError(
                "policy.vlm.element_match_marks=true needs policy.vlm.element_list=true (it marks "
                "lines of the element list)"
            )
        if self.name_placeholders and not self.element_list:
            raise ValueError(
                "policy.vlm.name_placeholders=true needs policy.vlm.element_list=true (without "
                "the list the names stay on the screenshot the model reads)"
            )
        if self.mask_unseen_words and not self.tiny:
            raise ValueError(
                "policy.vlm.mask_unseen_words=true needs policy.vlm.tiny=true (the known words "
                "are those its tokenizer was trained on; a checkpoint's tokenizer has no closed "
                "vocabulary)"
            )
        if self.text_placeholders and not self.name_placeholders:
            raise ValueError(
                "policy.vlm.text_placeholders=true needs policy.vlm.name_placeholders=true (texts "
                "are hidden by the same placeholders, beside the names)"
            )
        if self.site_placeholders and not self.name_placeholders:
            raise ValueError(
                "policy.vlm.site_placeholders=true needs policy.vlm.name_placeholders=true (web "
                "addresses are hidden by the same placeholders, beside the names)"
            )
        return self


class PolicyConfig(ConfigSection):
    """Which policy a run trains: the small CPU policy or a vision-language model."""

    kind: PolicyName = Field(
        default="small",
        max_length=1000,
        description="small: the pointer network over the element list; vlm: a transformers "
        "vision-language model emitting AitW action text (see policy.vlm); or a plug-in: "
        "module:attribute or an entry point of group distrl.policies.",
    )
    small: SmallPolicySettings = Field(
        default_factory=SmallPolicySettings, description="The small policy's settings."
    )
    vlm: VLMPolicyConfig = Field(
        default_factory=VLMPolicyConfig, description="The VLM policy's settings."
    )

    @model_validator(mode="after")
    def _one_base_model(self) -> PolicyConfig:
        if self.kind == "vlm" and self.vlm.tiny == (self.vlm.path is not None):
            raise ValueError(
                "policy.kind=vlm needs exactly one of policy.vlm.tiny=true or "
                "policy.vlm.path=FOLDER (e.g. `distrl train --policy vlm --vlm tiny`)"
            )
        return self


class LogConfig(ConfigSection):
    """What a run reports while it runs: progress lines and experiment trackers.

    TensorBoard logs are always written (``RUN_DIR/tensorboard``); Weights & Biases receives the
    same scalars when switched on (needs the ``wandb`` extra: ``pip install 'distrl[wandb]'``).
    """

    progress_seconds: float = Field(
        default=30.0,
        gt=0,
        le=86_400.0,
        description="When stderr is not a terminal (a log file, CI), `distrl train` logs a "
        "progress line per phase (warm start, collection, evaluation, checkpoint) and at least "
        "this often.",
    )
    wandb: bool = Field(
        default=False, description="Send the TensorBoard scalars to Weights & Biases too."
    )
    wandb_project: str = Field(default="distrl", description="W&B project of the run.")
    wandb_entity: str | None = Field(
        default=None, description="W&B entity (user or team); None: the account's default."
    )
    wandb_mode: Literal["online", "offline"] = Field(
        default="online",
        description="online: stream to the W&B server; offline: write under RUN_DIR for a later "
        "`wandb sync`.",
    )


class RunConfig(ConfigSection):
    """Everything one run needs; :func:`distrl.config.load_config` builds it from a preset."""

    seed: int = Field(
        default=0, ge=0, le=2**32 - 1, description="Root seed; every component derives its own."
    )
    run_root: str = Field(
        default="runs", min_length=1, description="Folder under which run folders are made."
    )
    run_name: str | None = Field(
        default=None,
        max_length=MAX_RUN_NAME_CHARS,
        description="Run folder name, one folder directly under run_root; None picks a "
        "timestamped one.",
    )
    env: EnvConfig = Field(default_factory=EnvConfig, description="Device backend and tasks.")
    play: PlayConfig = Field(default_factory=PlayConfig, description="Scripted play settings.")
    train: TrainConfig = Field(default_factory=TrainConfig, description="Online training.")
    ray: RayConfig = Field(default_factory=RayConfig, description="The ray runtime's placement.")
    inference: InferenceConfig = Field(
        default_factory=InferenceConfig,
        description="Acting from a local policy copy or a batched inference service.",
    )
    judge: JudgeConfig = Field(
        default_factory=JudgeConfig, description="Success judging (state or VLM)."
    )
    aride: ARideConfig = Field(
        default_factory=ARideConfig, description="A-RIDE algorithm constants."
    )
    digirl: DigiRLConfig = Field(
        default_factory=DigiRLConfig, description="DigiRL baseline constants."
    )
    policy: PolicyConfig = Field(
        default_factory=PolicyConfig, description="The policy a run trains (small or vlm)."
    )
    explore: ExploreConfig = Field(
        default_factory=ExploreConfig, description="Exploration mechanisms (all off by default)."
    )
    log: LogConfig = Field(
        default_factory=LogConfig, description="Progress lines and experiment trackers."
    )
    curriculum: CurriculumConfig = Field(
        default_factory=CurriculumConfig, description="Task-level curriculum of train draws."
    )
    success_replay: SuccessReplayConfig = Field(
        default_factory=SuccessReplayConfig,
        description="Successful trajectories replayed past the staleness bound.",
    )

    @model_validator(mode="after")
    def _reworded_tasks_are_judged_by_their_parameters(self) -> RunConfig:
        """A reworded instruction must not change what counts as success: only PhoneSim's own
        check judges a task by its parameters; a MiniWoB++ page shows its own instruction, and a
        judge reads the instruction it is given."""
        rate = self.train.task_phrasing_augmentation
        if rate > 0 and (self.env.backend != "phonesim" or self.judge.kind != "state"):
            raise ValueError(
                f"train.task_phrasing_augmentation={rate:g} rewords the instruction of each "
                "train task, which only the phonesim backend judged by its own state "
                "(judge.kind=state) can do without changing the task; env.backend is "
                f"{self.env.backend!r} and judge.kind {self.judge.kind!r}: leave it at 0"
            )
        return self

    @model_validator(mode="after")
    def _masked_words_are_read_as_unknown(self) -> RunConfig:
        """The mask edit writes the unknown word, which only a VLM that masks unseen words
        reads as one token (anything else reads the letters of ``<unk>``)."""
        if "mask" in self.train.phrasing_edits and not (
            self.policy.kind == "vlm" and self.policy.vlm.mask_unseen_words
        ):
            raise ValueError(
                "train.phrasing_edits includes mask, which writes the unknown word <unk> into "
                "instructions; only policy.kind=vlm with policy.vlm.mask_unseen_words=true "
                "reads it as the unknown word: set that or leave mask out"
            )
        return self

    @model_validator(mode="after")
    def _online_windows_in_every_batch(self) -> RunConfig:
        """The demonstration and success shares together leave room for online windows."""
        shares = self.train.demo_fraction + self.success_replay.share
        if shares >= 1.0:
            raise ValueError(
                f"train.demo_fraction + success_replay.share = {shares:g} leaves no online "
                "windows in a batch; keep their sum below 1"
            )
        return self

    @field_validator("run_name")
    @classmethod
    def _one_folder_under_the_root(cls, name: str | None) -> str | None:
        """A run name is one folder name, so a run never writes outside ``run_root``
        (``../..``, ``/etc`` or ``a/b`` are refused, not resolved)."""
        if name is not None:
            check_folder_name(name)
        return name


def check_folder_name(name: str) -> None:
    """Raise ``ValueError`` unless ``name`` is one plain folder name (no separators, not ``.``
    or ``..``, no control characters, not starting with ``-`` where it would read as a flag)."""
    if not name or name.strip() != name:
        raise ValueError("a run name must be a non-empty name without surrounding spaces")
    if "/" in name or "\\" in name or name in (".", ".."):
        raise ValueError("a run name is one folder name under run_root, not a path")
    if name.startswith("-") or any(ord(char) < 32 or ord(char) == 127 for char in name):
        raise ValueError("a run name cannot start with '-' or contain control characters")
