"""distrl: asynchronous distributed online reinforcement learning for device-control agents.

Importing distrl registers its gymnasium ids (``distrl/PhoneSim-v0`` and one per suite and
split, e.g. ``distrl/PhoneSim-webshop-test-v0``) without importing the simulator: gymnasium
imports it on ``gymnasium.make``.
"""

import gymnasium as _gymnasium

__version__ = "0.1.0"

_ENTRY_POINT = "distrl.envs.phonesim.gym_env:PhoneSimGymEnv"
for _suite, _split in [(None, None)] + [
    (suite, split) for suite in ("general", "webshop") for split in ("train", "test")
]:
    _id = "distrl/PhoneSim-v0" if _suite is None else f"distrl/PhoneSim-{_suite}-{_split}-v0"
    if _id not in _gymnasium.registry:
        _kwargs = {} if _suite is None else {"suite": _suite, "split": _split}
        _gymnasium.register(id=_id, entry_point=_ENTRY_POINT, kwargs=_kwargs)
