"""The ``distrl`` argument parser: every command, its flags, and the flags' config keys.

Flags such as ``--suite`` are shorthands for ``key=value`` config overrides, so their choices and
defaults are read off the config schema (one source: a flag's help can never advertise a choice
the config refuses). Each command takes only the flags that mean something to it: ``--run-root``
only where a run folder is written, ``--seed`` only where something random runs.

``key=value`` overrides may stand anywhere after the command, before or after its options and
positionals (``distrl judge-eval RUN --episodes 1 judge.vlm.model=m``).
"""

from __future__ import annotations

import argparse
import sys
import typing
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import distrl
from distrl.bench.methods import DEFAULT_METHODS, EXPLORATION_METHODS, METHODS
from distrl.config.loader import config_fields
from distrl.errors import InputError

EXIT_USAGE = 2
#: Said once in every command's help: the defaults shown are the schema's.
DEFAULTS_NOTE = "Defaults shown are the built-in config's; a --preset may change them."


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Help that shows each flag's default where it has one (not ``None``/``False``)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            "default" not in text
            and action.option_strings
            and default not in (None, False, argparse.SUPPRESS)
        ):
            text += f" (default: {default})"
        return text


class OneLineParser(argparse.ArgumentParser):
    """argparse, but usage errors are one line (the usage text is one ``--help`` away).

    Every parser, the top one and each command's, takes ``--debug``, so it works wherever it is
    typed (``distrl --debug train ...`` or ``distrl train ... --debug``). A value-taking flag
    without an explicit metavar shows its own name (``--episodes EPISODES``), never its internal
    destination (``JUDGE_EPISODES``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
        self.add_argument(
            "--debug",
            action="store_true",
            default=argparse.SUPPRESS,
            help="print the traceback of an error, not just its one line",
        )

    def add_argument(self, *names: Any, **kwargs: Any) -> argparse.Action:
        takes_value = kwargs.get("action", "store") == "store" and kwargs.get("nargs") != 0
        named = names and str(names[0]).startswith("-")
        if named and takes_value and "metavar" not in kwargs and "choices" not in kwargs:
            longest = max(names, key=len)
            kwargs["metavar"] = longest.lstrip("-").upper().replace("-", "_")
        return super().add_argument(*names, **kwargs)

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


_FIELDS = dict(config_fields())


def _choices(key: str) -> tuple[str, ...] | None:
    """The values a config key allows, when the schema lists them (a ``Literal``)."""
    annotation = _FIELDS[key].annotation
    if typing.get_origin(annotation) is typing.Literal:
        return tuple(str(choice) for choice in typing.get_args(annotation))
    return None


def config_flag(
    parser: argparse.ArgumentParser,
    *names: str,
    key: str,
    help: str,
    dest: str | None = None,
    choices: bool = True,
    metavar: str | None = None,
) -> None:
    """A flag that sets config ``key``: its choices (unless the key also takes plug-in names)
    and default come from the schema, and its help names the key."""
    field = _FIELDS[key]
    allowed = _choices(key) if choices else None
    default = field.default if field.default_factory is None else field.default_factory()
    shown = "none" if default is None else default
    kwargs: dict[str, Any] = {"help": f"{help} ({key}; default: {shown})"}
    if allowed:
        # Shown, not enforced here: the config refuses other values in its own words.
        kwargs["metavar"] = "{" + ",".join(allowed) + "}"
    elif metavar:
        kwargs["metavar"] = metavar
    if dest:
        kwargs["dest"] = dest
    parser.add_argument(*names, **kwargs)


def _add_common(
    parser: argparse.ArgumentParser, *, seed: bool = False, run_folder: bool = False
) -> None:
    """``--preset``, ``--json`` and ``key=value`` overrides (every config command); ``--seed``
    where something random runs; ``--run-root``/``--run-name`` where a run folder is written."""
    parser.add_argument("--preset", help="config preset name or YAML path (see configs/)")
    if seed:
        config_flag(parser, "--seed", key="seed", help="root random seed")
    if run_folder:
        config_flag(parser, "--run-root", key="run_root", help="folder for run folders")
        parser.add_argument("--run-name", help="name of this run's folder (run_name)")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument(
        "overrides",
        nargs="*",
        metavar="key=value",
        help="config overrides, anywhere after the command, e.g. env.suite=webshop",
    )


def _add_env(parser: argparse.ArgumentParser) -> None:
    config_flag(
        parser,
        "--env",
        key="env.backend",
        help="device backend: phonesim, android, miniwob, gym:ENV_ID (any gymnasium env id) or "
        "a plug-in module:attribute",
        choices=False,
        metavar="BACKEND",
    )
    config_flag(parser, "--adb-port", key="env.android.adb_port", help="android: adb server port")
    parser.add_argument(
        "--tasks",
        "--task",
        dest="miniwob_tasks",
        metavar="NAMES",
        help="miniwob: comma-separated task names, e.g. click-test,enter-text (env.miniwob.tasks)",
    )
    config_flag(parser, "--suite", key="env.suite", help="task suite")
    config_flag(parser, "--split", key="env.split", help="task split")
    config_flag(parser, "--task-file", key="env.task_file", help="JSONL task file, not a suite")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="distrl",
        description="distrl: asynchronous distributed online RL for device-control agents.\n"
        + DEFAULTS_NOTE,
    )
    parser.add_argument("--version", action="version", version=f"distrl {distrl.__version__}")
    commands = parser.add_subparsers(
        dest="command", required=True, parser_class=OneLineParser, metavar="COMMAND"
    )

    def command(name: str, help: str, into: Any = commands) -> argparse.ArgumentParser:
        return into.add_parser(name, help=help, description=f"{help}.\n{DEFAULTS_NOTE}")

    _add_tasks_commands(command("tasks", "list and inspect task suites"), command)
    _add_run_commands(command)
    _add_service_commands(command)
    _add_config_command(command("config", "print the resolved configuration"), command)
    _add_bench_commands(command("bench", "benchmarks that print figures"), command)
    return parser


def _add_tasks_commands(tasks: argparse.ArgumentParser, command: Callable[..., Any]) -> None:
    subs = tasks.add_subparsers(dest="tasks_command", required=True, parser_class=OneLineParser)
    tasks_list = command("list", "list the tasks of a suite split", subs)
    _add_env(tasks_list)
    tasks_list.add_argument(
        "--limit", type=count(0, 1_000_000), default=0, help="show at most N tasks (0: all)"
    )
    _add_common(tasks_list)
    tasks_show = command("show", "show one task (or a whole split)", subs)
    tasks_show.add_argument("task_id", nargs="?", help="e.g. general-train-0003")
    _add_env(tasks_show)
    tasks_show.add_argument("--screenshot", help="save the task's first screen as a PNG here")
    _add_common(tasks_show, seed=True)
    _add_common(command("templates", "list the task templates", subs))


def _add_run_commands(command: Callable[..., Any]) -> None:
    play = command("play", "run a scripted agent on a backend's tasks")
    _add_env(play)
    config_flag(play, "--policy", key="play.policy", help="scripted agent")
    config_flag(play, "--noise", key="play.noise", help="noisy oracle's random-action rate")
    config_flag(play, "--episodes", key="play.episodes", help="episodes to play")
    play.add_argument(
        "--save-screenshots",
        action="store_true",
        help="store screenshots in the trajectories (PNG)",
    )
    _add_common(play, seed=True, run_folder=True)

    train = command("train", "online RL on any backend (serial or Ray runtime)")
    _add_env(train)
    config_flag(
        train,
        "--minutes",
        key="train.minutes",
        help="budget of the training phase alone (after the warm start, before the final "
        "evaluation)",
    )
    config_flag(
        train,
        "--total-minutes",
        key="train.total_minutes",
        help="wall-clock budget of the whole command: warm start, training and final evaluation",
    )
    config_flag(train, "--updates", key="train.max_updates", help="stop after N updates")
    config_flag(train, "--devices", key="train.devices", help="devices in all")
    train.add_argument("--resume", metavar="RUN_DIR", help="continue a run from its checkpoint")
    config_flag(train, "--runtime", key="train.runtime", help="where the parts run")
    config_flag(train, "--mode", key="train.mode", help="ray runtime: async or sync rounds")
    _plugin_flag(train, "--algo", "train.algo", "algorithm: aride, digirl, fbc")
    _plugin_flag(train, "--policy", "policy.kind", "policy: small, vlm", dest="policy_kind")
    train.add_argument(
        "--vlm",
        metavar="tiny|PATH",
        help="the VLM policy: tiny (built locally, random weights) or a local transformers model "
        "folder (policy.vlm.tiny / policy.vlm.path); implies --policy vlm",
    )
    config_flag(train, "--workers", key="ray.workers", help="Ray worker actors")
    config_flag(train, "--ray-address", key="ray.address", help="join this Ray cluster, e.g. auto")
    config_flag(
        train,
        "--progress-seconds",
        key="log.progress_seconds",
        help="seconds between progress log lines when stderr is not a terminal",
    )
    _add_common(train, seed=True, run_folder=True)

    evaluate = command("eval", "success of a saved policy on a task split")
    evaluate.add_argument(
        "--checkpoint", required=True, help="policy file, or a run folder (its latest policy)"
    )
    evaluate.add_argument(
        "--newest",
        action="store_true",
        help="score the learner's newest weights from the run folder's resume state instead of "
        "the saved policy (with train.averaged_policy_decay the saved policy is their average)",
    )
    _add_env(evaluate)
    config_flag(
        evaluate,
        "--episodes",
        key="train.eval_episodes",
        dest="eval_episodes",
        help="episodes per mode",
    )
    _add_common(evaluate, seed=True)

    demos = command("collect-demos", "noisy-oracle demonstrations for a warm start (Parquet)")
    _add_env(demos)
    config_flag(
        demos,
        "--episodes",
        key="train.warm_start_episodes",
        dest="warm_start_episodes",
        help="episodes",
    )
    config_flag(
        demos, "--noise", key="train.demo_noise", dest="demo_noise", help="random-action rate"
    )
    _add_common(demos, seed=True, run_folder=True)


def _add_service_commands(command: Callable[..., Any]) -> None:
    fake_adb = command(
        "fake-adb", "an adb server on loopback whose devices are PhoneSim phones (demo, tests)"
    )
    fake_adb.add_argument(
        "--devices", dest="fake_devices", type=count(1, 1024), default=4, help="phones"
    )
    fake_adb.add_argument(
        "--port", dest="fake_port", type=count(0, 65535), default=5037, help="TCP port"
    )
    fake_adb.add_argument("--host", dest="fake_host", default="127.0.0.1", help="bind address")
    _add_common(fake_adb, seed=True)

    judge_eval = command(
        "judge-eval", "agreement of the VLM judge with ground truth on saved trajectories"
    )
    judge_eval.add_argument("run_dir", help="a play/train run folder stored with screenshots")
    judge_eval.add_argument(
        "--episodes",
        dest="judge_episodes",
        type=count(1, 1_000_000),
        help="judge at most N trajectories (default: all)",
    )
    for flag, field, what in (
        ("--base-url", "base_url", "OpenAI-compatible endpoint"),
        ("--model", "model", "model name"),
    ):
        config_flag(judge_eval, flag, key=f"judge.vlm.{field}", dest=f"judge_{field}", help=what)
    _add_common(judge_eval)

    fake_vlm = command(
        "fake-vlm", "a fake OpenAI-compatible chat endpoint on loopback (demo, tests)"
    )
    fake_vlm.add_argument(
        "--port", dest="fake_vlm_port", type=count(0, 65535), default=8000, help="TCP port"
    )
    fake_vlm.add_argument("--host", dest="fake_vlm_host", default="127.0.0.1", help="bind address")
    fake_vlm.add_argument("--key", dest="fake_vlm_key", help="require this bearer key")
    _add_common(fake_vlm)

    view = command("view", "static HTML report of a run (trajectory viewer; no config)")
    view.add_argument("run_dir", help="a play/train run folder")
    view.add_argument(
        "--out", dest="view_out", help="write the report here (default: RUN_DIR/view)"
    )
    view.add_argument(
        "--max-trajectories", type=count(0, 1_000_000), default=300, help="newest N shown"
    )
    view.add_argument(
        "--serve", action="store_true", help="then serve the report on 127.0.0.1 until Ctrl-C"
    )
    view.add_argument(
        "--port", dest="view_port", type=count(0, 65535), default=8765, help="port for --serve"
    )
    view.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    view.set_defaults(overrides=[])


def _add_config_command(config: argparse.ArgumentParser, command: Callable[..., Any]) -> None:
    subs = config.add_subparsers(dest="config_command", required=True, parser_class=OneLineParser)
    show = command("show", "the resolved config of a preset and overrides (YAML, or --json)", subs)
    _add_common(show)


def _plugin_flag(
    parser: argparse.ArgumentParser, flag: str, key: str, names: str, **kw: Any
) -> None:
    """A flag whose config key takes a built-in name or a plug-in (so help lists no fixed
    choices)."""
    config_flag(
        parser,
        flag,
        key=key,
        help=f"{names} or a plug-in module:attribute",
        choices=False,
        metavar=flag.lstrip("-").upper(),
        **kw,
    )


def _add_bench_commands(bench: argparse.ArgumentParser, command: Callable[..., Any]) -> None:
    subs = bench.add_subparsers(dest="bench_command", required=True, parser_class=OneLineParser)
    bench_env = command("env", "raw PhoneSim steps/s on one core", subs)
    bench_env.add_argument("--steps", type=int, default=3000, help="env steps to time")
    bench_env.add_argument(
        "--suite", dest="bench_suite", default="both", choices=("general", "webshop", "both")
    )
    _add_common(bench_env, seed=True)
    collect = command("collect", "trajectories/hour and device utilisation, async vs sync", subs)
    collect.add_argument("--devices", type=int, default=32, help="devices per mode")
    collect.add_argument(
        "--mode", dest="bench_mode", default="both", choices=("async", "sync", "both")
    )
    collect.add_argument(
        "--minutes", dest="bench_minutes", type=float, default=2.0, help="real minutes per run"
    )
    collect.add_argument(
        "--time-scale",
        type=float,
        default=0.05,
        help="real seconds slept per modelled second of device latency",
    )
    collect.add_argument(
        "--scaling", help="comma-separated device counts for the async scaling curve, e.g. 8,16"
    )
    collect.add_argument("--plot", help="where to save the scaling PNG")
    _add_common(collect, seed=True, run_folder=True)
    learner = command(
        "learner", "replay insert/sample rates, update time, weight publish latency", subs
    )
    learner.add_argument(
        "--episodes", dest="bench_episodes", type=int, default=32, help="episodes of real data"
    )
    learner.add_argument(
        "--seconds", type=float, default=5.0, help="seconds per replay rate measurement"
    )
    learner.add_argument(
        "--updates", dest="bench_updates", type=int, default=20, help="updates to time"
    )
    _add_common(learner, seed=True)
    inference = command(
        "inference", "actions/s and act latency: inference service vs per-worker copies", subs
    )
    inference.add_argument(
        "--devices",
        dest="bench_devices",
        help="comma-separated device counts (default 8,16,32,64)",
    )
    inference.add_argument(
        "--policy",
        dest="bench_policy",
        default="both",
        choices=("small", "vlm", "both"),
        help="the small policy, the tiny VLM, or both",
    )
    inference.add_argument(
        "--devices-per-worker", type=int, default=8, help="devices each worker drives"
    )
    inference.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement")
    _add_common(inference, seed=True)
    _add_bench_train(command("train", "test success against wall-clock time, per method", subs))
    _add_bench_miniwob(
        command(
            "miniwob", "one policy from scratch on many MiniWoB++ tasks: success per task", subs
        )
    )
    _add_bench_report(
        command(
            "report", "merge a bench train results folder: curves and ratios with intervals", subs
        )
    )


def _add_bench_miniwob(bench: argparse.ArgumentParser) -> None:
    bench.add_argument(
        "--tasks",
        dest="bench_tasks",
        default="default",
        metavar="SET|NAMES",
        help="a task set (default, preset, typing) or comma-separated MiniWoB++ task names "
        "(default: default, 22 tasks)",
    )
    bench.add_argument(
        "--minutes",
        dest="bench_minutes",
        type=float,
        default=30.0,
        help="training budget of each run (default: 30)",
    )
    bench.add_argument(
        "--episodes",
        dest="bench_episodes",
        type=int,
        default=20,
        help="greedy test episodes per task after training (default: 20)",
    )
    bench.add_argument(
        "--methods",
        dest="bench_methods",
        default="default",
        help="comma-separated exploration settings (default: default), from: "
        + "; ".join(f"{method.name} ({method.label})" for method in EXPLORATION_METHODS),
    )
    bench.add_argument(
        "--seeds",
        dest="bench_seeds",
        metavar="K",
        type=int,
        default=1,
        help="runs per method, seeds SEED..SEED+K-1 (default: 1)",
    )
    _add_common(bench, seed=True, run_folder=True)


def _add_bench_train(bench_train: argparse.ArgumentParser) -> None:
    config_flag(bench_train, "--suite", key="env.suite", help="task suite")
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
        # Listed from the method table itself: a hand-kept copy fell behind it twice.
        help=f"comma-separated methods to run (default {','.join(DEFAULT_METHODS)}), from: "
        + "; ".join(f"{method.name} ({method.label})" for method in METHODS),
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
    _add_common(bench_train, seed=True, run_folder=True)


def _add_bench_report(bench_report: argparse.ArgumentParser) -> None:
    bench_report.add_argument("results", metavar="DIR", help="a bench train results folder")
    bench_report.add_argument(
        "--target", dest="bench_target", type=float, help="default: the bench command's"
    )
    bench_report.add_argument(
        "--baseline", dest="bench_baseline", help="default: the bench command's"
    )
    bench_report.add_argument("--json", action="store_true", help="print one JSON object")
    bench_report.set_defaults(overrides=[])


#: Flag destinations and the config keys they set (per command where they differ).
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
    "total_minutes": "train.total_minutes",
    "progress_seconds": "log.progress_seconds",
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


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse ``argv``; ``key=value`` words that argparse left over (overrides typed after a
    command's options) join the overrides, anything else left over is a usage error."""
    args, extra = parser.parse_known_args(argv)
    stray = [word for word in extra if word.startswith("-") or "=" not in word]
    if stray:
        parser.error(f"unrecognized arguments: {' '.join(stray)}")
    args.overrides = [*getattr(args, "overrides", []), *extra]
    #: The words this command was given, so a result can record the command that made it
    #: (``sys.argv`` is another program's when ``main`` is called from Python).
    args.argv = list(sys.argv[1:] if argv is None else argv)
    return args


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
    if getattr(args, "save_screenshots", False):
        overrides.append("play.save_screenshots=true")
    vlm = getattr(args, "vlm", None)
    if vlm:
        if getattr(args, "policy_kind", None) is None:
            overrides.append("policy.kind=vlm")
        overrides.append("policy.vlm.tiny=true" if vlm == "tiny" else f"policy.vlm.path={vlm}")
    for item in args.overrides:
        if "=" not in item:
            raise InputError(f"unexpected argument {item!r} (overrides are key=value)")
    return overrides + list(args.overrides)
