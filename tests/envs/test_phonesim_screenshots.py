"""PhoneSim without screenshots: the same episode, element for element, with no pixels rendered;
and training asks for it whenever the policy reads no pixels."""

from __future__ import annotations

from distrl.agents import OracleAgent
from distrl.config.schema import PhoneSimConfig, RunConfig
from distrl.core.observation import NO_SCREENSHOT
from distrl.envs.devices import Purpose, make_device
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.policies.small import SmallPolicy, SmallPolicyConfig
from distrl.runtime.rollout import run_episode


def test_an_episode_without_screenshots_matches_one_with_them_but_the_pixels() -> None:
    tasks = load_suite("general", "train")[:8]
    envs = [PhoneSimEnv(PhoneSimConfig(screenshots=on), seed=5) for on in (True, False)]
    for task in tasks:  # one device each, episode after episode: dynamics must stay in step
        rendered, lean = (run_episode(env, OracleAgent(env), task) for env in envs)
        assert rendered.success == lean.success
        assert [s.action for s in rendered.steps] == [s.action for s in lean.steps]
        assert [s.observation.elements for s in rendered.steps] == [
            s.observation.elements for s in lean.steps
        ]
        assert all(s.observation.screenshot.shape == (720, 360, 3) for s in rendered.steps)
        assert all(s.observation.screenshot is NO_SCREENSHOT for s in lean.steps)


def test_devices_skip_screenshots_only_when_asked_and_play_stores_none_it_need_not() -> None:
    cfg = RunConfig()
    for purpose in Purpose:
        lean = make_device(cfg, purpose, 0, screenshots=False)
        rendered = make_device(cfg, purpose, 0)
        task = load_suite("general", "train")[0]
        assert lean.reset(task).screenshot is NO_SCREENSHOT
        assert rendered.reset(task).screenshot.shape == (720, 360, 3)
    assert cfg.env.phonesim.screenshots  # the caller's config is left as it was
    assert not SmallPolicy(SmallPolicyConfig()).uses_screenshots
