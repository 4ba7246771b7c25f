"""``distrl bench ...``: benchmarks that print figures (and JSON with ``--json``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from distrl.bench.env_bench import bench_env
from distrl.cli.main import emit_json
from distrl.cli.progress import progress_bar
from distrl.config.loader import load_config
from distrl.config.schema import RunConfig
from distrl.errors import InputError
from distrl.extras import require


def run(args: argparse.Namespace, overrides: list[str]) -> int:
    if args.bench_command == "miniwob":  # the serial runtime unless the config says ray
        return _miniwob(args, overrides)
    if args.bench_command not in ("env", "report"):  # the others run Ray (runtime, actors)
        require("ray", "ray", f"distrl bench {args.bench_command}")
    if args.bench_command == "train":  # its setting sits under the user's overrides
        return _train(args, overrides)
    if args.bench_command == "report":
        return _report(args)
    cfg = load_config(args.preset, overrides)
    if args.bench_command == "env":
        if args.steps < 1:
            raise InputError(f"--steps must be >= 1, got {args.steps}")
        summary = bench_env(args.steps, args.bench_suite, cfg.seed, cfg.env.phonesim).summary()
        if args.json:
            emit_json(summary)
            return 0
        table = Table("figure", "value", title="PhoneSim env benchmark (one core, latency off)")
        for key, value in summary.items():
            table.add_row(key, str(value))
        Console().print(table)
        return 0
    if args.bench_command == "collect":
        return _collect(args, cfg)
    if args.bench_command == "learner":
        return _learner(args, cfg)
    if args.bench_command == "inference":
        return _inference(args, cfg)
    raise InputError(f"unknown benchmark {args.bench_command!r}")


def _collect(args: argparse.Namespace, cfg: RunConfig) -> int:
    from distrl.bench.collect_bench import bench_collect

    scaling = _device_list(args.scaling) if args.scaling else None
    for name, value in (("--devices", args.devices), ("--minutes", args.bench_minutes)):
        if value <= 0:
            raise InputError(f"{name} must be > 0, got {value}")
    if not 0 < args.time_scale <= 1:
        raise InputError(f"--time-scale must be in (0, 1], got {args.time_scale}")
    modes = ["async", "sync"] if args.bench_mode == "both" else [args.bench_mode]
    plot = Path(args.plot) if args.plot else Path(cfg.run_root) / "bench-collect-scaling.png"
    summary = bench_collect(
        cfg, args.devices, modes, args.bench_minutes, args.time_scale, scaling, plot
    )
    if args.json:
        emit_json(summary)
        return 0
    console = Console()
    table = Table(
        "mode",
        "devices",
        "trajectories/h",
        "utilisation",
        "idle device-h",
        "updates",
        "CPU busy",
        title=f"bench collect (time scale {args.time_scale}, modelled hours)",
    )
    rows = list(summary["modes"].values()) + list(summary.get("scaling", []))  # type: ignore[union-attr, call-overload]
    for row in rows:
        table.add_row(
            row["mode"],
            str(row["devices"]),
            f"{row['trajectories_per_hour']:.0f}",
            f"{row['device_utilisation']:.3f}",
            f"{row['idle_device_hours']:.2f}",
            str(row["learner_updates"]),
            "-" if row["cpu_busy"] is None else f"{row['cpu_busy']:.2f}",
        )
    console.print(table)
    if "async_over_sync" in summary:
        console.print(f"async / sync trajectories per hour: {summary['async_over_sync']:.2f}x")
    if "plot" in summary:
        console.print(f"scaling plot: {summary['plot']}")
    return 0


def _learner(args: argparse.Namespace, cfg: RunConfig) -> int:
    from distrl.bench.learner_bench import bench_learner

    for name, value in (
        ("--episodes", args.bench_episodes),
        ("--seconds", args.seconds),
        ("--updates", args.bench_updates),
    ):
        if value <= 0:
            raise InputError(f"{name} must be > 0, got {value}")
    summary = bench_learner(cfg, args.bench_episodes, args.seconds, args.bench_updates).summary()
    if args.json:
        emit_json(summary)
        return 0
    table = Table("figure", "value", title=f"bench learner ({summary['policy']}, {cfg.train.algo})")
    for key, value in summary.items():
        table.add_row(key, str(value))
    Console().print(table)
    return 0


def _inference(args: argparse.Namespace, cfg: RunConfig) -> int:
    from distrl.bench.inference_bench import bench_inference

    counts = [8, 16, 32, 64]
    if args.bench_devices:
        counts = _device_list(args.bench_devices, "--devices")
    for name, value in (
        ("--devices-per-worker", args.devices_per_worker),
        ("--seconds", args.seconds),
    ):
        if value <= 0:
            raise InputError(f"{name} must be > 0, got {value}")
    if args.bench_policy == "vlm" or args.bench_policy == "both":
        require("transformers", "vlm", "distrl bench inference --policy vlm")
        require("peft", "vlm", "distrl bench inference --policy vlm")
    policies = ["small", "vlm"] if args.bench_policy == "both" else [args.bench_policy]
    summary = bench_inference(
        cfg, counts, policies, devices_per_worker=args.devices_per_worker, seconds=args.seconds
    )
    if args.json:
        emit_json(summary)
        return 0
    table = Table(
        "policy",
        "devices",
        "per-worker act/s",
        "service act/s",
        "speedup",
        "service p50/p95 ms",
        "per-worker p50/p95 ms",
        "batch",
        title=f"bench inference ({args.devices_per_worker} devices per worker, service on "
        f"{'GPU' if summary['gpu'] else 'CPU'})",
    )
    for policy, figures in summary["policies"].items():
        for row in figures["rows"]:
            local, service = row["per_worker"], row["service"]
            table.add_row(
                policy,
                str(row["devices"]),
                str(local["actions_per_s"]),
                str(service["actions_per_s"]),
                str(row["speedup"]),
                f"{service['act_ms_p50']}/{service['act_ms_p95']}",
                f"{local['act_ms_p50']}/{local['act_ms_p95']}",
                str(service["mean_batch_size"]),
            )
    Console().print(table)
    return 0


def _train(args: argparse.Namespace, overrides: list[str]) -> int:
    from distrl.bench.train_bench import (
        DEFAULT_BASELINE,
        DEFAULT_METHODS,
        SETTINGS,
        bench_train,
        check_arguments,
        default_results_folder,
        select_methods,
    )

    setting = SETTINGS[args.bench_setting]
    budget = []
    if args.budget_minutes is not None:
        if args.budget_minutes <= 0:
            raise InputError(f"--budget-minutes must be > 0, got {args.budget_minutes}")
        budget = [f"train.minutes={args.budget_minutes}"]
    if args.devices is not None and args.devices < 1:
        raise InputError(f"--devices must be >= 1, got {args.devices}")
    # The setting, then the flags, then the user's key=value overrides: the later wins.
    cfg = load_config(args.preset or "quick", [*setting.overrides, *budget, *overrides])
    seeds = setting.seeds if args.bench_seeds is None else args.bench_seeds
    target = setting.target if args.bench_target is None else args.bench_target
    methods = list(DEFAULT_METHODS)
    if args.bench_methods is not None:
        methods = [name.strip() for name in args.bench_methods.split(",") if name.strip()]
    baseline = args.bench_baseline or DEFAULT_BASELINE
    select_methods(methods, baseline)  # bad names fail before any work
    check_arguments(cfg, seeds, target)
    # A stable folder, so the same command run again finds its finished runs.
    if args.bench_results:
        bench_dir = Path(args.bench_results)
    elif cfg.run_name:
        bench_dir = Path(cfg.run_root) / cfg.run_name
    else:
        bench_dir = default_results_folder(Path(cfg.run_root), args.bench_setting, cfg)
    console = Console(stderr=True)
    with progress_bar(
        TextColumn("[bold]bench train[/] {task.fields[run]}"),
        BarColumn(),
        TextColumn("{task.completed:.1f}/{task.total:.0f} runs"),
        TimeElapsedColumn(),
        console=console,
        keep=not args.json,
    ) as progress:
        runs = seeds * len(methods)
        bar = progress.add_task("bench", total=runs, run="collecting demonstrations")
        done: list[tuple[int, str]] = []

        def advance(seed: int, method: str, fraction: float) -> None:
            if (seed, method) not in done:
                done.append((seed, method))
            share = len(done) - 1 + min(fraction, 1.0)
            progress.update(bar, completed=share, run=f"seed {seed}: {method}")

        summary = bench_train(
            cfg, seeds, target, bench_dir, advance, methods=methods, baseline=baseline
        )
    if args.json:
        emit_json(summary)
        return 0
    _print_train(summary)
    return 0


def _miniwob(args: argparse.Namespace, overrides: list[str]) -> int:
    import shlex

    from distrl.bench.miniwob_bench import bench_miniwob, resolve_tasks

    tasks = resolve_tasks(args.bench_tasks)
    base = load_config(args.preset or "miniwob", overrides)  # bad overrides fail here, at once
    if base.train.runtime == "ray":
        require("ray", "ray", "distrl bench miniwob with train.runtime=ray")
    methods = [name.strip() for name in args.bench_methods.split(",") if name.strip()]
    console = Console(stderr=True)

    def announce(method: str, seed: int) -> None:
        console.print(
            f"[bold]bench miniwob[/] {method}, seed {seed}: training {args.bench_minutes:g} min "
            f"on {len(tasks)} tasks, then {args.bench_episodes} test episodes per task"
        )

    summary = bench_miniwob(
        tasks,
        args.bench_minutes,
        base.seed,
        args.bench_episodes,
        methods=methods,
        seeds=args.bench_seeds,
        overrides=overrides,
        preset=args.preset,
        command=shlex.join(["distrl", *args.argv]),
        on_run=announce,
    )
    if args.json:
        emit_json(summary)
        return 0
    _print_miniwob(summary)
    return 0


def _print_miniwob(summary: dict) -> None:
    by_method = summary.get("by_method") or {"": summary}
    names = list(by_method)
    table = Table(
        "task",
        *(name or "success" for name in names),
        title=f"bench miniwob: {len(summary['tasks'])} tasks, "
        f"{summary['budget_minutes']:g} min from scratch, "
        f"{summary['test_episodes_per_task']} test episodes each",
    )
    for task in summary["tasks"]:
        table.add_row(task, *(f"{by_method[name]['per_task'][task]:.2f}" for name in names))
    table.add_section()
    table.add_row(
        "[bold]mean[/]", *(f"[bold]{by_method[name]['mean_success']:.3f}[/]" for name in names)
    )
    console = Console()
    console.print(table)
    for run in summary.get("runs", [summary]):
        console.print(
            f"{run['method']} seed {run['seed']}: {run['updates']} updates, {run['episodes']} "
            f"episodes in {run['minutes']} min; run folder {run['run_dir']}"
        )


def _report(args: argparse.Namespace) -> int:
    from distrl.bench.report import report

    folder = Path(args.results)
    if not folder.is_dir():
        raise InputError(f"bench report: {folder} is not a folder")
    summary = report(folder, args.bench_target, args.bench_baseline)
    if args.json:
        emit_json(summary)
        return 0
    _print_train(summary)
    return 0


def _print_train(summary: dict) -> None:
    settings = summary["settings"]
    table = Table(
        "method",
        "start",
        "final",
        "best",
        f"min to {settings['target']:g}",
        "updates",
        "trajectories",
        title=(
            f"bench train on {summary['suite']}: {settings['devices']} devices, "
            f"{settings['budget_minutes']:g} min, time scale {settings['time_scale']}, "
            f"seeds {settings['seeds']}"
        ),
    )
    for figures in summary["methods"].values():
        minutes = figures["time_to_target_minutes"]
        table.add_row(
            figures["label"],
            f"{figures['initial_success']:.3f}",
            f"{figures['final_success']:.3f}",
            f"{figures['best_success']:.3f}",
            "never" if minutes is None else f"{minutes:.2f}",
            f"{figures['updates']:.0f}",
            f"{figures['trajectories']:.0f}",
        )
    console = Console()
    console.print(table)
    over = summary["methods"][summary["baseline"]]["label"]
    for key in ("time_to_target_ratio", "final_success_ratio"):
        value = summary[key]
        shown = "n/a" if value["mean"] is None else f"{value['mean']}"
        if value["ci_low"] is not None:
            shown += f" (95% interval {value['ci_low']} to {value['ci_high']})"
        console.print(f"{key} (A-RIDE async over {over}): {shown}")
    at_least = summary["time_to_target_ratio_at_least"]
    console.print(f"time_to_target_ratio_at_least: {'n/a' if at_least is None else at_least}")
    console.print(f"time to target: {summary['time_to_target_note']}")
    console.print(f"plot: {summary['plot']}  (runs under {summary['bench_dir']})")


def _device_list(text: str, flag: str = "--scaling") -> list[int]:
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError(f"{flag} must be comma-separated device counts, got {text!r}") from None
    if not counts or min(counts) < 1:
        raise InputError(f"{flag} must be comma-separated device counts >= 1, got {text!r}")
    return counts
