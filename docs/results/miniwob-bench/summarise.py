"""The MiniWoB++ bench's per-task table from the seeds run.sh wrote: one column per seed, the
mean over seeds, and each seed's mean over tasks. From the repository root:

    .venv/bin/python docs/results/miniwob-bench/summarise.py
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

FOLDER = Path(__file__).resolve().parent


def main() -> None:
    runs = {
        int(path.stem.removeprefix("bench-miniwob-seed")): json.loads(path.read_text())
        for path in sorted(FOLDER.glob("bench-miniwob-seed*.json"))
    }
    if not runs:
        raise SystemExit(f"no bench-miniwob-seed*.json in {FOLDER}")
    seeds = sorted(runs)
    tasks = runs[seeds[0]]["tasks"]
    print("| task | " + " | ".join(f"seed {s}" for s in seeds) + " | mean |")
    print("|---" * (len(seeds) + 2) + "|")
    for task in tasks:
        values = [runs[s]["per_task"][task] for s in seeds]
        cells = " | ".join(f"{v:.2f}" for v in values)
        print(f"| {task} | {cells} | {statistics.fmean(values):.2f} |")
    means = [runs[s]["mean_success"] for s in seeds]
    cells = " | ".join(f"**{m:.3f}**" for m in means)
    print(f"| mean over tasks | {cells} | **{statistics.fmean(means):.3f}** |")
    for s in seeds:
        run = runs[s]
        print(
            f"seed {s}: {run['updates']} updates, {run['episodes']} episodes in "
            f"{run['minutes']} min ({run['wall_minutes']} min with the test episodes)"
        )


if __name__ == "__main__":
    main()
