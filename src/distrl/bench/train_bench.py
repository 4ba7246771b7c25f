"""``distrl bench train``: test success against wall-clock time, A-RIDE async against DigiRL sync
and filtered BC, on the same devices, latency model, warm start and budget.

The base config is the ``quick`` preset unless ``--preset`` names another (its warm start: 400
noisy-oracle demonstrations at noise 0.3, cloned for 60 steps, which then make up a quarter of
every batch), under a named :data:`SETTINGS` entry, under the user's flags and ``key=value``
overrides.

Per seed, the noisy-oracle demonstrations are collected and cloned once and every method starts
from those weights, so all three start from the same weak policy (their first curve points are
the same evaluation of the same weights). Each method then trains
with the ray runtime for the same wall-clock budget on PhoneSim devices with the emulator latency
model on, compressed by ``env.phonesim.latency.time_scale`` (a modelled 7 s step sleeps 0.35 s at
0.05): the devices are latency-bound like emulators, so what a runtime does with the waiting is
what is measured, while the learner's real compute is not compressed. A-RIDE runs ``async``
(workers never wait, the learner trains as data comes); DigiRL and filtered BC run ``sync``
rounds (one episode per device, the barrier, ``updates_per_round`` updates), as DigiRL's code
does. The runs' clocks start once their actors are up; evaluation (test split, greedy, at
simulator speed) happens every ``train.eval_every_minutes`` inside the budget.

Figures: ``time_to_target_ratio`` is DigiRL's minutes to reach the target success over A-RIDE's
(each on the mean curve over seeds, the first crossing linearly interpolated), and
``final_success_ratio`` A-RIDE's final success over DigiRL's, where a run's final success is the
mean of its last two curve points (the scheduled evaluation nearest the end and the evaluation of
the final policy), averaged over seeds. Each run keeps its own run folder under the bench folder,
so ``distrl view`` opens any of them.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from distrl.bench.collect_bench import DEVICES_PER_WORKER, CpuMeter
from distrl.bench.curves import (
    band_curve,
    best_level,
    final_level,
    ratio,
    seed_band,
    time_to_target,
)
from distrl.config.schema import RunConfig
from distrl.core.trajectory import Trajectory
from distrl.envs.task_sets import load_tasks
from distrl.errors import InputError
from distrl.runtime.components import build_policy
from distrl.runtime.distributed.driver import train_ray
from distrl.runtime.distributed.session import ray_session
from distrl.runtime.play import DEMOS_COMMAND, play
from distrl.runtime.run_log import TrainResult
from distrl.runtime.warm_start import demonstration_config, warm_start

#: Curve points averaged into a run's final success (see the module docstring).
FINAL_POINTS = 2


@dataclass(frozen=True)
class Setting:
    """A named bench size: config overrides applied under the user's own, plus the seed count
    and the target success of the time-to-target figure."""

    overrides: tuple[str, ...]
    seeds: int
    target: float


#: quick: ~15 minutes on 2 cores for all three methods and one seed; full: the README figures.
#: Time scale 0.05 (as ``bench collect``): a 10-step episode with its 45 s reset takes ~6 real
#: seconds, so 8 devices make ~1.4 episodes/s, which 2 cores act for with CPU to spare for the
#: learner; at 0.01 the devices would outrun the CPU and the bench would measure the CPU again.
#: Evaluations (2 x ``eval_episodes`` episodes, greedy and sampled) cost budget time in every
#: method, so they are spaced at 0.75 min in the quick setting (6 curve points). Learning starts
#: once the replay holds about one sync round of windows (``min_replay`` = devices), as DigiRL
#: trains after its first round: the preset's 64 windows took the sync baselines 4-8 rounds (most
#: of a quick budget) and filtered BC, which keeps successes only, never got there.
SETTINGS: dict[str, Setting] = {
    "quick": Setting(
        overrides=(
            "train.devices=8",
            "train.minutes=3.5",
            "train.eval_every_minutes=0.75",
            "train.eval_episodes=48",
            "train.min_replay=8",
            "env.phonesim.latency.enabled=true",
            "env.phonesim.latency.time_scale=0.05",
        ),
        seeds=1,
        target=0.25,
    ),
    "full": Setting(
        overrides=(
            "train.devices=16",
            "train.minutes=20",
            "train.eval_every_minutes=2",
            "train.eval_episodes=64",
            "train.min_replay=16",
            "env.phonesim.latency.enabled=true",
            "env.phonesim.latency.time_scale=0.05",
        ),
        seeds=3,
        target=0.35,
    ),
}


@dataclass(frozen=True)
class Method:
    name: str
    algo: str
    mode: str
    label: str


METHODS = (
    Method("aride_async", "aride", "async", "A-RIDE, async"),
    Method("digirl_sync", "digirl", "sync", "DigiRL, sync"),
    Method("fbc_sync", "fbc", "sync", "filtered BC, sync"),
    Method("aride_sync", "aride", "sync", "A-RIDE, sync"),
)
METHODS_BY_NAME = {method.name: method for method in METHODS}
#: What the bench compares unless ``--methods`` says otherwise (the paper's comparison);
#: ``aride_sync`` isolates the runtime: the same algorithm, synchronous rounds.
DEFAULT_METHODS = ("aride_async", "digirl_sync", "fbc_sync")
#: The method the ratios are A-RIDE async's over.
DEFAULT_BASELINE = "digirl_sync"
OURS = "aride_async"

#: (seed, method name, fraction of the run's budget spent).
Progress = Callable[[int, str, float], None]


def select_methods(names: Sequence[str], baseline: str) -> tuple[Method, ...]:
    """The methods to run, by name; A-RIDE async and the baseline must be among them, since the
    ratios compare those two."""
    unknown = [name for name in names if name not in METHODS_BY_NAME]
    if unknown:
        raise InputError(
            f"--methods: unknown {', '.join(unknown)} (choose from {', '.join(METHODS_BY_NAME)})"
        )
    if len(set(names)) != len(names):
        raise InputError(f"--methods names a method twice: {','.join(names)}")
    if OURS not in names:
        raise InputError(f"--methods must include {OURS}: the ratios are its figures")
    if baseline == OURS or baseline not in names:
        raise InputError(
            f"--baseline {baseline} must be one of --methods ({','.join(names)}) other than {OURS}"
        )
    return tuple(METHODS_BY_NAME[name] for name in names)


def check_arguments(cfg: RunConfig, seeds: int, target: float) -> None:
    """What the bench needs beyond a valid config; one line naming the fix."""
    if seeds < 1:
        raise InputError(f"--seeds must be >= 1, got {seeds}")
    if not 0 < target <= 1:
        raise InputError(f"--target must be a success rate in (0, 1], got {target}")
    if cfg.env.backend != "phonesim":
        raise InputError(f"bench train runs on PhoneSim (env.backend={cfg.env.backend})")
    if cfg.train.warm_start_episodes < 1:
        raise InputError("bench train needs a warm start: set train.warm_start_episodes >= 1")
    if cfg.train.eval_every_minutes > cfg.train.minutes:
        raise InputError(
            f"train.eval_every_minutes={cfg.train.eval_every_minutes} exceeds the budget "
            f"({cfg.train.minutes} min): the curve would have no point inside it"
        )


def method_config(base: RunConfig, method: Method, seed: int, bench_dir: Path) -> RunConfig:
    """One method's run: everything from ``base`` except the algorithm, the mode and where it
    goes; sync rounds collect one episode per device."""
    cfg = base.model_copy(deep=True)
    cfg.seed = seed
    cfg.train.algo, cfg.train.runtime, cfg.train.mode = method.algo, "ray", method.mode  # type: ignore[assignment]
    cfg.train.max_updates = None
    cfg.train.demos = None  # the bench hands every method the same demonstrations
    cfg.train.episodes_per_round = cfg.train.devices
    cfg.train.checkpoint_every_minutes = cfg.train.minutes + 1  # one checkpoint, at the end
    cfg.ray.workers = max(1, math.ceil(cfg.train.devices / DEVICES_PER_WORKER))
    cfg.run_root, cfg.run_name = str(bench_dir), f"seed{seed}-{method.name}"
    return cfg


def collect_demonstrations(cfg: RunConfig, bench_dir: Path) -> list[Trajectory]:
    """The seed's warm-start demonstrations, played once (at simulator speed) and stored under
    the bench folder like any ``collect-demos`` run."""
    demo_cfg = demonstration_config(cfg)
    demo_cfg.run_root, demo_cfg.run_name = str(bench_dir), f"seed{cfg.seed}-demos"
    demonstrations: list[Trajectory] = []
    play(
        demo_cfg,
        load_tasks(cfg, "train"),
        on_episode=demonstrations.append,
        command=DEMOS_COMMAND,
        screenshots=cfg.policy.kind != "small",  # the small policy reads the element list only
    )
    return demonstrations


def clone_warm_start(
    cfg: RunConfig, demonstrations: list[Trajectory], bench_dir: Path
) -> dict[str, torch.Tensor]:
    """The seed's warm-started weights: the demonstrations cloned once (behaviour cloning takes
    minutes on a loaded 2-core machine; doing it per method multiplied that)."""
    policy = build_policy(cfg)
    warm_start(policy, cfg, load_tasks(cfg, "train"), bench_dir, demonstrations)
    return {name: tensor.detach().clone() for name, tensor in policy.state_dict().items()}


def bench_train(
    base: RunConfig,
    seeds: int,
    target: float,
    bench_dir: Path,
    on_progress: Progress | None = None,
    methods: Sequence[str] = DEFAULT_METHODS,
    baseline: str = DEFAULT_BASELINE,
) -> dict[str, Any]:
    """Run every method for every seed (seeds ``base.seed`` onwards) and summarise; the summary
    also goes to ``bench_dir/bench-train.json`` and the curves to ``bench_dir/bench-train.png``.

    The methods' order rotates with the seed, so a change in the machine's load over the bench
    does not always fall on the same method."""
    chosen = select_methods(methods, baseline)
    check_arguments(base, seeds, target)
    bench_dir.mkdir(parents=True, exist_ok=True)
    started, cpu, load_before = time.monotonic(), CpuMeter(), os.getloadavg()
    runs: dict[str, list[tuple[int, TrainResult, float]]] = {m.name: [] for m in chosen}
    session_cfg = base.model_copy(deep=True)
    session_cfg.ray.workers = 1
    with ray_session(session_cfg):
        for offset in range(seeds):
            seed = base.seed + offset
            seed_cfg = base.model_copy(deep=True)
            seed_cfg.seed = seed
            demonstrations = collect_demonstrations(seed_cfg, bench_dir)
            start_weights = clone_warm_start(seed_cfg, demonstrations, bench_dir)
            for turn in range(len(chosen)):
                method = chosen[(turn + offset) % len(chosen)]
                cfg = method_config(base, method, seed, bench_dir)
                report = _progress_for(on_progress, seed, method.name)
                run_started = time.monotonic()
                result = train_ray(
                    cfg,
                    demonstrations=demonstrations,
                    on_progress=report,
                    start_weights=start_weights,
                )
                runs[method.name].append((seed, result, time.monotonic() - run_started))
    summary = summarise(base, runs, target, baseline)
    summary["machine"] = {
        "cpus": os.cpu_count(),
        "cpu_busy": cpu.busy_fraction(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }
    summary["wall_seconds"] = round(time.monotonic() - started, 1)
    summary["bench_dir"] = str(bench_dir)
    summary["plot"] = str(plot_curves(summary, bench_dir / "bench-train.png"))
    (bench_dir / "bench-train.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _progress_for(
    on_progress: Progress | None, seed: int, name: str
) -> Callable[[float, dict[str, float]], None] | None:
    if on_progress is None:
        return None
    return lambda fraction, _metrics: on_progress(seed, name, fraction)


def summarise(
    base: RunConfig,
    runs: dict[str, list[tuple[int, TrainResult, float]]],
    target: float,
    baseline_name: str = DEFAULT_BASELINE,
) -> dict[str, Any]:
    """Per-method curves and figures, and the two ratios of A-RIDE async over the baseline
    (DigiRL sync unless told otherwise)."""
    methods: dict[str, Any] = {}
    for name, entries in runs.items():
        method = METHODS_BY_NAME[name]
        curves = [result.curve for _, result, _ in entries]
        band = seed_band(curves)
        methods[method.name] = {
            "algo": method.algo,
            "mode": method.mode,
            "label": method.label,
            "final_success": round(_mean([final_level(c, FINAL_POINTS) for c in curves]), 4),
            "best_success": round(max(band["mean"]), 4),
            "initial_success": round(_mean([c[0]["success"] for c in curves]), 4),
            "time_to_target_minutes": _rounded(time_to_target(band_curve(band), target)),
            "updates": round(_mean([r.updates for _, r, _ in entries]), 1),
            "trajectories": round(_mean([r.extra["collected"] for _, r, _ in entries]), 1),
            "curve": band,
            "runs": [_run_figures(seed, result, wall, target) for seed, result, wall in entries],
        }
    ours, baseline = methods[OURS], methods[baseline_name]
    return {
        "suite": base.env.suite,
        "settings": _settings(base, [seed for seed, _, _ in runs[OURS]], target),
        "methods": methods,
        "baseline": baseline_name,
        "time_to_target_ratio": ratio(
            baseline["time_to_target_minutes"], ours["time_to_target_minutes"]
        ),
        "time_to_target_ratio_at_least": _ratio_lower_bound(ours, baseline),
        "time_to_target_note": _target_note(ours, baseline, target),
        "final_success_ratio": ratio(ours["final_success"], baseline["final_success"]),
    }


def _run_figures(seed: int, result: TrainResult, wall: float, target: float) -> dict[str, Any]:
    return {
        "seed": seed,
        "final_success": round(final_level(result.curve, FINAL_POINTS), 4),
        "best_success": round(best_level(result.curve), 4),
        "time_to_target_minutes": _rounded(time_to_target(result.curve, target)),
        "updates": result.updates,
        "trajectories": result.extra["collected"],
        "device_utilisation": result.extra["collection"]["device_utilisation"],
        "curve": result.curve,
        "wall_seconds": round(wall, 1),
        "run_dir": str(result.run_dir),
    }


def _settings(base: RunConfig, seeds: list[int], target: float) -> dict[str, Any]:
    train = base.train
    return {
        "devices": train.devices,
        "workers": max(1, math.ceil(train.devices / DEVICES_PER_WORKER)),
        "budget_minutes": train.minutes,
        "seeds": seeds,
        "target": target,
        "time_scale": base.env.phonesim.latency.time_scale,
        "latency_model": base.env.phonesim.latency.enabled,
        "eval_every_minutes": train.eval_every_minutes,
        "eval_episodes": train.eval_episodes,
        "final_success_points": FINAL_POINTS,
        "warm_start": {
            "episodes": train.warm_start_episodes,
            "noise": train.demo_noise,
            "bc_steps": train.bc_steps,
        },
        "sync_round": {"episodes": train.devices, "updates": train.updates_per_round},
        "success": "greedy, test split",
    }


def _ratio_lower_bound(ours: dict[str, Any], baseline: dict[str, Any]) -> float | None:
    """When A-RIDE reached the target and the baseline never did, the ratio is at least the
    baseline's whole evaluated span over A-RIDE's time (it would have needed longer than it
    ran); otherwise the ratio itself (or None where A-RIDE never reached the target)."""
    mine = ours["time_to_target_minutes"]
    if mine is None or mine <= 0:
        return None
    theirs = baseline["time_to_target_minutes"]
    if theirs is None:
        theirs = baseline["curve"]["minutes"][-1]
    return ratio(theirs, mine)


def _target_note(ours: dict[str, Any], baseline: dict[str, Any], target: float) -> str:
    """Why a time-to-target figure is missing, or how it was read."""
    missing = [
        f"{m['label']} never reached {target:g} (best {m['best_success']:.3f})"
        for m in (ours, baseline)
        if m["time_to_target_minutes"] is None
    ]
    if missing:
        return "; ".join(missing) + ": no ratio"
    if ours["time_to_target_minutes"] == 0:
        return f"A-RIDE started at or above {target:g}: no ratio"
    return f"first crossing of {target:g} on the mean curve, linearly interpolated"


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def plot_curves(summary: dict[str, Any], path: Path) -> Path:
    """Mean greedy test success against wall-clock minutes per method, min-max over seeds
    shaded, the target dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    settings = summary["settings"]
    figure, axes = plt.subplots(figsize=(7, 4.5))
    for figures in summary["methods"].values():
        band = figures["curve"]
        (line,) = axes.plot(band["minutes"], band["mean"], "o-", ms=3, label=figures["label"])
        if len(settings["seeds"]) > 1:
            axes.fill_between(
                band["minutes"], band["min"], band["max"], color=line.get_color(), alpha=0.2
            )
    axes.axhline(
        settings["target"], ls="--", color="grey", lw=1, label=f"target {settings['target']:g}"
    )
    axes.set(
        xlabel="wall-clock minutes",
        ylabel="test success (greedy)",
        ylim=(0, 1),
        title=(
            f"bench train: {summary['suite']}, {settings['devices']} devices, "
            f"time scale {settings['time_scale']}, {len(settings['seeds'])} seed(s)"
        ),
    )
    axes.title.set_fontsize(10)
    axes.legend(loc="upper left", fontsize=8)
    axes.grid(alpha=0.3)
    return save_png(figure, path)


def save_png(figure: Any, path: Path) -> Path:
    """Write a matplotlib ``figure`` to ``path`` (folders made) and free it: a bench draws
    several figures in one process, and pyplot keeps every open one alive."""
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
