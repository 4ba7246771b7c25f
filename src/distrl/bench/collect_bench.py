"""``distrl bench collect``: trajectories per hour, async against sync, on the same devices.

Both modes run the real ray runtime (worker actors, replay actor, learner actor training A-RIDE)
with the behaviour policy frozen at its initial weights, so both collect the same distribution of
episodes (a policy that learns to end episodes early would otherwise flatter whichever mode trained
more), on PhoneSim devices with the emulator latency model on, compressed by ``time_scale`` (0.05: a
modelled 7 s step sleeps 0.35 s). Figures are in modelled time: trajectories per modelled hour,
device utilisation (time inside reset/step calls over the time devices were available) and idle
device-hours. The sync mode's rounds include the time devices wait at the barrier for the slowest
device and while the learner trains, which is exactly the cost asynchrony removes. The learner's
real compute is not compressed, so the time scale is reported beside the figures, with the CPU
use of the machine (a benchmark whose CPU is saturated measures the CPU, not the runtime).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path

from distrl.config.schema import RunConfig
from distrl.runtime.distributed.driver import train_ray
from distrl.runtime.distributed.session import ray_session

#: Devices per worker actor (a worker steps its devices concurrently; more actors, more memory).
DEVICES_PER_WORKER = 8


@dataclass
class CollectFigures:
    mode: str
    devices: int
    trajectories: int
    real_seconds: float
    modelled_hours: float
    trajectories_per_hour: float
    device_utilisation: float
    idle_device_hours: float
    learner_updates: int
    cpu_busy: float | None
    time_scale: float


def bench_config(
    base: RunConfig, devices: int, mode: str, minutes: float, time_scale: float
) -> RunConfig:
    """The run one measurement makes: latency on, no warm start or evaluation, one episode per
    device per sync round."""
    cfg = base.model_copy(deep=True)
    cfg.train.runtime, cfg.train.mode = "ray", mode  # type: ignore[assignment]
    cfg.train.devices = devices
    cfg.train.minutes = minutes
    cfg.train.max_updates = None
    cfg.train.warm_start_episodes = 0
    cfg.train.demos = None
    cfg.train.episodes_per_round = devices
    cfg.train.freeze_behaviour = True  # same episodes in both modes: only the runtime differs
    cfg.train.max_staleness = 10**9  # ... and the learner keeps training on them (a real load)
    cfg.train.checkpoint_every_minutes = max(minutes, 1.0)
    cfg.ray.workers = max(1, math.ceil(devices / DEVICES_PER_WORKER))
    cfg.run_name = f"bench-collect-{mode}-{devices}"
    latency = cfg.env.phonesim.latency
    latency.enabled, latency.time_scale = True, time_scale
    return cfg


def measure(cfg: RunConfig) -> CollectFigures:
    """One run of ``cfg``; figures from the runtime's own collection accounting."""
    cpu = CpuMeter()
    result = train_ray(cfg, evaluate=False)
    collection = result.extra["collection"]
    seconds = collection["seconds"]
    scale = cfg.env.phonesim.latency.time_scale
    modelled_hours = seconds / scale / 3600
    return CollectFigures(
        mode=cfg.train.mode,
        devices=cfg.train.devices,
        trajectories=collection["trajectories"],
        real_seconds=seconds,
        modelled_hours=round(modelled_hours, 3),
        trajectories_per_hour=round(collection["trajectories"] / modelled_hours, 1),
        device_utilisation=collection["device_utilisation"],
        idle_device_hours=round(collection["idle_device_seconds"] / scale / 3600, 3),
        learner_updates=result.updates,
        cpu_busy=cpu.busy_fraction(),
        time_scale=scale,
    )


def bench_collect(
    base: RunConfig,
    devices: int,
    modes: list[str],
    minutes: float,
    time_scale: float,
    scaling: list[int] | None = None,
    plot: Path | None = None,
) -> dict[str, object]:
    """Measure each mode on ``devices`` devices (and the async scaling curve over ``scaling``);
    one local Ray session serves every run."""
    largest = max([devices, *(scaling or [])])
    session_cfg = base.model_copy(deep=True)
    session_cfg.train.devices = largest
    session_cfg.ray.workers = 1
    summary: dict[str, object] = {"devices": devices, "time_scale": time_scale}
    with ray_session(session_cfg):
        figures = {m: measure(bench_config(base, devices, m, minutes, time_scale)) for m in modes}
        summary["modes"] = {m: asdict(f) for m, f in figures.items()}
        if "async" in figures and "sync" in figures:
            ratio = figures["async"].trajectories_per_hour / figures["sync"].trajectories_per_hour
            summary["async_over_sync"] = round(ratio, 3)
        if scaling:
            curve = [measure(bench_config(base, n, "async", minutes, time_scale)) for n in scaling]
            base_rate = curve[0].trajectories_per_hour / curve[0].devices
            summary["scaling"] = [
                {
                    **asdict(point),
                    "efficiency": round(
                        point.trajectories_per_hour / (base_rate * point.devices), 3
                    ),
                }
                for point in curve
            ]
            if plot is not None:
                summary["plot"] = str(plot_scaling(summary["scaling"], plot))  # type: ignore[arg-type]
    return summary


def plot_scaling(points: list[dict[str, float]], path: Path) -> Path:
    """Trajectories per hour against devices, with perfect linear scaling for reference."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    devices = [p["devices"] for p in points]
    rates = [p["trajectories_per_hour"] for p in points]
    ideal = [rates[0] / devices[0] * d for d in devices]
    figure, axes = plt.subplots(figsize=(6, 4))
    axes.plot(devices, rates, "o-", label="async (measured)")
    axes.plot(devices, ideal, "--", color="grey", label="linear from the first point")
    axes.set_xlabel("devices")
    axes.set_ylabel("trajectories per modelled hour")
    axes.set_title("bench collect --scaling: async, PhoneSim latency model", fontsize=10)
    axes.legend()
    axes.grid(alpha=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


class CpuMeter:
    """Busy share of all cores between construction and :meth:`busy_fraction` (Linux
    /proc/stat; None elsewhere)."""

    def __init__(self) -> None:
        self.start = self._read()

    @staticmethod
    def _read() -> tuple[float, float] | None:
        try:
            fields = [float(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
        except (OSError, ValueError):
            return None
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)
        return sum(fields), idle

    def busy_fraction(self) -> float | None:
        end = self._read()
        if self.start is None or end is None or end[0] <= self.start[0]:
            return None
        total, idle = end[0] - self.start[0], end[1] - self.start[1]
        return round(1.0 - idle / total, 3)
