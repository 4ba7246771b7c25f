"""How a saved policy fails its test episodes, greedy against sampled.

Why: in the vlm-quick runs the averaged policy's sampled test success rose over the online
phase while its greedy success did not. The preset's prompt carries no previous actions
(``policy.vlm.history: 0``), so a greedy policy is a fixed function of the screen: an action
that leaves the screen as it was is taken again on every remaining step. This plays the same
test episodes both ways (one evaluation draw, seeded as a run's evaluations are) and sorts every
failed episode by how it ended:

* ``repeat``: its last three actions are one action, three times in a row;
* ``wrong status``: it ended by declaring the task complete or impossible, and was not solved;
* ``other``: anything else (it moved on, but not to the goal, within the step limit).

    .venv/bin/python docs/results/vlm-quick/failure_modes.py RUN_DIR [--episodes 96]
        [--draw 7] [--json] [overrides ...]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from distrl.config.loader import load_config
from distrl.core.action import format_action
from distrl.core.trajectory import Trajectory
from distrl.policies.base import load_policy
from distrl.runtime.evaluation import evaluate
from distrl.runtime.play import select_tasks
from distrl.runtime.run_log import POLICY_CHECKPOINT

#: How many identical actions in a row end an episode that counts as stuck.
REPEATS = 3


def ending(trajectory: Trajectory) -> str:
    """``success``, or which of the failure kinds in the module docstring ``trajectory`` is."""
    if trajectory.success:
        return "success"
    actions = [format_action(step.action) for step in trajectory.steps]
    if trajectory.steps and trajectory.steps[-1].action.is_status:
        return "wrong status"
    if len(actions) >= REPEATS and len(set(actions[-REPEATS:])) == 1:
        return "repeat"
    return "other"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--episodes", type=int, default=96)
    parser.add_argument("--draw", type=int, default=7, help="the evaluation draw (task order)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("overrides", nargs="*", help="config overrides, e.g. seed=1")
    args = parser.parse_intermixed_args()
    policy_file = args.run_dir / POLICY_CHECKPOINT
    if not policy_file.exists():
        raise SystemExit(f"{args.run_dir}: no saved policy ({POLICY_CHECKPOINT})")
    cfg = load_config("vlm-quick", ["env.split=test", *args.overrides])
    tasks = select_tasks(cfg)
    policy = load_policy(policy_file)
    report: dict[str, dict[str, int]] = {}
    for name, greedy in (("greedy", True), ("sampled", False)):
        result = evaluate(
            policy, cfg, tasks, args.episodes, greedy, draw=args.draw, keep_episodes=True
        )
        counts = Counter(ending(t) for t in result.played)
        report[name] = {"episodes": result.episodes, **{k: counts[k] for k in sorted(counts)}}
    if args.json:
        print(json.dumps(report, indent=1))
        return
    kinds = ["success", "repeat", "wrong status", "other"]
    print("| decoding | episodes | " + " | ".join(kinds) + " |")
    print("|---" * (len(kinds) + 2) + "|")
    for name, row in report.items():
        cells = " | ".join(str(row.get(kind, 0)) for kind in kinds)
        print(f"| {name} | {row['episodes']} | {cells} |")


if __name__ == "__main__":
    main()
