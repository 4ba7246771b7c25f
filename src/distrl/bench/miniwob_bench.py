"""``distrl bench miniwob``: one policy trained from scratch on many MiniWoB++ tasks, then
success per task on held-out episode seeds (docs/guide.md, "The MiniWoB++ bench").

From scratch means no demonstrations, no scripted expert and no warm start
(``train.warm_start_episodes=0``, ``train.demos`` unset, ``train.demo_fraction=0``): the policy
starts from its random initialisation and learns from its own episodes alone. The base config
is the ``miniwob`` preset (the small policy on the element list, serial A-RIDE) with the
bench's tasks and budget and the mechanisms that learning from scratch needs
(:data:`FROM_SCRATCH_SETTINGS`); the user's ``key=value`` overrides go on top (so switching a
mechanism off, or another runtime, is one override away).

After the training budget the run's final policy plays ``episodes`` greedy episodes of each
task on the test split (episode seeds in ``[1_000_000, 2_000_000)``, never trained on), and the
figure is the mean of the per-task success rates, every task weighted alike. The training
loop's own evaluations are cut to the minimum (one at the start and one at the end, one
episode per task each): the per-task evaluation is the figure.

Not resumable: an interrupted bench is run again from the start (the run folder it leaves is
an ordinary run folder, which ``distrl view`` opens and ``distrl train --resume`` continues,
but the bench does not pick it up).

An ablation is one command: ``--methods`` names exploration settings of
:data:`~distrl.bench.methods.EXPLORATION_METHODS` and ``--seeds K`` runs each K times (seeds
``seed .. seed+K-1``); the JSON then holds every run and each method's mean over seeds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import mean

from distrl.bench.methods import EXPLORATION_METHODS_BY_NAME
from distrl.config.loader import apply_overrides, load_config
from distrl.config.schema import RunConfig
from distrl.envs.miniwob.tasks import check_task_name, miniwob_tasks
from distrl.errors import InputError
from distrl.policies.base import load_policy
from distrl.runtime.checkpoint import POLICY_CHECKPOINT
from distrl.runtime.evaluation import EvaluationDevices, evaluate
from distrl.runtime.run_log import TrainResult

__all__ = [
    "DEFAULT_EPISODES",
    "DEFAULT_MINUTES",
    "FROM_SCRATCH_SETTINGS",
    "TASK_SETS",
    "BenchRun",
    "bench_config",
    "bench_miniwob",
    "evaluate_per_task",
    "resolve_tasks",
]

#: The default training budget, in minutes of the training phase.
DEFAULT_MINUTES = 30.0
#: Greedy test episodes per task after training.
DEFAULT_EPISODES = 20

#: What learning from scratch runs with unless an override says otherwise: the task curriculum
#: (unsolved tasks keep a share of the draws), success replay, 10 steps an episode (the
#: two-field forms need 5-6 at best), both exploration mechanisms, and TYPE offered only on a
#: focused field with a prior there while the field is empty (docs/design.md §7.12-7.14). Each
#: was measured on this bench (docs/results.md, "The MiniWoB++ bench" and the ablations after
#: it); each is one ``key=value`` from off, which is how the ablations run.
FROM_SCRATCH_SETTINGS: tuple[str, ...] = (
    "curriculum.enabled=true",
    "curriculum.unsolved_score=0.5",
    "success_replay.share=0.1",
    "env.miniwob.horizon=10",
    "explore.candidate_prior=2.0",
    "explore.novelty_bonus=0.2",
    "explore.type_needs_focus=true",
    "explore.empty_field_type_prior=2",
)

#: The named task sets. ``default``: 22 tasks our backend runs end to end, each checked to load
#: with an instruction and an element list that name what to do (a task whose goal is only in
#: the pixels, such as click-color, or that needs a native ``<select>`` menu, is left out).
TASK_SETS: dict[str, tuple[str, ...]] = {
    "default": (
        # clicks: one or two taps on a button, link or widget named in the instruction
        "click-test",
        "click-test-2",
        "click-button",
        "click-link",
        "click-button-sequence",
        "click-widget",
        "unicode-test",
        # focus and typing: focus a field; type the instruction's quoted text and submit
        "focus-text",
        "focus-text-2",
        "enter-text",
        "enter-text-dynamic",
        # multi-field forms: two fields to fill from the instruction, then submit
        "login-user",
        "enter-password",
        # dialogs: close or answer a dialog; a login form a popup may interrupt
        "click-dialog",
        "click-dialog-2",
        "login-user-popup",
        # checkboxes and options: tick the named boxes, pick the named option, submit
        "click-checkboxes",
        "click-option",
        # tabs: open the named tab; find a link behind one of the tabs
        "click-tab",
        "click-tab-2-easy",
        # expanding and scrolling: open a collapsed section; scroll a text area to its end
        "click-collapsible",
        "scroll-text-2",
    ),
    # The five tasks of the miniwob preset (one click family, focus, typing).
    "preset": ("click-test", "click-button", "click-link", "focus-text", "enter-text"),
    # The typing tasks of the default set, for exploration experiments.
    "typing": ("enter-text", "enter-text-dynamic", "login-user", "enter-password"),
}


def resolve_tasks(spec: str) -> tuple[str, ...]:
    """A set's name (:data:`TASK_SETS`) or comma-separated task names, each checked."""
    if spec in TASK_SETS:
        return TASK_SETS[spec]
    names = tuple(name.strip() for name in spec.split(",") if name.strip())
    if not names:
        raise InputError(f"--tasks: name a set ({', '.join(TASK_SETS)}) or tasks, got {spec!r}")
    if len(set(names)) != len(names):
        raise InputError(f"--tasks names a task twice: {spec}")
    return tuple(check_task_name(name) for name in names)


