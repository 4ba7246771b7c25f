"""The ``distrl`` command line.

Every command takes ``--preset`` and trailing ``key=value`` config overrides; flags such as
``--suite`` are shorthands for overrides, so all input is validated in one place (the typed
config) and every bad input ends in one ``distrl: error: ...`` line and exit status 2.

That line is the one boundary for every foreseeable failure: bad input (:class:`InputError`,
:class:`ConfigError`, raised where the input is understood and so naming it), a damaged trajectory
store (``StoreError``), devices that stay down through restarts (``DeviceFault``), and the
operating system refusing a path or a connection (``OSError``).
Anything else is a bug in distrl and keeps its traceback; ``--debug`` (anywhere on the command
line) prints the traceback of a foreseeable failure too.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from distrl.config.loader import ConfigError
from distrl.errors import InputError, describe_os_error, one_line
from distrl.runtime.allocator import return_freed_memory

EXIT_USAGE = 2


class OneLineParser(argparse.ArgumentParser):
    """argparse, but usage errors are one line (the usage text is one ``--help`` away).

    Every parser, the top one and each command's, takes ``--debug``, so it works wherever it is
    typed (``distrl --debug train ...`` or ``distrl train ... --debug``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.add_argument(
            "--debug",
            action="store_true",
            default=argparse.SUPPRESS,
            help="print the traceback of an error, not just its one line",
        )

    def error(self, message: str) -> NoReturn:
        print(f"distrl: error: {message} (see '{self.prog} --help')", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def count(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number in ``low..high`` (a command-line value with no config
    key behind it is bounded here, as config values are by the schema)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is out of range (must be {low}..{high})")
        return value

    return parse


def number(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a finite number in ``[low, high]``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not low <= value <= high:  # also false for nan
            raise argparse.ArgumentTypeError(f"{text} is out of range (must be {low}..{high})")
        return value

    return parse


def _add_config_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--preset", help="config preset name or YAML path (see configs/)")
    parser.add_argument("--seed", type=int, help="random seed (config key: seed)")
    parser.add_argument("--run-root", help="folder for run folders (config key: run_root)")
    parser.add_argument("--run-name", help="name of this run's folder (config key: run_name)")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument(
        "overrides",
        nargs="*",
        metavar="key=value",
        help="config overrides, e.g. env.phonesim.dynamics.popups=false",
    )


def _add_env_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--env", help="device backend: phonesim, android or miniwob (env.backend)")
    parser.add_argument(
        "--adb-port", type=int, help="android: adb server port (env.android.adb_port)"
    )
    parser.add_argument(
        "--tasks",
        "--task",
        dest="miniwob_tasks",
        help="miniwob: comma-separated task names, e.g. click-test,enter-text (env.miniwob.tasks)",
    )
    parser.add_argument("--suite", help="task suite: general or webshop (env.suite)")
    parser.add_argument("--split", help="train or test (env.split)")
    parser.add_argument("--task-file", help="JSONL task file instead of a suite (env.task_file)")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="distrl", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)

    tasks = commands.add_parser("tasks", help="list and inspect task suites")
    tasks_commands = tasks.add_subparsers(
        dest="tasks_command", required=True, parser_class=OneLineParser
    )
    tasks_list = tasks_commands.add_parser("list", help="list the tasks of a suite split")
    _add_env_arguments(tasks_list)
    tasks_list.add_argument(
        "--limit", type=count(0, 1_000_000), default=0, help="show at most N tasks"
    )
    _add_config_arguments(tasks_list)
    tasks_show = tasks_commands.add_parser("show", help="show one task (or a whole split)")
    tasks_show.add_argument("task_id", nargs="?", help="e.g. general-train-0003")
    _add_env_arguments(tasks_show)
    tasks_show.add_argument("--screenshot", help="save the task's first screen as a PNG here")
    _add_config_arguments(tasks_show)
    tasks_templates = tasks_commands.add_parser("templates", help="list the task templates")
    _add_config_arguments(tasks_templates)

    play = commands.add_parser("play", help="run a scripted agent on a backend's tasks")
    _add_env_arguments(play)
    play.add_argument("--policy", help="oracle, noisy or random (play.policy)")
    play.add_argument("--noise", type=float, help="noisy oracle's random-action rate")
    play.add_argument("--episodes", type=int, help="number of episodes (play.episodes)")
    play.add_argument(
        "--save-screens", action="store_true", help="store screenshots in the trajectories (PNG)"
    )
    _add_config_arguments(play)

    train = commands.add_parser("train", help="online RL on any backend (serial or Ray runtime)")
    _add_env_arguments(train)
    train.add_argument("--minutes", type=float, help="wall-clock budget (train.minutes)")
    train.add_argument("--updates", type=int, help="stop after N updates (train.max_updates)")
    train.add_argument("--devices", type=int, help="devices (train.devices)")
    train.add_argument("--resume", metavar="RUN_DIR", help="continue a run from its checkpoint")
    train.add_argument("--runtime", help="serial or ray (train.runtime)")
    train.add_argument("--mode", help="ray runtime: async or sync (train.mode)")
    train.add_argument("--algo", help="aride, digirl or fbc (train.algo)")
    train.add_argument("--policy", help="small or vlm (policy.kind)")
    train.add_argument(
        "--vlm",
        metavar="tiny|PATH",
        help="the VLM policy: tiny (built locally, random weights) or a local transformers model "
        "folder (policy.vlm.tiny / policy.vlm.path); implies --policy vlm",
    )
    train.add_argument("--workers", type=int, help="Ray worker actors (ray.workers)")
    train.add_argument(
        "--ray-address", help="join this Ray cluster, e.g. auto (ray.address); default: local"
    )
    _add_config_arguments(train)

    evaluate = commands.add_parser("eval", help="success of a saved policy on a task split")
    evaluate.add_argument(
        "--checkpoint", required=True, help="policy file, or a run folder (its latest policy)"
    )
    _add_env_arguments(evaluate)
    evaluate.add_argument("--episodes", type=int, help="episodes per mode (train.eval_episodes)")
    _add_config_arguments(evaluate)

    demos = commands.add_parser(
        "collect-demos", help="noisy-oracle demonstrations for a warm start (Parquet)"
    )
    _add_env_arguments(demos)
    demos.add_argument("--episodes", type=int, help="episodes (train.warm_start_episodes)")
    demos.add_argument("--noise", type=float, help="random-action rate (train.demo_noise)")
    _add_config_arguments(demos)

    fake_adb = commands.add_parser(
        "fake-adb", help="an adb server on loopback whose devices are PhoneSim phones (demo, tests)"
    )
    fake_adb.add_argument(
        "--devices", dest="fake_devices", type=count(1, 1024), default=4, help="phones"
    )
    fake_adb.add_argument(
        "--port", dest="fake_port", type=count(0, 65535), default=5037, help="TCP port"
    )
    fake_adb.add_argument("--host", dest="fake_host", default="127.0.0.1", help="bind address")
    _add_config_arguments(fake_adb)

    judge_eval = commands.add_parser(
        "judge-eval", help="agreement of the VLM judge with ground truth on saved trajectories"
    )
    judge_eval.add_argument("run_dir", help="a play/train run folder stored with screenshots")
    judge_eval.add_argument(
        "--episodes",
        dest="judge_episodes",
        type=count(1, 1_000_000),
        help="judge at most N trajectories",
    )
    judge_eval.add_argument(
        "--base-url",
        dest="judge_base_url",
        help="OpenAI-compatible endpoint (evaluator.vlm.base_url)",
    )
    judge_eval.add_argument("--model", dest="judge_model", help="model name (evaluator.vlm.model)")
    _add_config_arguments(judge_eval)

    fake_vlm = commands.add_parser(
        "fake-vlm", help="a fake OpenAI-compatible chat endpoint on loopback (demo, tests)"
    )
    fake_vlm.add_argument(
        "--port", dest="fake_vlm_port", type=count(0, 65535), default=8000, help="TCP port"
    )
    fake_vlm.add_argument("--host", dest="fake_vlm_host", default="127.0.0.1", help="bind address")
    fake_vlm.add_argument("--key", dest="fake_vlm_key", help="require this bearer key")
    _add_config_arguments(fake_vlm)

    view = commands.add_parser("view", help="static HTML report of a run (trajectory viewer)")
    view.add_argument("run_dir", help="a play/train run folder")
    view.add_argument(
        "--out", dest="view_out", help="write the report here (default: RUN_DIR/view)"
    )
    view.add_argument(
        "--max-trajectories",
        type=count(0, 1_000_000),
        default=300,
        help="newest N trajectories shown",
    )
    view.add_argument(
        "--serve", action="store_true", help="then serve the report on 127.0.0.1 until Ctrl-C"
    )
    view.add_argument(
        "--port", dest="view_port", type=count(0, 65535), default=8765, help="port for --serve"
    )
    view.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    view.set_defaults(overrides=[])

    bench = commands.add_parser("bench", help="benchmarks that print figures")
    bench_commands = bench.add_subparsers(
        dest="bench_command", required=True, parser_class=OneLineParser
    )
    bench_env = bench_commands.add_parser("env", help="raw PhoneSim steps/s on one core")
    bench_env.add_argument("--steps", type=int, default=3000, help="env steps to time")
    bench_env.add_argument(
        "--suite", dest="bench_suite", default="both", choices=("general", "webshop", "both")
    )
    _add_config_arguments(bench_env)
    bench_collect = bench_commands.add_parser(
        "collect", help="trajectories/hour and device utilisation, async vs sync, on Ray"
    )
    bench_collect.add_argument("--devices", type=int, default=32, help="devices per mode")
    bench_collect.add_argument(
        "--mode", dest="bench_mode", default="both", choices=("async", "sync", "both")
    )
    bench_collect.add_argument(
        "--minutes", dest="bench_minutes", type=float, default=2.0, help="real minutes per run"
    )
    bench_collect.add_argument(
        "--time-scale",
        type=float,
        default=0.05,
        help="real seconds slept per modelled second of device latency",
    )
    bench_collect.add_argument(
        "--scaling", help="comma-separated device counts for the async scaling curve, e.g. 8,16"
    )
    bench_collect.add_argument("--plot", help="where to save the scaling PNG")
    _add_config_arguments(bench_collect)
    bench_learner = bench_commands.add_parser(
        "learner", help="replay insert/sample rates, update time, weight publish latency"
    )
    bench_learner.add_argument(
        "--episodes", dest="bench_episodes", type=int, default=32, help="episodes of real data"
    )
    bench_learner.add_argument(
        "--seconds", type=float, default=5.0, help="seconds per replay rate measurement"
    )
    bench_learner.add_argument(
        "--updates", dest="bench_updates", type=int, default=20, help="updates to time"
    )
    _add_config_arguments(bench_learner)
    bench_train = bench_commands.add_parser(
        "train",
        help="test success against wall-clock time: A-RIDE async vs DigiRL sync vs filtered BC",
    )
    bench_train.add_argument("--suite", help="task suite: general or webshop (env.suite)")
    bench_train.add_argument(
        "--setting",
        dest="bench_setting",
        default="quick",
        choices=("quick", "full"),
        help="quick (8 devices, 3.5 min a run, 1 seed, target 0.25; ~15 minutes on 2 cores) or "
        "full (16 devices, 20 min, 3 seeds, target 0.35); the flags below override it",
    )
    bench_train.add_argument("--devices", type=int, help="devices of every run (train.devices)")
    bench_train.add_argument(
        "--budget-minutes", type=float, help="wall-clock budget of every run (train.minutes)"
    )
    bench_train.add_argument(
        "--seeds", dest="bench_seeds", metavar="K", type=int, help="seeds: K runs per method"
    )
    bench_train.add_argument(
        "--target",
        dest="bench_target",
        type=float,
        help="test success the time-to-target ratio times (default: the setting's)",
    )
    bench_train.add_argument(
        "--methods",
        dest="bench_methods",
        help="comma-separated methods to run (default aride_async,digirl_sync,fbc_sync), from "
        "those, aride_sync (A-RIDE in sync rounds: the runtime's share of the gain) and the DPER "
        "ablation aride_dper_paper, aride_uniform",
    )
    bench_train.add_argument(
        "--baseline",
        dest="bench_baseline",
        help="the method the two ratios divide A-RIDE async by (default digirl_sync)",
    )
    bench_train.add_argument(
        "--results",
        dest="bench_results",
        metavar="DIR",
        help="results folder: each finished (method, seed) run is kept there and the same "
        "command run again skips it (default: RUN_ROOT/bench-train-SETTING-DIGEST)",
    )
    _add_config_arguments(bench_train)
    bench_report = bench_commands.add_parser(
        "report", help="merge a bench train results folder: curves and ratios with intervals"
    )
    bench_report.add_argument("results", metavar="DIR", help="a bench train results folder")
    bench_report.add_argument(
        "--target", dest="bench_target", type=float, help="default: the bench command's"
    )
    bench_report.add_argument(
        "--baseline", dest="bench_baseline", help="default: the bench command's"
    )
    bench_report.add_argument("--json", action="store_true", help="print one JSON object")
    bench_report.set_defaults(overrides=[])
    return parser


_FLAG_TO_KEY = {
    "seed": "seed",
    "run_root": "run_root",
    "run_name": "run_name",
    "env": "env.backend",
    "adb_port": "env.android.adb_port",
    "suite": "env.suite",
    "split": "env.split",
    "task_file": "env.task_file",
    "policy": "play.policy",
    "noise": "play.noise",
    "episodes": "play.episodes",
    "minutes": "train.minutes",
    "updates": "train.max_updates",
    "devices": "train.devices",
    "runtime": "train.runtime",
    "mode": "train.mode",
    "algo": "train.algo",
    "policy_kind": "policy.kind",
    "workers": "ray.workers",
    "ray_address": "ray.address",
    "eval_episodes": "train.eval_episodes",
    "warm_start_episodes": "train.warm_start_episodes",
    "demo_noise": "train.demo_noise",
}


def _retarget_flags(args: argparse.Namespace) -> None:
    """Flags whose config key depends on the command: ``--episodes`` of ``eval`` is the
    evaluation's episode count, of ``collect-demos`` the warm start's; ``--noise`` likewise."""
    renames = {
        "eval": {"episodes": "eval_episodes"},
        "collect-demos": {"episodes": "warm_start_episodes", "noise": "demo_noise"},
        "train": {"policy": "policy_kind"},
    }
    for flag, renamed in renames.get(args.command, {}).items():
        setattr(args, renamed, getattr(args, flag, None))
        setattr(args, flag, None)


def config_overrides(args: argparse.Namespace) -> list[str]:
    """Flags turned into ``key=value`` overrides, before the user's own (which win)."""
    overrides = [
        f"{key}={getattr(args, flag)}"
        for flag, key in _FLAG_TO_KEY.items()
        if getattr(args, flag, None) is not None
    ]
    if getattr(args, "miniwob_tasks", None):
        names = [name.strip() for name in args.miniwob_tasks.split(",") if name.strip()]
        overrides.append(f"env.miniwob.tasks=[{','.join(names)}]")
    if getattr(args, "save_screens", False):
        overrides.append("play.save_screens=true")
    vlm = getattr(args, "vlm", None)
    if vlm:
        if getattr(args, "policy_kind", None) is None:
            overrides.append("policy.kind=vlm")
        overrides.append("policy.vlm.tiny=true" if vlm == "tiny" else f"policy.vlm.path={vlm}")
    for item in args.overrides:
        if "=" not in item:
            raise InputError(f"unexpected argument {item!r} (overrides are key=value)")
    return overrides + list(args.overrides)


def emit_json(payload: object) -> None:
    print(json.dumps(payload))


#: command -> (module under distrl.cli, function taking (args, overrides)).
_HANDLERS: dict[str, tuple[str, str]] = {
    "tasks": ("tasks_cmd", "run"),
    "play": ("play_cmd", "run"),
    "bench": ("bench_cmd", "run"),
    "train": ("train_cmd", "run"),
    "eval": ("eval_cmd", "run"),
    "collect-demos": ("demos_cmd", "run"),
    "fake-adb": ("fakeadb_cmd", "run"),
    "judge-eval": ("judge_cmd", "run"),
    "fake-vlm": ("judge_cmd", "run_fake_vlm"),
    "view": ("view_cmd", "run"),
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit status is returned (0 ok, 2 a foreseeable failure, told in one
    ``distrl: error:`` line on stderr; 130 interrupted)."""
    return_freed_memory()  # before anything large is allocated, and before Ray starts workers
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # usage errors (already printed in one line) and --help
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    _retarget_flags(args)
    # Imported per command: a backend's heavy dependencies load only when that command runs.
    module_name, function_name = _HANDLERS[args.command]
    handler: Callable[[argparse.Namespace, list[str]], int] = getattr(
        importlib.import_module(f"distrl.cli.{module_name}"), function_name
    )
    try:
        return handler(args, config_overrides(args))
    except KeyboardInterrupt:
        print("distrl: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        message = foreseeable_failure(error)
        if message is None:
            raise  # a bug in distrl: the traceback is what its report needs
        if getattr(args, "debug", False):
            traceback.print_exc()
        print(f"distrl: error: {message}", file=sys.stderr)
        return EXIT_USAGE


def foreseeable_failure(error: BaseException) -> str | None:
    """The one-line message for a failure the user can fix, or ``None`` for a bug.

    Bad input and damaged stores are told in their own words (raised where the input is
    understood); an ``OSError`` (a path that cannot be written, a file where a folder should be,
    a service that refuses connections) in words built from its errno and path."""
    from distrl.core.faults import DeviceFault
    from distrl.store.parquet_store import StoreError  # pyarrow: only when something failed

    if isinstance(error, (InputError, ConfigError, StoreError)):
        return one_line(str(error))
    if isinstance(error, DeviceFault):  # devices that would not come back even after restarts
        return one_line(f"{error}; check the devices (adb devices, emulator logs) and run again")
    if isinstance(error, OSError):
        return describe_os_error(error)
    return None


if __name__ == "__main__":
    raise SystemExit(main())
