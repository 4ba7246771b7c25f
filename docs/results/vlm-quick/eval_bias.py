"""How far scoring the first episodes to finish moved an evaluation, on a saved policy.

Why: until the evaluation played a fixed sample (``Worker.play``), it stepped its devices until
``n`` episodes had finished and discarded the ones still running. Those lean to the long ones,
and a failing greedy episode often runs to the step limit while a success ends early, so the
score read high. This plays one evaluation draw both ways with the same policy, devices, task
order and seeds, and prints each success rate with the mean length of successes and failures:

    .venv/bin/python docs/results/vlm-quick/eval_bias.py RUN_DIR [--episodes 48] [--draw 0]
        [overrides ...]
"""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path

import numpy as np

from distrl.config.loader import load_config
from distrl.core.seeds import Stream, derive_rng, derive_seed
from distrl.core.trajectory import Trajectory
from distrl.policies.base import load_policy
from distrl.runtime.evaluation import evaluation_devices
from distrl.runtime.play import select_tasks
from distrl.runtime.run_log import POLICY_CHECKPOINT
from distrl.runtime.task_sampler import TaskSampler
from distrl.runtime.worker import Worker


def figures(played: list[Trajectory]) -> dict[str, float]:
    """Success rate and mean steps of successful and failed episodes."""
    wins = [len(t) for t in played if t.success]
    losses = [len(t) for t in played if not t.success]
    return {
        "episodes": len(played),
        "success": round(len(wins) / len(played), 4),
        "steps_success": round(float(np.mean(wins)), 2) if wins else 0.0,
        "steps_failure": round(float(np.mean(losses)), 2) if losses else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--episodes", type=int, default=48)
    parser.add_argument("--draw", type=int, default=0)
    parser.add_argument("overrides", nargs="*", help="config overrides, e.g. seed=1")
    args = parser.parse_intermixed_args()
    cfg = load_config("vlm-quick", ["env.split=test", *args.overrides])
    tasks = select_tasks(cfg)
    policy = load_policy(args.run_dir / POLICY_CHECKPOINT)
    report: dict[str, object] = {"seed": cfg.seed, "draw": args.draw}
    for way in ("first_finished", "fixed_sample"):
        devices = evaluation_devices(cfg, min(cfg.train.devices, args.episodes), True, args.draw)
        worker = Worker(
            devices,
            copy.deepcopy(policy),
            TaskSampler(tasks, derive_rng(cfg.seed, Stream.EVALUATION, 0, args.draw)),
            worker_id="eval",
            seed=derive_seed(cfg.seed, Stream.EVALUATION, 1, args.draw),
            greedy=True,
        )
        if way == "first_finished":
            played = worker.collect(args.episodes)[: args.episodes]
        else:
            played = worker.play(args.episodes)
        worker.close()
        report[way] = figures(played)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