def bench_config(
    tasks: Sequence[str],
    minutes: float,
    seed: int,
    overrides: Sequence[str] = (),
    preset: str | None = None,
) -> RunConfig:
    """The run config of one bench run: the preset (default ``miniwob``), from scratch, the
    tasks and budget, :data:`FROM_SCRATCH_SETTINGS`, then ``overrides`` (the later wins), then
    the run's ``seed`` (a bench of several seeds sets each run's own)."""
    bench = [
        "env.backend=miniwob",
        f"env.miniwob.tasks=[{','.join(tasks)}]",
        "env.split=train",
        f"train.minutes={minutes}",
        "train.warm_start_episodes=0",
        "train.demos=null",
        "train.demo_fraction=0",
        # The training loop's own evaluations: one episode per task at the start and the end.
        f"train.eval_every_minutes={minutes}",
        f"train.eval_episodes={len(tasks)}",
        f"train.final_eval_episodes={len(tasks)}",
        *FROM_SCRATCH_SETTINGS,
    ]
    return load_config(preset or "miniwob", [*bench, *overrides, f"seed={seed}"])


def evaluate_per_task(cfg: RunConfig, policy_path: Path, episodes: int) -> dict[str, float]:
    """Greedy success of the saved policy on ``episodes`` test episodes of each task, on one
    set of browsers kept across the tasks."""
    policy = load_policy(policy_path)
    test_cfg = apply_overrides(cfg, ["env.split=test"])
    devices = EvaluationDevices(test_cfg, screenshots=test_cfg.env.miniwob.screenshots)
    try:
        return {
            task.spec["task"]: round(
                evaluate(
                    policy, test_cfg, [task], episodes, greedy=True, devices=devices
                ).success_rate,
                4,
            )
            for task in miniwob_tasks(test_cfg.env.miniwob, "test")
        }
    finally:
        devices.close()


@dataclass(frozen=True)
class BenchRun:
    """One trained policy's figures."""

    method: str
    seed: int
    #: Greedy test success per task name.
    per_task: dict[str, float]
    #: The training phase's minutes (the budget, as the run's clock measured it).
    minutes: float
    updates: int
    #: Training episodes collected.
    episodes: int
    #: The whole run, training and evaluations included.
    wall_minutes: float
    run_dir: str
    #: Training episodes and successes per task (where the draws went, what came of them).
    train_episodes: dict[str, dict[str, int]]

    def summary(self) -> dict[str, object]:
        return {
            "mean_success": round(mean(self.per_task.values()), 4),
            "per_task": self.per_task,
            "minutes": self.minutes,
            "updates": self.updates,
            "episodes": self.episodes,
            "wall_minutes": self.wall_minutes,
            "train_episodes": self.train_episodes,
            "method": self.method,
            "seed": self.seed,
            "run_dir": self.run_dir,
        }


Trainer = Callable[[RunConfig], TrainResult]


