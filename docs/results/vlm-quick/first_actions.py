"""Which first action a run's start and final policies take, per task family, greedy.

Why: in the vlm-quick runs the online phase lifts most families and lowers a few, on train tasks
as well as test ones (``send_message`` on train went 8 -> 0 of 14 in one seed,
docs/results.md). Every general task starts on the home screen, so the first action is the
app the policy opens: counting it per family shows whether a family was lost to another one's
app (the policy learnt on ``create_note`` that a dictated Text1 means Notes, and opens Notes for
a message too) or later in the episode. Both policies play the same episodes (one evaluation
draw, seeded as a run's evaluations are); each action is shown as the model writes it (with the
run's name and text placeholders).

    .venv/bin/python docs/results/vlm-quick/first_actions.py RUN_DIR [--split train]
        [--families send_message,create_note] [--episodes 96] [--draw 0] [--json] [overrides ...]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path

from distrl.config.loader import load_config
from distrl.core.action import Action
from distrl.core.observation import Observation
from distrl.core.trajectory import Trajectory
from distrl.envs.task_sets import task_family
from distrl.policies.base import load_policy
from distrl.policies.vlm.placeholders import Placeholders
from distrl.policies.vlm.policy import VLMPolicy
from distrl.runtime.checkpoint import START_POLICY
from distrl.runtime.evaluation import evaluate
from distrl.runtime.play import select_tasks
from distrl.runtime.run_log import POLICY_CHECKPOINT

#: The two policies of a run, by the file each is saved in.
POLICIES = {"start": START_POLICY, "final": POLICY_CHECKPOINT}
#: What every action text begins with; left out of the table.
_PREFIX = 'Action Decision: "action_type": '


def written(policy: VLMPolicy, observation: Observation, action: Action) -> str:
    """``action`` as the model writes it on ``observation``: placeholders hidden, an element
    reference where it taps one."""
    cfg = policy.config
    if cfg.name_placeholders:
        names = Placeholders.of(
            observation.instruction, cfg.text_placeholders, cfg.site_placeholders
        )
        observation, action = names.observation(observation), names.hidden_action(action)
    return policy.prompts.action_text(action, observation).removeprefix(_PREFIX)


def first_actions(
    policy: VLMPolicy, played: Iterable[Trajectory]
) -> dict[str, dict[str, list[int]]]:
    """``{family: {first action as written: [episodes, successes]}}``, most frequent first."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    wins: dict[str, Counter[str]] = defaultdict(Counter)
    for trajectory in played:
        first = trajectory.steps[0]
        text = written(policy, first.observation, first.action)
        counts[task_family(trajectory.task)][text] += 1
        wins[task_family(trajectory.task)][text] += int(trajectory.success)
    return {
        family: {text: [n, wins[family][text]] for text, n in firsts.most_common()}
        for family, firsts in counts.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--split", default="train", choices=("train", "test"))
    parser.add_argument("--families", default="", help="comma-separated; empty: all")
    parser.add_argument("--episodes", type=int, default=96)
    parser.add_argument("--draw", type=int, default=0, help="the evaluation draw (task order)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("overrides", nargs="*", help="config overrides, e.g. seed=1")
    args = parser.parse_intermixed_args()
    cfg = load_config("vlm-quick", [f"env.split={args.split}", *args.overrides])
    wanted = {f for f in args.families.split(",") if f}
    tasks = [t for t in select_tasks(cfg) if not wanted or task_family(t) in wanted]
    if not tasks:
        raise SystemExit(f"no {args.split} task of the families {sorted(wanted)}")
    # family -> policy -> first action -> [episodes, successes]
    table: dict[str, dict[str, dict[str, list[int]]]] = defaultdict(dict)
    for label, file in POLICIES.items():
        path = args.run_dir / file
        if not path.exists():
            raise SystemExit(f"{args.run_dir}: no {label} policy ({file})")
        policy = load_policy(path)
        if not isinstance(policy, VLMPolicy):
            raise SystemExit(f"{path}: not a VLM policy")
        played = evaluate(
            policy, cfg, tasks, args.episodes, True, draw=args.draw, keep_episodes=True
        ).played
        for family, firsts in first_actions(policy, played).items():
            table[family][label] = firsts
    if args.json:
        print(json.dumps(dict(sorted(table.items())), indent=1))
        return
    print("| family | policy | first action: episodes (successes) |")
    print("|---|---|---|")
    for family, row in sorted(table.items()):
        for label, firsts in row.items():
            cells = ", ".join(f"{text}: {n} ({won})" for text, (n, won) in firsts.items())
            print(f"| {family} | {label} | {cells} |")


if __name__ == "__main__":
    main()
