"""Bounded screenshots: lossless PNG, downscaling, and devices that hand them out bounded."""

from __future__ import annotations

import numpy as np
import pytest

from distrl.config.loader import load_config
from distrl.core.observation import NO_SCREENSHOT, Observation
from distrl.core.screenshot import PNGScreenshot, bound_observation, bound_pixels
from distrl.envs.bounded import BoundedScreenshots
from distrl.envs.devices import Purpose, make_device
from distrl.envs.phonesim.tasks.suites import load_suite


def test_png_is_lossless_and_decodes_fresh_arrays() -> None:
    pixels = np.random.default_rng(0).integers(0, 256, (20, 12, 3), dtype=np.uint8)
    encoded = PNGScreenshot.encode(pixels)
    assert encoded.shape == (20, 12, 3) and encoded.nbytes == len(encoded.png)
    first, second = encoded.decode(), np.asarray(encoded)
    assert np.array_equal(first, pixels) and np.array_equal(second, pixels)
    assert first is not second  # nothing cached
    observation = Observation(encoded, "x")
    assert np.array_equal(observation.pixels(), pixels)
    assert Observation(pixels, "x").pixels() is pixels


def test_downscaling_keeps_the_aspect_and_bounds_the_longest_side() -> None:
    pixels = np.full((720, 360, 3), 200, dtype=np.uint8)
    small = bound_pixels(pixels, "raw", 128)
    assert isinstance(small, np.ndarray) and small.shape == (128, 64, 3)
    assert bound_pixels(pixels, "raw", 1000) is pixels
    encoded = bound_pixels(pixels, "png", 128)
    assert isinstance(encoded, PNGScreenshot) and encoded.shape == (128, 64, 3)


def test_bound_observation_leaves_placeholders_and_encoded_screens_alone() -> None:
    placeholder = Observation(NO_SCREENSHOT, "x")
    assert bound_observation(placeholder, "png", 64) is placeholder
    encoded = bound_observation(Observation(np.zeros((8, 8, 3), np.uint8), "x"), "png", None)
    assert bound_observation(encoded, "png", 4) is encoded


@pytest.mark.parametrize(
    ("overrides", "kind", "shape"),
    [
        ([], PNGScreenshot, (720, 360, 3)),
        (["env.screenshot_max_side=128"], PNGScreenshot, (128, 64, 3)),
        (["env.screenshot_encoding=raw", "env.screenshot_max_side=128"], np.ndarray, (128, 64, 3)),
        (["env.screenshot_encoding=raw"], np.ndarray, (720, 360, 3)),
    ],
)
def test_devices_hand_out_bounded_screenshots(
    overrides: list[str], kind: type, shape: tuple[int, int, int]
) -> None:
    cfg = load_config(None, overrides)
    device = make_device(cfg, Purpose.TRAIN, 0)
    assert isinstance(device, BoundedScreenshots) == (overrides != ["env.screenshot_encoding=raw"])
    task = load_suite("general", "train")[0]
    observation = device.reset(task)
    assert isinstance(observation.screenshot, kind) and observation.screenshot.shape == shape
    action = device.expert_action()  # backend calls reach the device through the wrapper
    observation, _, _, _ = device.step(action)
    assert isinstance(observation.screenshot, kind) and observation.pixels().shape == shape
    device.close()


def test_a_phonesim_step_is_bounded_by_png() -> None:
    """The figure docs/design.md §8 states: a PhoneSim screen is ~760 KiB raw, tens of KiB as
    PNG."""
    cfg = load_config(None, [])
    device = make_device(cfg, Purpose.TRAIN, 0)
    sizes = []
    for task in load_suite("general", "train")[:3]:
        observation, done = device.reset(task), False
        while not done:
            sizes.append(observation.screenshot.nbytes)
            observation, _, done, _ = device.step(device.expert_action())
    assert max(sizes) < 64 * 1024 < 720 * 360 * 3
    placeholder = make_device(cfg, Purpose.TRAIN, 0, screenshots=False).reset(task)
    assert placeholder.screenshot is NO_SCREENSHOT