def _default_trainer(cfg: RunConfig) -> TrainResult:
    """The runtime the config names, as ``distrl train`` picks it."""
    if cfg.train.runtime == "ray":
        from distrl.runtime.distributed.driver import train_ray

        return train_ray(cfg)
    from distrl.runtime.serial import train

    return train(cfg)


def bench_miniwob(
    tasks: Sequence[str],
    minutes: float,
    seed: int,
    episodes: int,
    *,
    methods: Sequence[str] = ("default",),
    seeds: int = 1,
    overrides: Sequence[str] = (),
    preset: str | None = None,
    command: str = "",
    trainer: Trainer = _default_trainer,
    on_run: Callable[[str, int], None] | None = None,
) -> dict[str, object]:
    """Train and evaluate once per (method, seed); the summary of a single run is flat
    (``mean_success``, ``per_task``, ``minutes``, ``updates``, ...), several runs add ``runs``
    and ``by_method`` (each method's mean over its seeds, overall and per task)."""
    if minutes <= 0:
        raise InputError(f"--minutes must be > 0, got {minutes}")
    if episodes < 1:
        raise InputError(f"--episodes must be >= 1, got {episodes}")
    if seeds < 1:
        raise InputError(f"--seeds must be >= 1, got {seeds}")
    unknown = [name for name in methods if name not in EXPLORATION_METHODS_BY_NAME]
    if unknown or not methods or len(set(methods)) != len(methods):
        raise InputError(
            f"--methods: name each once, from {', '.join(EXPLORATION_METHODS_BY_NAME)}; "
            f"got {','.join(methods) or 'nothing'}"
        )
    # Every run's config is built (and validated) before the first one trains.
    plan = [
        (
            name,
            run_seed,
            bench_config(
                tasks,
                minutes,
                run_seed,
                [*EXPLORATION_METHODS_BY_NAME[name].overrides, *overrides],
                preset,
            ),
        )
        for name in methods
        for run_seed in range(seed, seed + seeds)
    ]
    if len(plan) > 1:  # one run folder per run, also under a --run-name
        plan = [
            (name, run_seed, _own_run_name(cfg, f"{name}-s{run_seed}"))
            for name, run_seed, cfg in plan
        ]
    runs = []
    for name, run_seed, cfg in plan:
        if on_run is not None:
            on_run(name, run_seed)
        started = time.perf_counter()
        result = trainer(cfg)
        per_task = evaluate_per_task(cfg, result.run_dir / POLICY_CHECKPOINT, episodes)
        trained = result.summary()
        runs.append(
            BenchRun(
                method=name,
                seed=run_seed,
                per_task=per_task,
                minutes=float(trained["minutes"]),  # type: ignore[arg-type]
                updates=result.updates,
                episodes=result.episodes,
                wall_minutes=round((time.perf_counter() - started) / 60.0, 2),
                run_dir=str(result.run_dir),
                train_episodes=result.extra.get("episodes_by_family", {}),
            )
        )
    settings = {
        "tasks": list(tasks),
        "test_episodes_per_task": episodes,
        "budget_minutes": minutes,
        "command": command,
    }
    if len(runs) == 1:
        return {**runs[0].summary(), **settings}
    return {"runs": [run.summary() for run in runs], "by_method": _by_method(runs), **settings}


def _own_run_name(cfg: RunConfig, suffix: str) -> RunConfig:
    """``cfg`` with ``suffix`` on its run name (a named run folder would otherwise be shared);
    unchanged without a run name (each run then gets its own timestamped folder)."""
    if cfg.run_name is None:
        return cfg
    return apply_overrides(cfg, [f"run_name={cfg.run_name}-{suffix}"])


def _by_method(runs: Sequence[BenchRun]) -> dict[str, dict[str, object]]:
    """Each method's mean over its seeds: overall, per task, and the seeds' spread."""
    out: dict[str, dict[str, object]] = {}
    for name in dict.fromkeys(run.method for run in runs):
        mine = [run for run in runs if run.method == name]
        overall = [mean(run.per_task.values()) for run in mine]
        out[name] = {
            "mean_success": round(mean(overall), 4),
            "min_success": round(min(overall), 4),
            "max_success": round(max(overall), 4),
            "per_task": {
                task: round(mean(run.per_task[task] for run in mine), 4)
                for task in mine[0].per_task
            },
            "seeds": [run.seed for run in mine],
        }
    return out
