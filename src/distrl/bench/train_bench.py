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

Every (method, seed) run is kept in the bench's results folder the moment it finishes
(:mod:`distrl.bench.results`), and the same command run again skips the finished ones (a
seed's demonstrations and cloned weights are kept too), so an interrupted bench loses at most
the run it was in. The figures come from :func:`distrl.bench.report.report` over whatever the
folder holds: curves with their mean and 95% bootstrap interval over seeds, and
``time_to_target_ratio`` and ``final_success_ratio`` (A-RIDE async over DigiRL sync) each as
``{mean, ci_low, ci_high}``; a run's final success is its final policy's evaluation on
``train.final_eval_episodes`` (320) greedy test episodes, played after the budget. Each run
keeps its own run folder under the results folder, so ``distrl view`` opens any of them.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from distrl.bench.collect_bench import DEVICES_PER_WORKER
from distrl.bench.methods import (
    DEFAULT_BASELINE,
    DEFAULT_METHODS,
    METHODS,
    METHODS_BY_NAME,
    OURS,
    Method,
    select_methods,
)
from distrl.bench.report import report
from distrl.bench.results import claim_folder, is_done, save_result, setting_digest
from distrl.config.loader import apply_overrides
from distrl.config.schema import RunConfig
from distrl.core.trajectory import Trajectory
from distrl.envs.task_sets import load_tasks
from distrl.errors import InputError
from distrl.runtime.allocator import active_allocator
from distrl.runtime.components import build_policy
from distrl.runtime.distributed.driver import train_ray
from distrl.runtime.distributed.session import ray_session
from distrl.runtime.play import DEMOS_COMMAND, play
from distrl.runtime.run_log import TrainResult
from distrl.runtime.warm_start import demonstration_config, load_demonstrations, warm_start
from distrl.torch_files import read_torch_file

__all__ = [
    "DEFAULT_BASELINE",
    "DEFAULT_METHODS",
    "METHODS",
    "METHODS_BY_NAME",
    "OURS",
    "SETTINGS",
    "Method",
    "bench_train",
    "check_arguments",
    "default_results_folder",
    "select_methods",
]


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


#: (seed, method name, fraction of the run's budget spent).
Progress = Callable[[int, str, float], None]


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
    """One method's run: everything from ``base`` except the algorithm, the mode, the method's
    own overrides (an ablation's) and where it goes; sync rounds collect one episode per
    device."""
    cfg = apply_overrides(base, method.overrides)
    cfg.seed = seed
    cfg.train.algo, cfg.train.runtime, cfg.train.mode = method.algo, "ray", method.mode  # type: ignore[assignment]
    cfg.train.max_updates = None
    cfg.train.demos = None  # the bench hands every method the same demonstrations
    cfg.train.episodes_per_round = cfg.train.devices
    cfg.train.checkpoint_every_minutes = cfg.train.minutes + 1  # one checkpoint, at the end
    cfg.ray.workers = max(1, math.ceil(cfg.train.devices / DEVICES_PER_WORKER))
    cfg.run_root, cfg.run_name = str(bench_dir), f"seed{seed}-{method.name}"
    return cfg


def default_results_folder(root: Path, setting: str, base: RunConfig) -> Path:
    """Where a bench keeps its runs unless told: named by the bench setting and a digest of the
    resolved config, so the same command finds its folder again and another setting gets its
    own."""
    return root / f"bench-train-{setting}-{setting_digest(base)}"


def collect_demonstrations(cfg: RunConfig, bench_dir: Path) -> tuple[list[Trajectory], Path]:
    """The seed's warm-start demonstrations, played once (at simulator speed) and stored under
    the bench folder like any ``collect-demos`` run; and that run's folder."""
    demo_cfg = demonstration_config(cfg)
    demo_cfg.run_root, demo_cfg.run_name = str(bench_dir), f"seed{cfg.seed}-demos"
    demonstrations: list[Trajectory] = []
    played = play(
        demo_cfg,
        load_tasks(cfg, "train"),
        on_episode=demonstrations.append,
        command=DEMOS_COMMAND,
        screenshots=cfg.policy.kind != "small",  # the small policy reads the element list only
    )
    return demonstrations, played.run_dir


def clone_warm_start(
    cfg: RunConfig, demonstrations: list[Trajectory], bench_dir: Path
) -> dict[str, torch.Tensor]:
    """The seed's warm-started weights: the demonstrations cloned once (behaviour cloning takes
    minutes on a loaded 2-core machine; doing it per method multiplied that)."""
    policy = build_policy(cfg)
    warm_start(policy, cfg, load_tasks(cfg, "train"), bench_dir, demonstrations)
    return {name: tensor.detach().clone() for name, tensor in policy.state_dict().items()}


def seed_warm_start(
    cfg: RunConfig, bench_dir: Path
) -> tuple[list[Trajectory], dict[str, torch.Tensor]]:
    """The seed's demonstrations and cloned weights: made once and kept in the results folder
    (``seed<S>-warm-start.pt``, written when both are complete), so a bench run again after an
    interruption starts the seed's remaining methods from the same weights.

    The demonstrations' folder is kept by name and found inside ``bench_dir``, so a results
    folder that was moved or renamed still resumes (older files held a full path: only its name
    is read)."""
    kept = bench_dir / f"seed{cfg.seed}-warm-start.pt"
    if kept.exists():
        state = read_torch_file(kept, "bench warm start", "delete it to clone the seed again")
        demos_dir = bench_dir / Path(state["demonstrations"]).name
        return load_demonstrations(demos_dir), state["weights"]
    demonstrations, demos_dir = collect_demonstrations(cfg, bench_dir)
    weights = clone_warm_start(cfg, demonstrations, bench_dir)
    staged = kept.with_name(f".{kept.name}.tmp")
    torch.save({"weights": weights, "demonstrations": demos_dir.name}, staged)
    os.replace(staged, kept)
    return demonstrations, weights


def bench_train(
    base: RunConfig,
    seeds: int,
    target: float,
    bench_dir: Path,
    on_progress: Progress | None = None,
    methods: Sequence[str] = DEFAULT_METHODS,
    baseline: str = DEFAULT_BASELINE,
) -> dict[str, Any]:
    """Run every method for every seed (seeds ``base.seed`` onwards) that ``bench_dir`` has no
    result for, keep each result as it finishes, then :func:`~distrl.bench.report.report` the
    folder (``bench_dir/bench-train.json`` and ``bench_dir/bench-train.png``).

    The methods' order rotates with the seed, so a change in the machine's load over the bench
    does not always fall on the same method."""
    chosen = select_methods(methods, baseline)
    check_arguments(base, seeds, target)
    claim_folder(bench_dir, base, {"target": target, "baseline": baseline})
    order = {
        base.seed + offset: [chosen[(turn + offset) % len(chosen)] for turn in range(len(chosen))]
        for offset in range(seeds)
    }
    todo = {
        seed: [m for m in rotated if not is_done(bench_dir, m.name, seed)]
        for seed, rotated in order.items()
    }
    for seed, rotated in order.items():
        for method in rotated:
            if method not in todo[seed] and on_progress is not None:
                on_progress(seed, method.name, 1.0)  # finished by an earlier command
    if any(todo.values()):
        session_cfg = base.model_copy(deep=True)
        session_cfg.ray.workers = 1
        with ray_session(session_cfg):
            for seed, pending in todo.items():
                if pending:
                    _run_seed(base, seed, pending, bench_dir, on_progress)
    return report(bench_dir, target, baseline)


def _run_seed(
    base: RunConfig,
    seed: int,
    pending: list[Method],
    bench_dir: Path,
    on_progress: Progress | None,
) -> None:
    """Train the seed's ``pending`` methods from its warm start, keeping each result."""
    seed_cfg = base.model_copy(deep=True)
    seed_cfg.seed = seed
    demonstrations, start_weights = seed_warm_start(seed_cfg, bench_dir)
    for method in pending:
        cfg = method_config(base, method, seed, bench_dir)
        load_start, started = os.getloadavg(), time.monotonic()
        result = train_ray(
            cfg,
            demonstrations=demonstrations,
            on_progress=_progress_for(on_progress, seed, method.name),
            start_weights=start_weights,
        )
        wall = time.monotonic() - started
        save_result(bench_dir, run_record(method, seed, result, wall, load_start))


def run_record(
    method: Method,
    seed: int,
    result: TrainResult,
    wall: float,
    load_start: tuple[float, float, float],
) -> dict[str, Any]:
    """What the results folder keeps of one finished run (the report reads only this)."""
    return {
        "method": method.name,
        "seed": seed,
        "algo": method.algo,
        "mode": method.mode,
        "overrides": list(method.overrides),
        "curve": result.curve,
        "updates": result.updates,
        "trajectories": result.extra["collected"],
        "device_utilisation": result.extra["collection"]["device_utilisation"],
        "diagnostics": result.extra.get("diagnostics", {}),
        "wall_seconds": round(wall, 1),
        "load_start": [round(x, 2) for x in load_start],
        "load_end": [round(x, 2) for x in os.getloadavg()],
        "allocator": active_allocator(),  # the bench's processes all inherit this one
        "run_dir": str(result.run_dir),
    }


def _progress_for(
    on_progress: Progress | None, seed: int, name: str
) -> Callable[[float, dict[str, float]], None] | None:
    if on_progress is None:
        return None
    return lambda fraction, _metrics: on_progress(seed, name, fraction)
