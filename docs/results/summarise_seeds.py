"""A preset's multi-seed figures from what a results folder's run.sh wrote: a table row per
seed, the mean and its standard error over seeds, and the curves as FOLDER/curves.png. From the
repository root:

    .venv/bin/python docs/results/summarise_seeds.py docs/results/quick-preset "PhoneSim general"
    .venv/bin/python docs/results/summarise_seeds.py docs/results/webshop-preset \
        "PhoneSim webshop, 30 minutes"
    .venv/bin/python docs/results/summarise_seeds.py docs/results/vlm-quick \
        "PhoneSim general, tiny VLM" vlm-quick
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _seeds(folder: Path) -> list[tuple[int, dict, dict]]:
    found = []
    for train_file in sorted(folder.glob("train-seed*.json")):
        seed = int(train_file.stem.removeprefix("train-seed"))
        eval_file = folder / f"eval-train-seed{seed}.json"
        if eval_file.exists():
            found.append(
                (seed, json.loads(train_file.read_text()), json.loads(eval_file.read_text()))
            )
    return found


def _mean_se(values: list[float]) -> str:
    mean = statistics.fmean(values)
    se = statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else float("nan")
    return f"{mean:.3f} +- {se:.3f}"


def main(folder: Path, suite: str, preset: str = "quick") -> None:
    runs = _seeds(folder)
    print("| seed | start | best periodic | final (test eps.) | train (320) | updates | episodes |")
    print("|---|---|---|---|---|---|---|")
    for seed, train, on_train in runs:
        periodic = [p["success"] for p in train["curve"] if not p.get("final")]
        final_episodes = next(p["episodes"] for p in train["curve"] if p.get("final"))
        print(
            f"| {seed} | {train['initial_success']:.3f} | {max(periodic):.3f} | "
            f"{train['final_success']:.3f} +- {train['final_success_se']:.3f} ({final_episodes}) | "
            f"{on_train['success_rate']:.3f} | {train['updates']} | {train['episodes']} |"
        )
    if runs:
        print(
            f"| mean +- s.e. over seeds | {_mean_se([t['initial_success'] for _, t, _ in runs])} | "
            f" | {_mean_se([t['final_success'] for _, t, _ in runs])} | "
            f"{_mean_se([e['success_rate'] for _, _, e in runs])} | "
            f"{statistics.fmean(t['updates'] for _, t, _ in runs):.0f} | "
            f"{statistics.fmean(t['episodes'] for _, t, _ in runs):.0f} |"
        )
    figure, axes = plt.subplots(figsize=(7, 4))
    for seed, train, _ in runs:
        curve = train["curve"]
        axes.errorbar(
            [p["minutes"] for p in curve],
            [p["success"] for p in curve],
            yerr=[p.get("success_se", 0.0) for p in curve],
            marker="o",
            capsize=2,
            label=f"seed {seed}",
        )
    axes.set_xlabel("training minutes (the last point: the final policy, on more test episodes)")
    axes.set_ylabel("greedy test success")
    axes.set_title(f"distrl train --preset {preset} ({suite}), 2 CPU cores")
    axes.set_ylim(0, 1)
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(folder / "curves.png", dpi=110)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: summarise_seeds.py FOLDER SUITE_LABEL [PRESET]")
    main(Path(sys.argv[1]), *sys.argv[2:])
