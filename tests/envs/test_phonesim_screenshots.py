"""PhoneSim without screenshots: the same episode, element for element, with no pixels rendered;
and training asks for it whenever the policy reads no pixels."""

from __future__ import annotations

from distrl.agents import OracleAgent
from distrl.config.schema import PhoneSimConfig, RunConfig
from distrl.core.observation import NO_SCREENSHOT
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.policies.small import SmallPolicy, SmallPolicyConfig
from distrl.runtime.components import capture_config
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


def test_training_devices_skip_screenshots_only_for_a_policy_that_reads_none() -> None:
    cfg = RunConfig()
    policy = SmallPolicy(SmallPolicyConfig())
    assert not policy.uses_screenshots
    lean = capture_config(cfg, policy)
    assert not lean.env.phonesim.screenshots and not lean.env.miniwob.screenshots
    assert cfg.env.phonesim.screenshots  # the caller's config is left as it was

    class PixelPolicy:
        uses_screenshots = True

    assert capture_config(cfg, PixelPolicy()).env.phonesim.screenshots  # type: ignore[arg-type]
