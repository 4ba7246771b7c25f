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
incarnation. The backend is whatever ``env.backend`` names (:mod:`distrl.envs.backends`: built-in,
``gym:ENV_ID`` or a plug-in); backends with heavy dependencies (a browser, an adb server) are
imported only when chosen.
"""

from __future__ import annotations

from enum import Enum

from distrl.config.schema import RunConfig
from distrl.core.seeds import Stream, derive_seed
from distrl.envs.backends import backend_of
from distrl.envs.bounded import bounded_device
from distrl.envs.judged import JudgedDevice
from distrl.envs.protocol import DeviceEnv
from distrl.judges.factory import build_judge

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

    Simulated devices are free, so evaluation gets fresh ones on slots of their own. Real
    devices (Android) are few, and a training episode may be in flight on each training device,
    so evaluation takes the devices after the training ones (``train.devices + i``)."""
    if purpose is not Purpose.EVALUATE:
        return index
    if not getattr(backend_of(cfg), "real_devices", False):
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
    Ray worker's run session and restart): each gets a fresh seed.

    With a judge configured (``judge.kind`` other than ``state``) on a backend that does not
    apply it itself, the device is wrapped in a :class:`~distrl.envs.judged.JudgedDevice`
    (and takes screenshots: a judge looks at the screen). A device whose screenshots someone
    reads hands them out bounded (:mod:`distrl.envs.bounded`)."""
    slot = device_slot(cfg, purpose, index)
    seed = derive_seed(cfg.seed, Stream.DEVICE, purpose.value, slot, incarnation, *lineage)
    backend = backend_of(cfg)
    judge = None if getattr(backend, "judges_itself", False) else build_judge(cfg)
    device = backend.make_device(
        cfg,
        slot=slot,
        seed=seed,
        models_latency=purpose.models_latency,
        screenshots=screenshots or judge is not None,
    )
    if judge is not None:
        device = JudgedDevice(device, judge)  # the judge sees the device's own screenshots
    return bounded_device(device, cfg.env) if screenshots else device
