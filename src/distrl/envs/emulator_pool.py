"""The Android emulators a run boots itself: one pool per process and configuration.

With ``env.android.emulator.binary`` set, the first device asked for boots the configured
emulators; later devices (and devices rebuilt after a crash) reuse the same pool, and the pool
is stopped when the process exits. Without it the devices are already running and the adb
server lists them.
"""

from __future__ import annotations

import atexit
import threading
from typing import Any

from distrl.config.schema import RunConfig

_POOLS: dict[tuple[Any, ...], Any] = {}
_POOLS_LOCK = threading.Lock()


def emulator_pool(cfg: RunConfig):  # -> EmulatorPool | None (lazy import)
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


def android_serials(cfg: RunConfig) -> list[str]:
    """The serials this run drives: ``env.android.serials``, else the emulators this process
    started (``env.android.emulator.binary``), else every online device."""
    if cfg.env.android.serials:
        return list(cfg.env.android.serials)
    pool = emulator_pool(cfg)
    if pool is not None:
        return pool.serials
    from distrl.envs.android.adb_device import online_serials

    return online_serials(cfg.env.android)
