"""The built-in device backends behind ``env.backend``, and the protocol a plug-in backend meets.

A backend is two things: devices (:meth:`Backend.make_device`) and the tasks they run
(:meth:`Backend.tasks`). :func:`distrl.envs.devices.make_device` resolves ``env.backend``
(a built-in name, ``gym:ENV_ID``, ``module:attribute`` or an entry point of group
``distrl.envs``; see :mod:`distrl.plugins`) to a backend and asks it for devices; a backend
never learns what a device is for, only whether to model latency and take screenshots.
Backends with heavy dependencies (a browser, an adb client) import them only when asked for a
device.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from distrl.config.schema import RunConfig
from distrl.core.task import Task
from distrl.envs.protocol import DeviceEnv
from distrl.errors import InputError


@runtime_checkable
class Backend(Protocol):
    """What ``env.backend`` names: a maker of devices and a source of tasks.

    Optional attributes a backend may set: ``real_devices = True`` when its devices are real
    and few (evaluation then takes the devices after the training ones instead of fresh
    slots), ``judges_itself = True`` when it applies ``judge.kind``'s judge itself.
    """

    def make_device(
        self, cfg: RunConfig, *, slot: int, seed: int, models_latency: bool, screenshots: bool
    ) -> DeviceEnv:
        """Device ``slot``, seeded with ``seed``; ``models_latency`` False asks for simulator
        speed (evaluation, demonstrations), ``screenshots`` False says nobody reads pixels."""
        ...

    def tasks(self, cfg: RunConfig, split: str) -> list[Task]:
        """The tasks of ``split`` (``train`` or ``test``) when no ``env.task_file`` is set."""
        ...


class PhoneSimBackend:
    """The embedded simulator; its tasks are the PhoneSim suites."""

    def make_device(
        self, cfg: RunConfig, *, slot: int, seed: int, models_latency: bool, screenshots: bool
    ) -> DeviceEnv:
        from distrl.envs.phonesim.env import PhoneSimEnv

        phonesim = cfg.env.phonesim
        if phonesim.latency.enabled and not models_latency:
            latency = phonesim.latency.model_copy(update={"enabled": False})
            phonesim = phonesim.model_copy(update={"latency": latency})
        if phonesim.screenshots and not screenshots:
            phonesim = phonesim.model_copy(update={"screenshots": False})
        return PhoneSimEnv(phonesim, seed=seed, device_id=f"phonesim-{slot}")

    def tasks(self, cfg: RunConfig, split: str) -> list[Task]:
        from distrl.envs.phonesim.tasks.suites import load_suite

        return load_suite(cfg.env.suite, split)


class MiniWoBBackend:
    """MiniWoB++ in headless Chromium (the ``miniwob`` extra)."""

    def make_device(
        self, cfg: RunConfig, *, slot: int, seed: int, models_latency: bool, screenshots: bool
    ) -> DeviceEnv:
        _require_miniwob()
        from distrl.envs.miniwob.env import MiniWoBEnv

        miniwob = cfg.env.miniwob
        if miniwob.screenshots and not screenshots:
            miniwob = miniwob.model_copy(update={"screenshots": False})
        return MiniWoBEnv(miniwob, seed=seed, device_id=f"miniwob-{slot}")

    def tasks(self, cfg: RunConfig, split: str) -> list[Task]:
        _require_miniwob()
        from distrl.envs.miniwob.tasks import miniwob_tasks

        return miniwob_tasks(cfg.env.miniwob, split)

    def label(self, cfg: RunConfig) -> str:
        return "miniwob:" + ",".join(cfg.env.miniwob.tasks)


def _require_miniwob() -> None:
    from distrl.extras import require

    for module in ("miniwob", "selenium"):
        require(module, "miniwob", "env.backend=miniwob")


class AndroidBackend:
    """Phones and emulators over an adb server (the ``android`` extra); PhoneSim's suites run on
    fake-adb's phones, instruction-only task files on real ones."""

    real_devices = True
    judges_itself = True

    def make_device(
        self, cfg: RunConfig, *, slot: int, seed: int, models_latency: bool, screenshots: bool
    ) -> DeviceEnv:
        from distrl.extras import require

        require("adbutils", "android", "env.backend=android")
        from distrl.envs.android.env import AndroidEnv
        from distrl.envs.emulator_pool import android_serials, emulator_pool
        from distrl.judges.factory import build_judge

        pool = emulator_pool(cfg)
        if pool is not None and slot < len(pool.serials) and not pool.healthy(slot):
            # A device is rebuilt after it crashed or hung: bring its emulator back first.
            pool.restart(slot)
        serials = android_serials(cfg)
        if slot >= len(serials):
            raise InputError(
                f"env.backend=android: device slot {slot} needs {slot + 1} devices but the adb "
                f"server at {cfg.env.android.adb_host}:{cfg.env.android.adb_port} offers "
                f"{len(serials)} ({', '.join(serials) or 'none'}); lower train.devices or start "
                "more devices"
            )
        return AndroidEnv(
            cfg.env.android, serials[slot], judge=build_judge(cfg), device_id=serials[slot]
        )

    def tasks(self, cfg: RunConfig, split: str) -> list[Task]:
        return PHONESIM.tasks(cfg, split)

    def label(self, cfg: RunConfig) -> str:
        return f"android:{cfg.env.suite}"


PHONESIM = PhoneSimBackend()
MINIWOB = MiniWoBBackend()
ANDROID = AndroidBackend()


def backend_of(cfg: RunConfig) -> Any:
    """The backend ``env.backend`` names (a class named by a plug-in is instantiated)."""
    from distrl.plugins import ENV_BACKENDS

    backend = ENV_BACKENDS.resolve(cfg.env.backend)
    if isinstance(backend, type):
        try:
            backend = backend()
        except TypeError as error:
            raise InputError(
                f"env.backend={cfg.env.backend}: the class {backend.__name__} is not a device "
                f"backend that can be built without arguments ({error})"
            ) from None
    if not isinstance(backend, Backend):
        raise InputError(
            f"env.backend={cfg.env.backend}: {type(backend).__name__} is not a device backend "
            "(it needs make_device(cfg, *, slot, seed, models_latency, screenshots) and "
            "tasks(cfg, split); see docs/guide.md#plug-ins)"
        )
    return backend
