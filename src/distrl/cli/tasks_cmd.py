"""``distrl tasks list|show|templates``: look at the task suites without running anything."""

from __future__ import annotations

import argparse
from collections import Counter

from PIL import Image
from rich.console import Console
from rich.table import Table

from distrl.cli.main import emit_json
from distrl.config.loader import load_config
from distrl.config.schema import RunConfig
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.registry import SUITE_HORIZONS, TEMPLATES
from distrl.envs.phonesim.tasks.suites import SPLITS, load_suite
from distrl.errors import InputError
from distrl.runtime.play import select_tasks


def run(args: argparse.Namespace, overrides: list[str]) -> int:
    cfg = load_config(args.preset, overrides)
    console = Console()
    if args.tasks_command == "templates":
        rows = []
        for name, template in sorted(TEMPLATES.items()):
            counts = {
                split: sum(
                    1 for t in load_suite(template.suite, split) if t.spec["template"] == name
                )
                for split in SPLITS
            }
            rows.append({"template": name, "suite": template.suite, **counts})
        if args.json:
            emit_json({"templates": rows})
            return 0
        table = Table("template", "suite", "train", "test", title="PhoneSim task templates")
        for row in rows:
            table.add_row(row["template"], row["suite"], str(row["train"]), str(row["test"]))
        console.print(table)
        return 0

    if args.tasks_command == "show" and args.task_id:
        return _show_one(args, cfg)

    tasks = select_tasks(cfg)
    shown = tasks[: args.limit] if getattr(args, "limit", 0) else tasks
    if args.json:
        emit_json(
            {
                "suite": cfg.env.suite,
                "split": cfg.env.split,
                "count": len(tasks),
                "tasks": [t.to_dict() for t in shown],
            }
        )
        return 0
    templates = Counter(t.spec.get("template", "?") for t in tasks)
    table = Table(
        "task_id",
        "template",
        "instruction",
        title=f"{cfg.env.suite} / {cfg.env.split}: {len(tasks)} tasks, "
        f"{len(templates)} templates, horizon "
        f"{SUITE_HORIZONS.get(cfg.env.suite, '?')}",
    )
    for task in shown:
        table.add_row(task.task_id, str(task.spec.get("template", "")), task.instruction)
    console.print(table)
    return 0


def _show_one(args: argparse.Namespace, cfg: RunConfig) -> int:
    suite, _, rest = args.task_id.partition("-")
    split = rest.partition("-")[0]
    if suite not in SUITE_HORIZONS or split not in SPLITS:
        raise InputError(
            f"task id {args.task_id!r} is not of the form SUITE-SPLIT-NNNN "
            f"(e.g. general-train-0003)"
        )
    matches = [t for t in load_suite(suite, split) if t.task_id == args.task_id]
    if not matches:
        raise InputError(
            f"no task {args.task_id!r} in {suite}/{split} "
            f"(see 'distrl tasks list --suite {suite} --split {split}')"
        )
    task = matches[0]
    if args.screenshot:
        env = PhoneSimEnv(cfg.env.phonesim, seed=cfg.seed)
        Image.fromarray(env.reset(task).screenshot).save(args.screenshot)
    if args.json:
        emit_json(task.to_dict())
        return 0
    console = Console()
    table = Table("field", "value", title=task.task_id, show_header=False)
    for key, value in task.to_dict().items():
        table.add_row(key, str(value))
    console.print(table)
    if args.screenshot:
        console.print(f"first screen saved to {args.screenshot}")
    return 0
