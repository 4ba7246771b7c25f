"""Success of a run's own training episodes over time, per task family, from its store.

Why: a run's curve scores the test split, which mixes two questions: does online RL improve the
policy on the tasks it trains on, and does that carry over to held-out tasks? This answers the
first from what the run already stored (every training episode, its task and its success), with
no further episode played. Episodes are binned by start time into equal spans of the run.

    .venv/bin/python docs/results/vlm-quick/train_success.py RUN_DIR [--bins 4]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq

COLUMNS = ["step_index", "success", "started_at", "task_spec_json"]


def first_steps(run_dir: Path) -> list[dict]:
    """One row per stored trajectory (its first step), in order of start."""
    rows: list[dict] = []
    for shard in sorted((run_dir / "trajectories").glob("*.parquet")):
        table = pq.read_table(shard, columns=COLUMNS).to_pylist()
        rows.extend(row for row in table if row["step_index"] == 0)
    return sorted(rows, key=lambda row: row["started_at"])


def binned(rows: list[dict], bins: int) -> dict[str, list[list[int]]]:
    """``{family: [[episodes, successes] per bin]}``, with ``"all"`` first."""
    start, end = rows[0]["started_at"], rows[-1]["started_at"]
    span = max(end - start, 1e-9)
    table: dict[str, list[list[int]]] = defaultdict(lambda: [[0, 0] for _ in range(bins)])
    for row in rows:
        index = min(bins - 1, int((row["started_at"] - start) / span * bins))
        family = json.loads(row["task_spec_json"]).get("template", "?")
        for key in ("all", family):
            table[key][index][0] += 1
            table[key][index][1] += int(row["success"])
    return {"all": table.pop("all"), **dict(sorted(table.items()))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--bins", type=int, default=4)
    args = parser.parse_args()
    rows = first_steps(args.run_dir)
    if not rows:
        raise SystemExit(f"{args.run_dir}: no stored trajectories")
    minutes = (rows[-1]["started_at"] - rows[0]["started_at"]) / 60
    print(f"{len(rows)} training episodes over {minutes:.1f} minutes, {args.bins} equal spans")
    print("| family | " + " | ".join(f"span {i + 1}" for i in range(args.bins)) + " |")
    print("|---" * (args.bins + 1) + "|")
    for family, cells in binned(rows, args.bins).items():
        shown = [f"{s / n:.2f} ({n})" if n else "-" for n, s in cells]
        print(f"| {family} | " + " | ".join(shown) + " |")


if __name__ == "__main__":
    main()
