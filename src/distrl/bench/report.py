"""``distrl bench report DIR``: merge a train bench's finished runs into its figures.

Reads the results folder (:mod:`distrl.bench.results`), whatever subset of (method, seed) runs
it holds, and writes ``DIR/bench-train.json`` and ``DIR/bench-train.png``:

* per method, the success curve on a common time grid with its mean over seeds, the mean's 95%
  bootstrap interval over seeds (``ci_low``, ``ci_high``), min and max, and the evaluations' own
  standard error; the final success (the final policy's evaluation) with its interval; the time
  to the target on the mean curve; the learner diagnostics (:mod:`distrl.runtime.diagnostics`)
  averaged over seeds; every run's own figures and the machine's load around it;
* ``time_to_target_ratio`` (the baseline's minutes to the target over A-RIDE async's, each on
  its mean curve) and ``final_success_ratio`` (A-RIDE async's final success over the
  baseline's), each ``{mean, ci_low, ci_high}``: the estimate on every seed both methods ran and
  a paired bootstrap over those seeds (:mod:`distrl.bench.stats`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from distrl.bench.curves import (
    band_curve,
    best_level,
    final_success,
    ratio,
    seed_band,
    seed_grid,
    time_to_target,
)
from distrl.bench.methods import DEFAULT_BASELINE, METHODS_BY_NAME, OURS
from distrl.bench.results import SETTING_FILE, load_results, read_json, write_json_atomically
from distrl.bench.stats import bootstrap_interval, bootstrap_statistic
from distrl.config.renames import migrate_mapping
from distrl.config.schema import RunConfig
from distrl.errors import InputError
from distrl.runtime.diagnostics import DIAGNOSTICS

SUMMARY_FILE = "bench-train.json"
PLOT_FILE = "bench-train.png"
#: Curve points averaged into a run's final success when its curve has no final evaluation.
FINAL_POINTS = 2


def report(folder: Path, target: float | None = None, baseline: str | None = None) -> dict:
    """Merge ``folder``'s finished runs; ``target`` and ``baseline`` default to those of the
    bench command that made it. The summary is also written beside the runs, with its plot."""
    if not (folder / SETTING_FILE).exists():
        raise InputError(f"{folder}: not a bench train results folder (no {SETTING_FILE})")
    recorded = read_json(folder / SETTING_FILE)
    options = recorded.get("report", {})
    target = options.get("target", 0.25) if target is None else target
    baseline = baseline or options.get("baseline", DEFAULT_BASELINE)
    if not 0 < target <= 1:
        raise InputError(f"--target must be a success rate in (0, 1], got {target}")
    records = list(load_results(folder))
    base = RunConfig.model_validate(migrate_mapping(recorded["config"], str(folder / SETTING_FILE)))
    summary = summarise(base, records, target, baseline)
    summary["bench_dir"] = str(folder)
    summary["plot"] = str(plot_curves(summary, folder / PLOT_FILE))
    write_json_atomically(folder / SUMMARY_FILE, summary)
    return summary


def summarise(
    base: RunConfig, records: Sequence[dict[str, Any]], target: float, baseline: str
) -> dict[str, Any]:
    """Per-method figures and the two ratios of A-RIDE async over ``baseline``."""
    by_method: dict[str, dict[int, dict[str, Any]]] = {}
    for record in records:
        if record["method"] not in METHODS_BY_NAME:
            raise InputError(f"bench result for an unknown method {record['method']!r}")
        by_method.setdefault(record["method"], {})[int(record["seed"])] = record
    for name in (OURS, baseline):
        if name not in by_method:
            raise InputError(
                f"no finished {name} run in the results yet: the ratios compare {OURS} with "
                f"{baseline} (finish a bench run of both, or choose --baseline)"
            )
    methods = {name: _method_figures(name, runs, target) for name, runs in by_method.items()}
    seeds = sorted({int(record["seed"]) for record in records})
    ours, theirs = by_method[OURS], by_method[baseline]
    paired = sorted(set(ours) & set(theirs))
    time_ratio, defined = _time_ratio(
        [ours[s]["curve"] for s in paired], [theirs[s]["curve"] for s in paired], target
    )
    final_ratio = _final_ratio(
        [final_success(ours[s]["curve"], FINAL_POINTS) for s in paired],
        [final_success(theirs[s]["curve"], FINAL_POINTS) for s in paired],
    )
    return {
        "suite": base.env.suite,
        "settings": _settings(base, seeds, target),
        "seeds": seeds,
        "paired_seeds": paired,
        "methods": methods,
        "baseline": baseline,
        "time_to_target_ratio": time_ratio,
        "time_to_target_ratio_at_least": _ratio_lower_bound(methods[OURS], methods[baseline]),
        "time_to_target_note": _target_note(methods[OURS], methods[baseline], target, defined),
        "final_success_ratio": final_ratio,
        "machine": {
            "cpus": os.cpu_count(),
            "runs": [{key: record.get(key) for key in _MACHINE_KEYS} for record in records],
        },
    }


def _final_ratio(ours: list[float], theirs: list[float]) -> dict[str, float | None]:
    """Our mean final success over the baseline's on a sample of the paired seeds."""
    if not ours:
        return {"mean": None, "ci_low": None, "ci_high": None}

    def statistic(rows: np.ndarray) -> float | None:
        return ratio(float(np.mean(np.take(ours, rows))), float(np.mean(np.take(theirs, rows))))

    return bootstrap_statistic(len(ours), statistic)[0]


