"""Why a run does or does not type: per task, what its training episodes did, and what the saved
policy's heads put on each task's first screen (docs/design.md §7.12).

    python scripts/typing_diagnosis.py RUN_DIR

Prints one JSON object: per task, the stored (training) episodes, their successes and mean
length, how many steps were TYPE and how many of those typed the instruction's first quoted
span, and the first actions' kinds; then, on the first stored screen of each task, the final
policy's kind distribution, p(candidate 0 | TYPE) and the entropies of the kind and candidate
heads. Run it on two run folders to compare an exploration setting with another.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import torch

from distrl.core.action import ActionType
from distrl.core.observation import Observation
from distrl.policies.base import load_policy
from distrl.policies.features import ACTION_KINDS
from distrl.policies.small import SmallPolicy
from distrl.runtime.checkpoint import POLICY_CHECKPOINT
from distrl.store import TrajectoryStore

_QUOTED = re.compile(r'"([^"]+)"')


def episode_figures(run_dir: Path) -> tuple[dict[str, dict[str, float]], dict[str, Observation]]:
    """Per task: counts over the run's stored episodes; and each task's first stored screen."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    first_screens: dict[str, Observation] = {}
    for trajectory in TrajectoryStore(run_dir / "trajectories").iter_trajectories():
        name = str(trajectory.task.spec.get("task") or trajectory.task.task_id)
        figures = counts[name]
        figures["episodes"] += 1
        figures["successes"] += int(trajectory.success)
        figures["steps"] += len(trajectory)
        first = trajectory.steps[0]
        first_screens.setdefault(name, first.observation)
        figures[f"first_{first.action.action_type.name.lower()}"] += 1
        quoted = _QUOTED.findall(first.observation.instruction)
        for step in trajectory.steps:
            if step.action.action_type is ActionType.TYPE:
                figures["type_steps"] += 1
                figures["typed_quoted"] += int(bool(quoted) and step.action.text == quoted[0])
    out = {}
    for name, figures in sorted(counts.items()):
        row: dict[str, float] = dict(figures)
        row["mean_length"] = round(figures["steps"] / figures["episodes"], 2)
        out[name] = row
    return out, first_screens


def head_figures(policy: SmallPolicy, screen: Observation) -> dict[str, object]:
    """The kind distribution, p(candidate 0 | TYPE) and both heads' entropies on ``screen``."""
    with torch.no_grad():
        heads = policy._heads(policy.featurize([screen]))
    kind_p = heads.kind_logp.exp()[0]
    candidate_p = heads.candidate_logp.exp()[0]

    def entropy(p: torch.Tensor) -> float:
        return round(float(-(p * p.clamp(min=1e-12).log()).sum()), 3)

    return {
        "p_kind": {kind: round(float(p), 3) for kind, p in zip(ACTION_KINDS, kind_p, strict=True)},
        "p_candidate_0": round(float(candidate_p[0]), 3),
        "entropy_kind": entropy(kind_p),
        "entropy_candidate": entropy(candidate_p),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    args = parser.parse_args()
    episodes, screens = episode_figures(args.run_dir)
    policy = load_policy(args.run_dir / POLICY_CHECKPOINT)
    heads = (
        {name: head_figures(policy, screen) for name, screen in screens.items()}
        if isinstance(policy, SmallPolicy)
        else {}
    )
    print(json.dumps({"episodes": episodes, "final_policy_heads": heads}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
