"""``distrl eval``: success of a saved policy on a task split, greedy and sampled."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from distrl.cli.main import emit_json
from distrl.config.loader import load_config
from distrl.envs.task_sets import suite_label
from distrl.errors import InputError
from distrl.policies.base import Policy, load_policy
from distrl.runtime.checkpoint import load_checkpoint
from distrl.runtime.evaluation import evaluate
from distrl.runtime.play import select_tasks
from distrl.runtime.run_log import POLICY_CHECKPOINT


def _policy_path(checkpoint: str) -> Path:
    """A policy file, or a run folder whose latest policy checkpoint is meant."""
    path = Path(checkpoint)
    if path.is_dir():
        if not (path / POLICY_CHECKPOINT).exists():
            raise InputError(f"--checkpoint {path}: a folder without {POLICY_CHECKPOINT}")
        return path / POLICY_CHECKPOINT
    return path


def newest_policy(checkpoint: str) -> Policy:
    """The learner's newest weights in a run folder's resume state, in the saved policy's kind
    and config: with ``train.averaged_policy_decay`` the saved policy is their moving average
    (docs/design.md §7.15), and this scores what the run trained against what it saved."""
    path = Path(checkpoint)
    if not path.is_dir():
        raise InputError(
            f"--checkpoint {path}: --newest reads a run folder's resume state "
            "(checkpoints/latest.pt); give the run folder, not a policy file"
        )
    policy = load_policy(_policy_path(checkpoint))
    learner = load_checkpoint(path)["learner"]
    policy.load_state_dict(learner["policy"])
    policy.version = int(learner["version"])
    return policy


def run(args: argparse.Namespace, overrides: list[str]) -> int:
    # Evaluation means the held-out split unless asked otherwise (training's default is train).
    cfg = load_config(args.preset, ["env.split=test", *overrides])
    tasks = select_tasks(cfg)
    newest = bool(args.newest)
    if newest:
        policy = newest_policy(args.checkpoint)
    else:
        policy = load_policy(_policy_path(args.checkpoint))
    episodes = cfg.train.eval_episodes
    with Console(stderr=True).status(f"evaluating on {episodes} episodes (greedy, then sampled)"):
        greedy = evaluate(policy, cfg, tasks, episodes, greedy=True)
        sampled = evaluate(policy, cfg, tasks, episodes, greedy=False)
    summary = {
        "success_rate": round(greedy.success_rate, 4),
        "sampled_success_rate": round(sampled.success_rate, 4),
        "episodes": greedy.episodes,
        "mean_steps": round(greedy.mean_steps, 3),
        "per_template": {k: round(v, 4) for k, v in greedy.per_template.items()},
        "suite": suite_label(cfg),
        "split": cfg.env.split,
        "policy_version": policy.version,
        "weights": "newest" if newest else "saved",
    }
    if args.json:
        emit_json(summary)
        return 0
    title = f"eval: {args.checkpoint} on {summary['suite']}/{cfg.env.split}"
    table = Table("template", "success (greedy)", title=title)
    for name, rate in greedy.per_template.items():
        table.add_row(name, f"{rate:.2f}")
    table.add_section()
    table.add_row("[bold]all[/]", f"[bold]{greedy.success_rate:.3f}[/]")
    out = Console(file=sys.stdout)
    out.print(table)
    out.print(f"sampled success {sampled.success_rate:.3f} over {sampled.episodes} episodes")
    return 0