def _time_ratio(
    ours: list[list[dict[str, float]]], theirs: list[list[dict[str, float]]], target: float
) -> tuple[dict[str, float | None], float]:
    """The baseline's minutes to ``target`` over ours, each read on the mean curve of a sample
    of the paired seeds; with the share of resamples where both mean curves reach it."""
    if not ours:
        return {"mean": None, "ci_low": None, "ci_high": None}, 0.0
    grids = [seed_grid(curves) for curves in (ours, theirs)]

    def statistic(rows: np.ndarray) -> float | None:
        minutes = [
            time_to_target(
                band_curve({"minutes": grid, "mean": list(values[rows].mean(axis=0))}), target
            )
            for grid, values in grids
        ]
        return ratio(minutes[1], minutes[0])

    return bootstrap_statistic(len(ours), statistic)


def _method_figures(name: str, runs: dict[int, dict[str, Any]], target: float) -> dict[str, Any]:
    method = METHODS_BY_NAME[name]
    ordered = [runs[seed] for seed in sorted(runs)]
    curves = [record["curve"] for record in ordered]
    band = seed_band(curves)
    finals = [final_success(curve, FINAL_POINTS) for curve in curves]
    return {
        "algo": method.algo,
        "mode": method.mode,
        "label": method.label,
        "overrides": list(method.overrides),
        "seeds": sorted(runs),
        "final_success": round(float(np.mean(finals)), 4),
        "final_success_ci": bootstrap_interval(finals),
        "best_success": round(max(band["mean"]), 4),
        "initial_success": round(float(np.mean([c[0]["success"] for c in curves])), 4),
        "time_to_target_minutes": _rounded(time_to_target(band_curve(band), target)),
        "updates": round(float(np.mean([r["updates"] for r in ordered])), 1),
        "trajectories": round(float(np.mean([r["trajectories"] for r in ordered])), 1),
        "diagnostics": _diagnostics([r.get("diagnostics", {}) for r in ordered]),
        "curve": band,
        "runs": [_run_figures(record, target) for record in ordered],
    }


def _diagnostics(runs: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Per diagnostic the runs logged: the mean over seeds of each run's mean and last value,
    and the largest value any run saw."""
    merged = {}
    for key in DIAGNOSTICS:
        logged = [run[key] for run in runs if key in run]
        if logged:
            merged[key] = {
                "mean": round(float(np.mean([d["mean"] for d in logged])), 6),
                "last": round(float(np.mean([d["last"] for d in logged])), 6),
                "max": round(float(max(d["max"] for d in logged)), 6),
            }
    return merged


def _run_figures(record: dict[str, Any], target: float) -> dict[str, Any]:
    curve = record["curve"]
    return {
        "seed": record["seed"],
        "final_success": round(final_success(curve, FINAL_POINTS), 4),
        "final_success_se": curve[-1].get("success_se"),
        "best_success": round(best_level(curve), 4),
        "time_to_target_minutes": _rounded(time_to_target(curve, target)),
        **{key: record.get(key) for key in _RUN_KEYS},
        "curve": curve,
    }


#: What the machine section keeps of each run: what else ran beside it, and its allocator.
_MACHINE_KEYS = ("method", "seed", "load_start", "load_end", "allocator")

#: What a run's figures copy from its result file as is.
_RUN_KEYS = (
    "updates",
    "trajectories",
    "device_utilisation",
    "diagnostics",
    "wall_seconds",
    "load_start",
    "load_end",
    "allocator",
    "run_dir",
)


def _settings(base: RunConfig, seeds: list[int], target: float) -> dict[str, Any]:
    from distrl.bench.collect_bench import DEVICES_PER_WORKER

    train = base.train
    return {
        "devices": train.devices,
        "workers": max(1, -(-train.devices // DEVICES_PER_WORKER)),
        "budget_minutes": train.minutes,
        "seeds": seeds,
        "target": target,
        "time_scale": base.env.phonesim.latency.time_scale,
        "latency_model": base.env.phonesim.latency.enabled,
        "eval_every_minutes": train.eval_every_minutes,
        "eval_episodes": train.eval_episodes,
        "final_eval_episodes": train.final_eval_episodes,
        "warm_start": {
            "episodes": train.warm_start_episodes,
            "noise": train.demo_noise,
            "bc_steps": train.bc_steps,
        },
        "sync_round": {"episodes": train.devices, "updates": train.updates_per_round},
        "success": "greedy, test split",
        "intervals": "95%, percentile bootstrap over seeds (paired by seed for the ratios)",
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


def _target_note(
    ours: dict[str, Any], baseline: dict[str, Any], target: float, defined: float
) -> str:
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
    note = f"first crossing of {target:g} on the mean curve, linearly interpolated"
    if defined < 1.0:
        note += f"; the interval is over the {defined:.0%} of resamples where both reach it"
    return note


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def plot_curves(summary: dict[str, Any], path: Path) -> Path:
    """Mean greedy test success against wall-clock minutes per method, its 95% interval over
    seeds shaded (with one seed: +-1.96 evaluation standard errors), the target dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    settings = summary["settings"]
    figure, axes = plt.subplots(figsize=(7, 4.5))
    for figures in summary["methods"].values():
        band = figures["curve"]
        (line,) = axes.plot(band["minutes"], band["mean"], "o-", ms=3, label=figures["label"])
        low, high = band["ci_low"], band["ci_high"]
        if len(figures["seeds"]) == 1 and "se" in band:
            low = [m - 1.96 * e for m, e in zip(band["mean"], band["se"], strict=True)]
            high = [m + 1.96 * e for m, e in zip(band["mean"], band["se"], strict=True)]
        axes.fill_between(band["minutes"], low, high, color=line.get_color(), alpha=0.2)
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
