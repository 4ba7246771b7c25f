"""The MiniWoB++ ablation table from the runs run.sh wrote, beside the bench's own seeds (every
mechanism on): per arm, each seed's mean test success over the 22 tasks, the mean over seeds
with its standard error, its difference from the bench on the same seeds (mean and standard
error of the per-seed differences), the mean over the typing tasks, how many typing tasks the
run succeeded on at least once while training (sampled episodes; this tells a task exploration
never found from one found and then lost by the greedy policy), and the mean number of learner
updates (every run has the same 30 minutes; an arm that draws long, failing episodes
more often makes fewer). An arm with fewer than three seeds is marked: it is not yet a
comparison. A second table does the same for the bench's settings since 2026-12-04 (every
mechanism on), one mechanism off per arm. A third table puts each 10-step run's test success
beside the same policy's at the bench's 6 steps, where rescore.py has scored it
(``*-test6.json``).
From the repository root:

    .venv/bin/python docs/results/miniwob-ablation/summarise.py
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

FOLDER = Path(__file__).resolve().parent
BENCH = FOLDER.parent / "miniwob-bench"
ARMS = ("all on", "no-candidate-prior", "no-novelty", "no-curriculum", "no-success-replay")
#: Variants with every mechanism on and one setting changed: rows only once they have a run.
VARIANTS = (
    "curriculum-unsolved",
    "horizon-10",
    "horizon-10-unsolved",
    "horizon-10-unsolved-success-cost",
    "focus-typing",
    "horizon-10-unsolved-focus",
    "horizon-10-unsolved-focus-prior",
    "horizon-10-unsolved-focus-emptyprior",
)
#: The default set's tasks that need text typed from the instruction.
TYPING = ("enter-text", "enter-text-dynamic", "enter-password", "login-user", "login-user-popup")
#: The seeds each table has a column for; an arm is compared only once it has all of them.
SEEDS = (0, 1, 2)
SEEDS_FOR_A_COMPARISON = len(SEEDS)


def _runs(arm: str) -> dict[int, dict]:
    """Seed -> the bench JSON of ``arm``."""
    folder, stem = (BENCH, "bench-miniwob") if arm == "all on" else (FOLDER, arm)
    runs = {}
    for path in folder.glob(f"{stem}-seed*.json"):
        match = re.fullmatch(rf"{re.escape(stem)}-seed(\d+)\.json", path.name)
        if match:
            runs[int(match.group(1))] = json.loads(path.read_text())
    return runs


def _mean_se(values: list[float], sign: str = "") -> str:
    """Mean and standard error as table text (``sign="+"``: a difference, signed either way)."""
    if len(values) < 2:
        return f"{values[0]:{sign}.3f}" if values else "-"
    se = statistics.stdev(values) / len(values) ** 0.5
    return f"{statistics.fmean(values):{sign}.3f} +- {se:.3f}"


#: The bench's own settings since 2026-12-04 (miniwob_bench.py, FROM_SCRATCH_SETTINGS): the arm
#: that measured them before they became the bench's.
DEFAULT = "horizon-10-unsolved-focus-emptyprior"
#: One mechanism off those settings.
DEFAULT_ARMS = (
    "default-no-curriculum",
    "default-no-success-replay",
    "default-no-candidate-prior",
    "default-no-novelty",
    "default-no-focus-gate",
    "default-no-empty-prior",
    "default-horizon-6",
)


def main() -> None:
    print("Against the bench's settings before 2026-12-04 (6 steps, focus mechanisms off):\n")
    _table("all on", ARMS, VARIANTS)
    print("\nOne mechanism off the bench's settings since 2026-12-04 (every mechanism on):\n")
    _table(DEFAULT, (DEFAULT,), DEFAULT_ARMS)
    _rescored_at_6()


def _table(reference: str, arms: tuple[str, ...], variants: tuple[str, ...]) -> None:
    """One row per arm (``variants`` only once they have a run), each paired by seed with
    ``reference``."""
    print(
        f"| arm | seed 0 | seed 1 | seed 2 | mean +- s.e. | minus {reference}, paired by seed "
        "| typing tasks, mean over seeds | typing tasks found in training, by seed "
        "| updates, mean |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    base = _runs(reference)
    for arm in arms + variants:
        runs = _runs(arm)
        if not runs and arm in variants:
            continue
        cells = [f"{runs[s]['mean_success']:.3f}" if s in runs else "-" for s in SEEDS]
        means = [run["mean_success"] for run in runs.values()]
        paired = [
            run["mean_success"] - base[seed]["mean_success"]
            for seed, run in runs.items()
            if seed in base
        ]
        typing = [
            statistics.fmean(run["per_task"][task] for task in TYPING if task in run["per_task"])
            for run in runs.values()
        ]
        updates = statistics.fmean(run["updates"] for run in runs.values()) if runs else None
        note = "" if len(runs) >= SEEDS_FOR_A_COMPARISON else f" ({len(runs)} seed(s): not yet)"
        difference = _mean_se(paired, sign="+") if arm != reference else "-"
        print(
            f"| {arm}{note} | {' | '.join(cells)} | {_mean_se(means)} | {difference} | "
            f"{_mean_se(typing) if typing else '-'} | "
            f"{', '.join(_typing_found(runs[s]) if s in runs else '-' for s in SEEDS)} | "
            f"{'-' if updates is None else f'{updates:,.0f}'} |"
        )


def _typing_found(run: dict) -> str:
    """How many typing tasks had a successful training episode, as ``found/typing tasks``
    (``?`` for a run written before the bench reported training episodes)."""
    episodes = run.get("train_episodes")
    if episodes is None:
        return "?"
    found = sum(1 for task in TYPING if episodes.get(task, {}).get("successes", 0) > 0)
    return f"{found}/{len(TYPING)}"


def _rescored_at_6() -> None:
    """Each rescored run: mean and typing-task success tested at its own horizon and at 6."""
    rescored = sorted(FOLDER.glob("*-seed*-test6.json"))
    if not rescored:
        return
    print()
    print("| run | tested at its own horizon | at 6 steps | typing tasks at its own | at 6 |")
    print("|---|---|---|---|---|")
    for path in rescored:
        at_6 = json.loads(path.read_text())
        own = json.loads(path.with_name(path.name.replace("-test6", "")).read_text())
        typing = [statistics.fmean(run["per_task"][task] for task in TYPING) for run in (own, at_6)]
        print(
            f"| {path.name.removesuffix('-test6.json')} | {own['mean_success']:.3f} | "
            f"{at_6['mean_success']:.3f} | {typing[0]:.3f} | {typing[1]:.3f} |"
        )


if __name__ == "__main__":
    main()
