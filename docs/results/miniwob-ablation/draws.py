"""Where a bench run's training draws went: stored training episodes (successes) per typing task,
read from run folders' trajectory stores. Runs made before the bench JSON carried
``train_episodes`` need this; newer JSONs hold the same counts for every task. From the
repository root:

    .venv/bin/python docs/results/miniwob-ablation/draws.py LABEL=RUN_DIR [LABEL=RUN_DIR ...]
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from summarise import TYPING  # beside this script: the table's typing tasks

from distrl.envs.task_sets import task_family
from distrl.store import TrajectoryStore


def main(pairs: list[str]) -> None:
    print(f"| run | training episodes | {' | '.join(TYPING)} |")
    print(f"|---|---|{'---|' * len(TYPING)}")
    for pair in pairs:
        label, _, folder = pair.partition("=")
        if not folder:
            sys.exit(f"draws.py: expected LABEL=RUN_DIR, got {pair!r}")
        episodes, successes = Counter[str](), Counter[str]()
        for task, success in TrajectoryStore(Path(folder) / "trajectories").task_outcomes():
            episodes[task_family(task)] += 1
            successes[task_family(task)] += int(success)
        cells = " | ".join(f"{episodes[t]} ({successes[t]})" for t in TYPING)
        print(f"| {label} | {sum(episodes.values()):,} | {cells} |")


if __name__ == "__main__":
    main(sys.argv[1:])
