"""distrl: asynchronous distributed online reinforcement learning for device-control agents."""

import gymnasium as _gymnasium

__version__ = "0.1.0"

if "distrl/PhoneSim-v0" not in _gymnasium.registry:
    _gymnasium.register(
        id="distrl/PhoneSim-v0",
        entry_point="distrl.envs.phonesim.gym_env:PhoneSimGymEnv",
    )
