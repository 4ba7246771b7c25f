"""The emulator latency and fault model: modelled times, heterogeneity, crashes and hangs."""

from __future__ import annotations

import numpy as np
import pytest

from distrl.config.schema import LatencyConfig, PhoneSimConfig
from distrl.core.action import Action
from distrl.core.faults import DeviceCrashed, DeviceFault, DeviceHung
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.latency import LatencyModel
from distrl.envs.phonesim.tasks.suites import load_suite

# time_scale=0: model the seconds, never sleep them (tests check numbers, not wall-clock).
MODEL_ONLY = {"enabled": True, "time_scale": 0.0}


def test_disabled_model_costs_nothing() -> None:
    model = LatencyModel(LatencyConfig(), np.random.default_rng(0), "d0")
    assert model.step(Action.press_back()) == 0.0 and model.reset() == 0.0


def test_step_and_reset_means_match_the_config_per_device() -> None:
    config = LatencyConfig(**MODEL_ONLY)
    model = LatencyModel(config, np.random.default_rng(1), "d0")
    steps = [model.step(Action.press_back()) for _ in range(20000)]
    resets = [model.reset() for _ in range(20000)]
    # Lognormal noise is scaled so its mean is the configured mean, times this device's factor.
    assert np.mean(steps) == pytest.approx(config.step_seconds * model.speed_factor, rel=0.03)
    assert np.mean(resets) == pytest.approx(config.reset_seconds * model.speed_factor, rel=0.03)
    typed = np.mean([model.step(Action.type_text("x")) for _ in range(5000)])
    extra = config.type_extra_seconds * model.speed_factor
    assert typed == pytest.approx(config.step_seconds * model.speed_factor + extra, rel=0.05)


def test_devices_differ_in_speed() -> None:
    config = LatencyConfig(**MODEL_ONLY)
    factors = [
        LatencyModel(config, np.random.default_rng(s), f"d{s}").speed_factor for s in range(200)
    ]
    assert np.std(np.log(factors)) == pytest.approx(config.device_speed_sigma, rel=0.15)


def _env(**latency: object) -> PhoneSimEnv:
    config = PhoneSimConfig(latency=LatencyConfig(**{**MODEL_ONLY, **latency}))
    return PhoneSimEnv(config, seed=0, device_id="emulator-5554")


def test_crash_raises_and_device_stays_down_until_reset() -> None:
    env = _env(crash_prob=1.0)
    task = load_suite("general", "train")[0]
    env.reset(task)
    with pytest.raises(DeviceCrashed, match="emulator-5554 crashed"):
        env.step(Action.press_home())
    with pytest.raises(DeviceCrashed, match="down"):
        env.step(Action.press_home())
    env.latency.config = LatencyConfig(**MODEL_ONLY)  # the restarted device is healthy
    env.reset(task)
    env.step(Action.press_home())


def test_hang_raises_after_the_timeout_is_spent() -> None:
    env = _env(hang_prob=1.0, hang_timeout_seconds=90.0)
    env.reset(load_suite("general", "train")[0])
    before = env.latency.modelled_seconds
    with pytest.raises(DeviceHung, match="90 s"):
        env.step(Action.press_home())
    assert env.latency.modelled_seconds - before == pytest.approx(90.0)
    assert issubclass(DeviceHung, DeviceFault) and issubclass(DeviceCrashed, DeviceFault)


def test_step_info_reports_modelled_device_seconds() -> None:
    env = _env()
    env.reset(load_suite("general", "train")[0])
    _, _, _, info = env.step(Action.press_home())
    assert info["device_seconds"] > 0
