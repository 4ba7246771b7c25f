"""Greedy success per task family of a run's start and final policies, on both splits.

Why: a vlm-quick run's gain is scored on the test split, whose instructions are worded in ways
the train split never uses. This separates the two things that gain needs: that the online phase
improves the policy at all (start against final on train tasks), and that what it knows carries
over to the test wording (train against test, for the same policy). Both policies play the same
episodes (the evaluation draws given, each a fixed sample of ``--episodes`` tasks, seeded as a
run's evaluations are), so every start/final difference is between policies, not samples. Needs
a run that saved ``start_policy.pt`` (every run since 2521785).

    .venv/bin/python docs/results/vlm-quick/split_gap.py RUN_DIR [--episodes 96]
        [--draws 0,1] [--json] [overrides ...]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from distrl.config.loader import load_config
from distrl.core.trajectory import Trajectory
from distrl.envs.task_sets import task_family
from distrl.policies.base import load_policy
from distrl.runtime.checkpoint import START_POLICY
from distrl.runtime.evaluation import evaluate
from distrl.runtime.play import select_tasks
from distrl.runtime.run_log import POLICY_CHECKPOINT

#: The two policies of a run, by the file each is saved in.
POLICIES = {"start": START_POLICY, "final": POLICY_CHECKPOINT}


def count_by_family(trajectories: Iterable[Trajectory]) -> dict[str, list[int]]:
    """``{"all" first, then each family in name order: [successes, episodes]}``."""
    cells: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for trajectory in trajectories:
        for key in ("all", task_family(trajectory.task)):
            cells[key][0] += int(trajectory.success)
            cells[key][1] += 1
    return {"all": cells.pop("all", [0, 0]), **dict(sorted(cells.items()))}


def family_table(
    run_dir: Path, episodes: int, draws: list[int], overrides: list[str]
) -> dict[str, dict[str, list[int]]]:
    """``{"<split>/<policy>": {"all" and each family: [successes, episodes]}}``, greedy."""
    policies = {name: load_policy(run_dir / file) for name, file in POLICIES.items()}
    table: dict[str, dict[str, list[int]]] = {}
    for split in ("test", "train"):
        cfg = load_config("vlm-quick", [f"env.split={split}", *overrides])
        tasks = select_tasks(cfg)
        for name, policy in policies.items():
            played = [
                trajectory
                for draw in draws
                for trajectory in evaluate(
                    policy, cfg, tasks, episodes, True, draw=draw, keep_episodes=True
                ).played
            ]
            table[f"{split}/{name}"] = count_by_family(played)
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--episodes", type=int, default=96)
    parser.add_argument("--draws", default="0,1", help="evaluation draws, comma-separated")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("overrides", nargs="*", help="config overrides, e.g. seed=3")
    args = parser.parse_intermixed_args()
    for file in POLICIES.values():
        if not (args.run_dir / file).exists():
            raise SystemExit(f"{args.run_dir}: no {file} (runs save it since 2521785)")
    draws = [int(draw) for draw in args.draws.split(",")]
    table = family_table(args.run_dir, args.episodes, draws, args.overrides)
    if args.json:
        print(json.dumps(table, indent=1))
        return
    columns = list(table)
    print("| family | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for family in table[columns[0]]:
        cells = " | ".join("{}/{}".format(*table[c].get(family, [0, 0])) for c in columns)
        print(f"| {family} | {cells} |")


if __name__ == "__main__":
    main()
