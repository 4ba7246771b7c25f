"""Starting or joining Ray with safe defaults, and checking it can place the run.

A local Ray is started on loopback only (Ray otherwise binds its servers to every interface and
advertises the machine's public address; ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` is Ray's own
switch for a single-machine instance), with explicit CPUs and one unit of the device resource
per device slot, no dashboard unless asked, a bounded task history (``ray.task_events_kept``),
and Ray's token authentication left as Ray sets it (on by default since Ray 2.59). Joining a
cluster (``ray.address``) uses the cluster's own settings; the device resource must then be
offered by the nodes that run devices.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import ray

from distrl.config.schema import RunConfig
from distrl.errors import InputError
from distrl.runtime.allocator import ALLOCATOR_ENV, return_freed_memory

LOOPBACK_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
#: Ray's setting for how many task attempts its GCS keeps (read by the GCS when it starts).
TASK_EVENTS_VARIABLE = "RAY_task_events_max_num_task_in_gcs"


def check_config(cfg: RunConfig) -> None:
    """What can be told wrong from the config alone, before any work starts."""
    if cfg.ray.workers > cfg.train.devices:
        raise InputError(
            f"ray.workers={cfg.ray.workers} exceeds train.devices={cfg.train.devices}: each "
            "worker needs at least one device"
        )
    address = cfg.ray.address
    if address and address != "auto" and "://" not in address:
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise InputError(f"ray.address={address}: expected 'auto' or host:port")
        try:  # Ray itself retries an unreachable address for minutes before giving up
            socket.create_connection((host, int(port)), timeout=5).close()
        except OSError as exc:
            raise InputError(
                f"ray.address={address}: no Ray cluster answers there ({exc.strerror or exc}); "
                "start one with `ray start --head` or leave ray.address unset for a local Ray"
            ) from exc


@contextmanager
def ray_session(cfg: RunConfig) -> Iterator[None]:
    """Ray for the run; shut down afterwards if this call started it."""
    check_config(cfg)
    if ray.is_initialized():  # an embedding program (or a test) already connected
        check_resources(cfg)
        yield
        return
    if cfg.ray.address is None:
        _stay_on_loopback()
        return_freed_memory()  # exported before the local raylet starts: its workers inherit it
        bound_task_history(cfg.ray.task_events_kept)
        ray.init(
            num_cpus=cfg.ray.num_cpus or os.cpu_count() or 1,
            resources={cfg.ray.device_resource: float(cfg.train.devices)},
            include_dashboard=cfg.ray.dashboard,
            log_to_driver=True,
            configure_logging=True,
            logging_level="WARNING",
        )
    else:
        try:
            # A joined cluster's workers did not inherit this process's environment.
            ray.init(
                address=cfg.ray.address,
                logging_level="WARNING",
                runtime_env={"env_vars": dict(ALLOCATOR_ENV)},
            )
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise InputError(
                f"ray.address={cfg.ray.address}: cannot join the cluster ({exc})"
            ) from exc
    try:
        check_resources(cfg)
        yield
    finally:
        ray.shutdown()


def _stay_on_loopback() -> None:
    """Make a local Ray advertise and bind 127.0.0.1 (unless the user set the switch).

    Ray reads the switch when it is imported, so a program that imported ray before us also
    needs the module constant changed; the environment variable covers Ray's child processes.
    """
    if LOOPBACK_SWITCH in os.environ:
        return
    os.environ[LOOPBACK_SWITCH] = "0"
    from ray._private import ray_constants

    ray_constants.ENABLE_RAY_CLUSTER = False


def bound_task_history(kept: int) -> None:
    """Cap the task attempts a local Ray's GCS remembers (``ray.task_events_kept``).

    Every actor call is a task, and the GCS keeps each one's events for the dashboard up to
    Ray's default of 100,000: in a 30-minute async run (a worker's replay calls and weight polls
    add up) that was the one process still growing. The GCS reads the limit from its
    environment when it starts, so it is exported before ``ray.init``; a value the user has
    already exported is left as it is.
    """
    os.environ.setdefault(TASK_EVENTS_VARIABLE, str(kept))


def check_resources(cfg: RunConfig) -> None:
    """Fail with a clear message instead of actors that stay pending forever."""
    offered = ray.cluster_resources().get(cfg.ray.device_resource, 0.0)
    if offered < cfg.train.devices:
        raise InputError(
            f"train.devices={cfg.train.devices} but the Ray cluster offers {offered:g} units of "
            f"the device resource {cfg.ray.device_resource!r}; start nodes with "
            f"`ray start --resources='{{\"{cfg.ray.device_resource}\": N}}'` or lower "
            "train.devices"
        )


def device_shares(devices: int, workers: int) -> list[int]:
    """Devices per worker, as even as possible.

    >>> device_shares(10, 4)
    [3, 3, 2, 2]
    """
    return [devices // workers + (1 if i < devices % workers else 0) for i in range(workers)]
