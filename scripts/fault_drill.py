"""A fault drill for the ray runtime: device crashes and hangs, and one worker actor killed.

    python scripts/fault_drill.py --minutes 10 --crash 0.05 --hang 0.05 --kill-at 0.5

Runs async A-RIDE training with the emulator latency model on (time-scaled), kills worker 0 with
``ray.kill`` once the run is ``--kill-at`` through its budget (Ray restarts it; it re-syncs and
goes back to work), and prints the exactly-once accounting as JSON: ``collected`` (trajectories
the replay counted), ``stored`` (rows on disk), ``duplicated``, ``dropped_partial`` (episodes lost
to device faults, never stored) and ``restarts``.
"""

from __future__ import annotations

import argparse
import json

import ray

from distrl.config.loader import load_config
from distrl.runtime.distributed.driver import train_ray


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--crash", type=float, default=0.05, help="crash chance per step")
    parser.add_argument("--hang", type=float, default=0.05, help="hang chance per step")
    parser.add_argument("--kill-at", type=float, default=0.5, help="budget fraction to kill at")
    parser.add_argument("--time-scale", type=float, default=0.05)
    parser.add_argument("--devices", type=int, default=16)
    parser.add_argument("--run-root", default="runs")
    args = parser.parse_args()
    overrides = [
        "train.runtime=ray",
        "train.mode=async",
        f"train.minutes={args.minutes}",
        f"train.devices={args.devices}",
        "ray.workers=2",
        f"run_root={args.run_root}",
        "run_name=fault-drill",
        "env.phonesim.latency.enabled=true",
        f"env.phonesim.latency.time_scale={args.time_scale}",
        f"env.phonesim.latency.crash_prob={args.crash}",
        f"env.phonesim.latency.hang_prob={args.hang}",
    ]
    cfg = load_config("quick", overrides)
    killed: list[float] = []

    def kill_once(fraction: float, metrics: dict[str, float]) -> None:
        if not killed and fraction >= args.kill_at:
            ray.kill(ray.get_actor("distrl-worker-0"), no_restart=False)
            killed.append(round(fraction, 3))

    summary = train_ray(cfg, on_progress=kill_once).summary()
    keys = ("collected", "stored", "duplicated", "dropped_partial", "restarts", "updates")
    report = {key: summary[key] for key in keys}
    report["killed_at_fraction"] = killed[0] if killed else None
    report["collection"] = summary["collection"]
    report["final_success"] = summary["final_success"]
    report["run_dir"] = summary["run_dir"]
    print(json.dumps(report))
    return 0 if report["collected"] == report["stored"] and not report["duplicated"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
