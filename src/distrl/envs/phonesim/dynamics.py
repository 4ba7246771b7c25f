"""The "in the wild" dynamics: interruptions and variation real devices throw at an agent.

Each is switchable (``DynamicsConfig``) and drawn from the episode's seeded generator, so an
episode replays exactly from its seed. Decisions that must stay stable while the agent looks at
the same page (which result slots hold ads) are hashed from the episode seed and the page instead
of drawn, so looking twice does not change the screen.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from distrl.config.schema import DynamicsConfig


@dataclass(frozen=True)
class PopupKind:
    """A modal dialog. Every button dismisses it; ``accept`` is the affirmative one."""

    title: str
    message: str
    accept: str
    decline: str


POPUPS: dict[str, PopupKind] = {
    "permission": PopupKind(
        "Allow {app} to access this device's location?",
        "The app uses your location to show relevant content.",
        "While using the app",
        "Don't allow",
    ),
    "notifications": PopupKind(
        "Allow {app} to send you notifications?",
        "You can change this in Settings.",
        "Allow",
        "Don't allow",
    ),
    "rate": PopupKind(
        "Enjoying {app}?", "Tap a star to rate it on the Play Store.", "Rate now", "Not now"
    ),
    "update": PopupKind(
        "Update available",
        "A new version of {app} is ready to install.",
        "Update later",
        "Dismiss",
    ),
    "newsletter": PopupKind(
        "Get 10% off your first order",
        "Sign up for {app} deals and news.",
        "No thanks",
        "Close",
    ),
}


@dataclass(frozen=True)
class LayoutVariation:
    """Per-episode layout choices apps read when they build pages."""

    launcher_columns: int = 4
    launcher_order_seed: int = 0
    search_bar_on_top: bool = True
    settings_order_seed: int = 0
    results_show_images: bool = True

    @classmethod
    def sample(cls, rng: np.random.Generator) -> LayoutVariation:
        return cls(
            launcher_columns=int(rng.choice([4, 5])),
            launcher_order_seed=int(rng.integers(1, 2**31)),
            search_bar_on_top=bool(rng.random() < 0.5),
            settings_order_seed=int(rng.integers(1, 2**31)),
            results_show_images=bool(rng.random() < 0.5),
        )


def stable_fraction(*parts: object) -> float:
    """A number in [0, 1) fixed by ``parts`` (a hash, not a draw): same page, same answer."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


class Dynamics:
    """Draws the episode's interruptions according to a :class:`DynamicsConfig`."""

    def __init__(self, config: DynamicsConfig, rng: np.random.Generator, episode_seed: int):
        self.config = config
        self.rng = rng
        self.episode_seed = episode_seed

    def popup_on_open(self, kinds: tuple[str, ...]) -> str | None:
        """The popup kind to show when an app or site opens, or ``None``."""
        if not self.config.popups or not kinds or self.rng.random() >= self.config.popup_prob:
            return None
        return kinds[int(self.rng.integers(len(kinds)))]

    def loading_steps(self) -> int:
        """How many steps a page load keeps the spinner up (0: loads at once)."""
        if not self.config.loading_screens or self.rng.random() >= self.config.loading_prob:
            return 0
        return int(self.rng.integers(1, self.config.loading_max_steps + 1))

    def cookie_banner(self) -> bool:
        return self.config.cookie_banners and self.rng.random() < 0.7

    def is_ad_slot(self, page_key: str, slot: int) -> bool:
        """Whether result slot ``slot`` on page ``page_key`` holds an ad (stable per episode)."""
        if not self.config.ads:
            return False
        return stable_fraction(self.episode_seed, page_key, slot) < self.config.ad_prob

    def layout(self) -> LayoutVariation:
        if not self.config.layout_variation:
            return LayoutVariation()
        return LayoutVariation.sample(self.rng)
