"""Success of a run's own training episodes over the run, per task family, from its store.

Why: a run's curve scores the test split, which mixes two questions: does online RL improve the
policy on the tasks it trains on, and does that carry over to held-out tasks? This answers the
first from what the run already stored (every training episode's task and success, read without
decoding any observation: ``TrajectoryStore.task_outcomes``), with no further episode played.
Episodes are split, in the order the run stored them, into spans of equal counts.

    .venv/bin/python docs/results/vlm-quick/train_success.py RUN_DIR [--spans 4]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from distrl.core.task import Task
from distrl.envs.task_sets import task_family
from distrl.store.parquet_store import TrajectoryStore


def spans_by_family(outcomes: list[tuple[Task, bool]], spans: int) -> dict[str, list[list[int]]]:
    """``{family: [[episodes, successes] per span]}``, ``"all"`` first; span ``i`` holds the
    ``i``-th of ``spans`` equal shares of the episodes in stored order."""
    table: dict[str, list[list[int]]] = {"all": [[0, 0] for _ in range(spans)]}
    for position, (task, success) in enumerate(outcomes):
        span = position * spans // len(outcomes)
        for key in ("all", task_family(task)):
            cells = table.setdefault(key, [[0, 0] for _ in range(spans)])
            cells[span][0] += 1
            cells[span][1] += int(success)
    return {"all": table.pop("all"), **dict(sorted(table.items()))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--spans", type=int, default=4)
    args = parser.parse_args()
    folder = args.run_dir / "trajectories"
    if not folder.is_dir():
        raise SystemExit(f"{args.run_dir}: not a run folder (no trajectories/ inside)")
    outcomes = TrajectoryStore(folder).task_outcomes()
    if len(outcomes) < args.spans:
        raise SystemExit(f"{folder}: {len(outcomes)} stored episodes, fewer than the spans")
    print(f"{len(outcomes)} training episodes in {args.spans} spans of equal counts")
    print("| family | " + " | ".join(f"span {i + 1}" for i in range(args.spans)) + " |")
    print("|---" * (args.spans + 1) + "|")
    for family, cells in spans_by_family(outcomes, args.spans).items():
        shown = [f"{s / n:.2f} ({n})" if n else "-" for n, s in cells]
        print(f"| {family} | " + " | ".join(shown) + " |")


if __name__ == "__main__":
    main()
