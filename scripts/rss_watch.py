"""Watch the memory of a command and every process it starts (Ray's included); save a curve.

    python scripts/rss_watch.py --every 30 --out runs/rss -- distrl train --runtime ray ...

Samples, every ``--every`` seconds, the memory of the command's process tree (Ray's raylet, GCS
and actor processes are descendants of a driver that started a local Ray) and writes ``rss.csv``
(seconds, summed RSS and PSS in MiB, process count, largest process), ``processes.csv`` (the
same per process: which part grows) and ``rss.png``. RSS counts
Ray's shared object-store pages once per process that mapped them; PSS splits shared pages among
their users, so its sum is the tree's real footprint. Linux only: it reads /proc.
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import time
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        tree.setdefault(parent, []).append(int(entry.name))
    return tree


def _pss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) / 1024
    return 0.0


def tree_processes(root: int) -> list[tuple[int, str, float, float]]:
    """``(pid, name, RSS MiB, PSS MiB)`` of ``root`` and each of its descendants.

    A Ray actor's name is its process title (``ray::ReplayActor``, say), so the per-process
    file says which part of a run holds the memory.
    """
    tree, stack, found = _children(), [root], []
    while stack:
        pid = stack.pop()
        stack.extend(tree.get(pid, []))
        try:
            pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
            name = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()[-40:]
            proportional = _pss_mib(pid)
        except (OSError, IndexError, ValueError):
            continue
        found.append((pid, name, pages * PAGE / 2**20, proportional))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=float, default=30.0, help="seconds between samples")
    parser.add_argument(
        "--out", default="runs/rss", help="folder for rss.csv, processes.csv and rss.png"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- command to run")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to watch after --")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(command)
    started, rows, per_process = time.monotonic(), [], []
    while process.poll() is None:
        processes = tree_processes(process.pid)
        seconds = round(time.monotonic() - started, 1)
        rss, pss = sum(p[2] for p in processes), sum(p[3] for p in processes)
        _, name, largest, _ = max(processes, key=lambda p: p[2], default=(0, "", 0.0, 0.0))
        count = len(processes)
        rows.append((seconds, round(rss, 1), round(pss, 1), count, f"{name} {largest:.0f} MiB"))
        per_process.extend((seconds, p[0], p[1], round(p[2], 1), round(p[3], 1)) for p in processes)
        print(
            f"{seconds:>8.0f} s  RSS {rss:>7.0f} MiB  PSS {pss:>7.0f} MiB  {count:>3} processes",
            file=sys.stderr,
        )
        deadline = time.monotonic() + args.every
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
    with (out / "rss.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["seconds", "rss_mib", "pss_mib", "processes", "largest"])
        writer.writerows(rows)
    with (out / "processes.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["seconds", "pid", "name", "rss_mib", "pss_mib"])
        writer.writerows(per_process)
    _plot(rows, out / "rss.png")
    return process.returncode


def _plot(rows: list[tuple[float, float, float, int, str]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 3.5))
    minutes = [r[0] / 60 for r in rows]
    axes.plot(minutes, [r[1] for r in rows], "o-", markersize=3, label="sum of RSS")
    axes.plot(minutes, [r[2] for r in rows], "o-", markersize=3, label="sum of PSS")
    axes.set_xlabel("minutes")
    axes.set_ylabel("memory of all processes (MiB)")
    axes.legend()
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


if __name__ == "__main__":
    raise SystemExit(main())
