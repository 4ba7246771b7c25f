"""One place that turns the config into devices, asked for by what they are for.

Runtimes (play, training workers, evaluation, the warm start) ask for "device ``index`` for
``purpose``"; they never import a backend, and never edit a backend's settings to get the
device they need: the purpose decides.

* :attr:`Purpose.TRAIN` and :attr:`Purpose.PLAY`: the devices as configured, including PhoneSim's
  emulator latency and fault model (``env.phonesim.latency``).
* :attr:`Purpose.EVALUATE` and :attr:`Purpose.DEMONSTRATE`: simulator speed, without the latency
  and fault model. Evaluation measures the policy, not the devices (faults would bias it and a
  time-scaled evaluation would hold a run for minutes); demonstrations are an offline dataset.
  Evaluation devices also sit on other slots (:func:`device_slot`).
* ``screenshots=False``: the caller never reads pixels, so a backend skips them: a MiniWoB++
  browser's screenshot is about 3x the step time, and a PhoneSim screen is 0.78 MB that a run's
  in-flight episodes and warm-start demonstrations once held by the gigabyte.

Every device is seeded from the run's seed tree (:mod:`distrl.core.seeds`) by purpose, slot and
incarnation. Backends with heavy dependencies (a browser, an adb server) are imported only when
chosen.
"""

from __future__ import annotations

from enum import Enum

from distrl.config.schema import RunConfig
from distrl.core.seeds import Stream, derive_seed
from distrl.envs.emulator_pool import android_serials, emulator_pool
from distrl.envs.protocol import DeviceEnv
from distrl.errors import InputError
from distrl.evaluators.factory import build_judge

#: Slots of evaluation devices start here for simulated backends (apart from training's).
EVAL_SLOT_OFFSET = 50_000


class Purpose(Enum):
    """What a device is for; the value is its branch of the seed tree."""

    TRAIN = 0
    EVALUATE = 1
    DEMONSTRATE = 2
    PLAY = 3

    @property
    def models_latency(self) -> bool:
        """Whether devices for this purpose run the configured latency and fault model."""
        return self in (Purpose.TRAIN, Purpose.PLAY)


def device_slot(cfg: RunConfig, purpose: Purpose, index: int) -> int:
    """The device slot of the ``index``-th device for ``purpose``.

    Simulated devices are free, so evaluation gets fresh ones on slots of their own. Android
    devices are real and few, and a training episode may be in flight on each training device,
    so evaluation takes the devices after the training ones (``train.devices + i``)."""
    if purpose is not Purpose.EVALUATE:
        return index
    if cfg.env.backend != "android":
        return EVAL_SLOT_OFFSET + index
    return cfg.train.devices + index


def make_device(
    cfg: RunConfig,
    purpose: Purpose,
    index: int,
    *,
    screenshots: bool = True,
    incarnation: int = 0,
    lineage: tuple[int, ...] = (),
) -> DeviceEnv:
    """The ``index``-th device for ``purpose`` of the configured backend; ``incarnation`` counts
    rebuilds of the same device and ``lineage`` names the life of the process that builds it (a
    Ray worker's run session and restart): each gets a fresh seed."""
    slot = device_slot(cfg, purpose, index)
    seed = derive_seed(cfg.seed, Stream.DEVICE, purpose.value, slot, incarnation, *lineage)
    backend = cfg.env.backend
    if backend == "phonesim":
        from distrl.envs.phonesim.env import PhoneSimEnv

        phonesim = cfg.env.phonesim
        if phonesim.latency.enabled and not purpose.models_latency:
            latency = phonesim.latency.model_copy(update={"enabled": False})
            phonesim = phonesim.model_copy(update={"latency": latency})
        if phonesim.screenshots and not screenshots:
            phonesim = phonesim.model_copy(update={"screenshots": False})
        return PhoneSimEnv(phonesim, seed=seed, device_id=f"phonesim-{slot}")
    if backend == "miniwob":
        from distrl.envs.miniwob.env import MiniWoBEnv

        miniwob = cfg.env.miniwob
        if miniwob.screenshots and not screenshots:
            miniwob = miniwob.model_copy(update={"screenshots": False})
        return MiniWoBEnv(miniwob, seed=seed, device_id=f"miniwob-{slot}")
    if backend == "android":
        return _android_device(cfg, slot)
    raise InputError(f"env.backend={backend!r} is not a known backend")


def _android_device(cfg: RunConfig, slot: int) -> DeviceEnv:
    from distrl.envs.android.env import AndroidEnv

    pool = emulator_pool(cfg)
    if pool is not None and slot < len(pool.serials) and not pool.healthy(slot):
        # A device is rebuilt after it crashed or hung: bring its emulator back first.
        pool.restart(slot)
    serials = android_serials(cfg)
    if slot >= len(serials):
        raise InputError(
            f"env.backend=android: device slot {slot} needs {slot + 1} devices but the adb server "
            f"at {cfg.env.android.adb_host}:{cfg.env.android.adb_port} offers {len(serials)} "
            f"({', '.join(serials) or 'none'}); lower train.devices or start more devices"
        )
    return AndroidEnv(
        cfg.env.android, serials[slot], judge=build_judge(cfg), device_id=serials[slot]
    )
