"""The emulator latency and fault model: how long a real device takes, and how it fails.

Defaults are grounded in DigiRL's Android emulator environment, which waits ~5 s for the screen to
settle before every screenshot, ~4 s more before typing, ~30 s after starting an emulator, retries
failed steps after 10 s, and calls a hosted VLM judge (seconds) after each step: a real step costs
~5-10 s and a reset (snapshot load and settle) 30-90 s with a long tail. Devices also differ in
speed (host load, emulator flavour), which ``device_speed_sigma`` models as a fixed per-device
factor. ``time_scale`` turns modelled seconds into real sleeping (0.01: 100x compressed), so a
benchmark can compress hours of emulator time into minutes while keeping the ratios.
"""

from __future__ import annotations

import time

import numpy as np

from distrl.config.schema import LatencyConfig
from distrl.core.action import Action, ActionType
from distrl.core.faults import DeviceCrashed, DeviceHung


class LatencyModel:
    """Per-device timing and faults. ``modelled`` seconds accumulate even when disabled-sleep."""

    def __init__(self, config: LatencyConfig, rng: np.random.Generator, device_id: str):
        self.config = config
        self.rng = rng
        self.device_id = device_id
        self.speed_factor = float(rng.lognormal(0.0, config.device_speed_sigma))
        self.modelled_seconds = 0.0

    def _lognormal(self, mean_seconds: float, sigma: float) -> float:
        # Scale so the *mean* of the lognormal equals mean_seconds (mean = exp(mu + sigma^2 / 2)).
        mu = np.log(mean_seconds) - sigma**2 / 2
        return float(self.rng.lognormal(mu, sigma)) * self.speed_factor

    def _spend(self, seconds: float) -> float:
        self.modelled_seconds += seconds
        if self.config.time_scale > 0:
            time.sleep(seconds * self.config.time_scale)
        return seconds

    def reset(self) -> float:
        """Time a reset (snapshot load) takes; sleeps it (scaled) when the model is enabled."""
        if not self.config.enabled:
            return 0.0
        return self._spend(self._lognormal(self.config.reset_seconds, self.config.reset_sigma))

    def step(self, action: Action) -> float:
        """Time one action takes; may raise :class:`DeviceCrashed` or :class:`DeviceHung`."""
        if not self.config.enabled:
            return 0.0
        if self.rng.random() < self.config.crash_prob:
            raise DeviceCrashed(f"device {self.device_id} crashed (emulator process exited)")
        if self.rng.random() < self.config.hang_prob:
            self._spend(self.config.hang_timeout_seconds)
            raise DeviceHung(
                f"device {self.device_id} did not answer within "
                f"{self.config.hang_timeout_seconds:.0f} s (modelled)"
            )
        seconds = self._lognormal(self.config.step_seconds, self.config.step_sigma)
        if action.action_type is ActionType.TYPE:
            seconds += self.config.type_extra_seconds * self.speed_factor
        return self._spend(seconds)
