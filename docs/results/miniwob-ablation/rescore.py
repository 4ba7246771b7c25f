"""Re-score a finished bench run's policy on the test split at another horizon, per task, the way
the bench scores it (greedy, the same test seeds). A policy trained with 10 steps an episode is
also tested with 10; scoring it at the bench's 6 says how much of its gain is the more lenient
test. From the repository root (the run folder is the bench JSON's ``run_dir``):

    .venv/bin/python docs/results/miniwob-ablation/rescore.py RUN_DIR HORIZON [EPISODES] > OUT.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from statistics import mean

from distrl.bench.miniwob_bench import evaluate_per_task
from distrl.config.loader import apply_overrides, load_config
from distrl.runtime.checkpoint import POLICY_CHECKPOINT


def main(run_dir: Path, horizon: int, episodes: int) -> None:
    cfg = apply_overrides(load_config(run_dir / "config.yaml"), [f"env.miniwob.horizon={horizon}"])
    per_task = evaluate_per_task(cfg, run_dir / POLICY_CHECKPOINT, episodes)
    summary = {
        "mean_success": round(mean(per_task.values()), 4),
        "per_task": per_task,
        "test_horizon": horizon,
        "test_episodes_per_task": episodes,
        "run_dir": str(run_dir),
        "command": " ".join(["rescore.py", *sys.argv[1:]]),
    }
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) == 4 else 20)
