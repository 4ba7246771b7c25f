"""One place that turns the config into devices and tasks, whatever the backend.

Runtimes (play, serial, Ray workers, evaluation) ask this module for "device slot i" and "the
tasks of split s"; they never import a backend themselves, so adding a backend means adding a
branch here, not editing every runtime. Backends with heavy dependencies (a browser, an adb
server) are imported only when chosen.
"""

from __future__ import annotations

import atexit
import threading
from typing import Any

from distrl.config.schema import RunConfig
from distrl.core.task import Task
from distrl.envs.protocol import DeviceEnv
from distrl.errors import InputError

#: Slots of evaluation devices start here for simulated backends (seeds far from training's).
EVAL_SLOT_OFFSET = 50_000


def device_seed(cfg: RunConfig, slot: int, incarnation: int = 0) -> int:
    """The seed of device ``slot``: derived from the run seed so every device differs."""
    return (cfg.seed * 10_007 + slot) * 1_009 + incarnation


def make_device(cfg: RunConfig, slot: int, seed: int | None = None) -> DeviceEnv:
    """Device ``slot`` of the configured backend (``seed`` defaults to :func:`device_seed`)."""
    seed = device_seed(cfg, slot) if seed is None else seed
    backend = cfg.env.backend
    if backend == "phonesim":
        from distrl.envs.phonesim.env import PhoneSimEnv

        return PhoneSimEnv(cfg.env.phonesim, seed=seed, device_id=f"phonesim-{slot}")
    if backend == "miniwob":
        from distrl.envs.miniwob.env import MiniWoBEnv

        return MiniWoBEnv(cfg.env.miniwob, seed=seed, device_id=f"miniwob-{slot}")
    if backend == "android":
        return _android_device(cfg, slot)
    raise InputError(f"env.backend={backend!r} is not a known backend")


def _android_device(cfg: RunConfig, slot: int) -> DeviceEnv:
    from distrl.envs.android.env import AndroidEnv

    pool = _emulator_pool(cfg)
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


def android_serials(cfg: RunConfig) -> list[str]:
    """The serials this run drives: ``env.android.serials``, else the emulators this process
    started (``env.android.emulator.binary``), else every online device."""
    if cfg.env.android.serials:
        return list(cfg.env.android.serials)
    pool = _emulator_pool(cfg)
    if pool is not None:
        return pool.serials
    from distrl.envs.android.adb_device import online_serials

    return online_serials(cfg.env.android)


_POOLS: dict[tuple[Any, ...], Any] = {}
_POOLS_LOCK = threading.Lock()


def _emulator_pool(cfg: RunConfig):  # -> EmulatorPool | None (lazy import)
    """The emulators of ``env.android.emulator``, booted once per process and stopped at exit
    (None when no emulator binary is configured: devices are already running)."""
    emulator = cfg.env.android.emulator
    if emulator.binary is None:
        return None
    key = (cfg.env.android.adb_host, cfg.env.android.adb_port, emulator.model_dump_json())
    with _POOLS_LOCK:
        if key not in _POOLS:
            from distrl.envs.android.emulator import EmulatorPool

            pool = EmulatorPool(cfg.env.android)
            pool.start()
            atexit.register(pool.stop)
            _POOLS[key] = pool
        return _POOLS[key]


def build_judge(cfg: RunConfig):  # -> SuccessJudge | None (kept untyped: lazy import)
    """The success judge the evaluator section asks for (None: the backend judges from state)."""
    if cfg.evaluator.kind == "state":
        return None
    from distrl.evaluators.vlm import VLMJudge

    return VLMJudge(cfg.evaluator.vlm)


def evaluation_slot(cfg: RunConfig, index: int) -> int:
    """The device slot of the ``index``-th evaluation device.

    Simulated devices are free, so evaluation gets fresh ones, seeded apart from training's.
    Android devices are real and few, and a training episode may be in flight on each training
    device, so evaluation takes the devices after the training ones (``train.devices + i``)."""
    if cfg.env.backend != "android":
        return EVAL_SLOT_OFFSET + index
    return cfg.train.devices + index


def load_tasks(cfg: RunConfig, split: str) -> list[Task]:
    """The tasks of ``split`` for the configured backend (a task file overrides the suite)."""
    from distrl.envs.phonesim.tasks.suites import load_suite
    from distrl.envs.task_file import load_task_file

    if cfg.env.task_file:
        return load_task_file(cfg.env.task_file)
    if cfg.env.backend == "miniwob":
        from distrl.envs.miniwob.tasks import miniwob_tasks

        return miniwob_tasks(cfg.env.miniwob, split)
    return load_suite(cfg.env.suite, split)


def task_family(task: Task) -> str:
    """What per-family success figures group by: the PhoneSim template, the MiniWoB++ task name,
    else the suite."""
    return str(task.spec.get("template") or task.spec.get("task") or task.suite)


def suite_label(cfg: RunConfig) -> str:
    """How progress bars and tables name the tasks: the task file, the MiniWoB++ tasks, or the
    suite."""
    if cfg.env.task_file:
        return cfg.env.task_file
    if cfg.env.backend == "miniwob":
        return "miniwob:" + ",".join(cfg.env.miniwob.tasks)
    return cfg.env.suite if cfg.env.backend == "phonesim" else f"{cfg.env.backend}:{cfg.env.suite}"
