"""How far to trust a success judge: its agreement with ground truth on stored episodes.

PhoneSim (and fake-adb's PhoneSim phones) record true success, so a store of their trajectories
is a labelled set for any judge that will later score real devices. The figures that matter for
RL are the two error rates: a **false positive** (judge says success, the episode failed) rewards
the wrong behaviour, a **false negative** withholds reward from the right one.

Each trajectory is judged as it would be at its last step: its screenshots (every step's
observation, then the final one) and all its actions.

>>> # metrics = judge_eval(TrajectoryStore(run_dir / "trajectories").load(), VLMJudge(cfg))
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from distrl.core.action import Action
from distrl.core.trajectory import Trajectory
from distrl.errors import InputError
from distrl.judges.base import SuccessJudge

#: Judgements in flight at once; the judge's rate limiter, not this, sets the request rate.
DEFAULT_WORKERS = 4
_STAT_KEYS = ("requests", "cache_hits", "retries", "unparseable")


def episode_screenshots(trajectory: Trajectory) -> list[np.ndarray]:
    """Every screen of the episode, oldest first: each step's observation, then the final one."""
    screenshots = [step.observation.screenshot for step in trajectory.steps]
    if trajectory.final_observation is not None:
        screenshots.append(trajectory.final_observation.screenshot)
    return screenshots


def episode_actions(trajectory: Trajectory) -> list[Action]:
    return [step.action for step in trajectory.steps]


def has_screenshots(trajectory: Trajectory) -> bool:
    """False when the screenshots are the store's stand-ins: all-black arrays (saved without
    ``--save-screenshots``) or 1x1 placeholders (``without_screenshots``). A rendered screen is
    never entirely black, so checking the last one is enough."""
    screenshots = episode_screenshots(trajectory)
    if not screenshots:
        return False
    last = screenshots[-1]
    return last.size > 3 and bool(np.any(last))


def _rate(numerator: int, denominator: int) -> float | None:
    """A rate, or None when undefined (no episodes of that kind): 0.0 would claim a measurement."""
    return round(numerator / denominator, 4) if denominator else None


def judge_eval(
    trajectories: Sequence[Trajectory],
    judge: SuccessJudge,
    *,
    workers: int = DEFAULT_WORKERS,
    on_judged: Callable[[Trajectory, bool], None] | None = None,
) -> dict[str, Any]:
    """Judge every trajectory with ``judge`` and compare with ``trajectory.success``.

    Returns ``n``, ``positives``/``negatives`` (ground truth), ``tp``/``fp``/``tn``/``fn``,
    ``agreement``, ``false_positive_rate`` (over true failures), ``false_negative_rate`` (over
    true successes), ``judged_success_rate``, ``true_success_rate``, ``wall_seconds``,
    ``mean_seconds_per_judgement`` (wall time / n: what judging costs per episode with this
    many workers and the judge's rate limit) and ``mean_call_seconds`` (mean duration of one
    ``judge`` call, queueing at the rate limiter included); rates are None when their
    denominator is 0. If the judge has ``stats()`` (a :class:`~distrl.judges.vlm.VLMJudge`),
    its ``requests``, ``cache_hits``, ``retries`` and ``unparseable`` during this evaluation are
    added, with ``mean_request_seconds`` (HTTP latency alone).

    Raises :class:`~distrl.errors.InputError` when there are no trajectories or when they were
    stored without screenshots.
    """
    if not trajectories:
        raise InputError("no trajectories to judge (the store is empty)")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    missing = [t for t in trajectories if not has_screenshots(t)]
    if missing:
        raise InputError(
            f"{len(missing)} of {len(trajectories)} trajectories have no screenshots (e.g. "
            f"{missing[0].trajectory_id or missing[0].task.task_id!r}): they were stored without "
            "screens; make them with `distrl play --save-screenshots` (play.save_screenshots=true)"
        )
    stats_before = _judge_stats(judge)

    failed = threading.Event()

    def judge_one(trajectory: Trajectory) -> tuple[bool, float]:
        if failed.is_set():  # another judgement already failed: this one would only fail too
            return False, 0.0
        started = time.monotonic()
        try:
            verdict = judge.judge(
                trajectory.task, episode_screenshots(trajectory), episode_actions(trajectory)
            )
        except BaseException:
            failed.set()
            raise
        seconds = time.monotonic() - started
        if on_judged is not None:
            on_judged(trajectory, verdict)
        return bool(verdict), seconds

    started = time.monotonic()
    # On an error (judge unavailable, key rejected) the queued judgements would only fail the
    # same way after their own retries, so they are skipped and the first error is raised.
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="judge-eval") as pool:
        futures = [pool.submit(judge_one, trajectory) for trajectory in trajectories]
        results = [future.result() for future in futures]
    wall = time.monotonic() - started

    truth = [bool(t.success) for t in trajectories]
    said = [verdict for verdict, _ in results]
    tp = sum(t and s for t, s in zip(truth, said, strict=True))
    fp = sum((not t) and s for t, s in zip(truth, said, strict=True))
    tn = sum((not t) and (not s) for t, s in zip(truth, said, strict=True))
    fn = sum(t and (not s) for t, s in zip(truth, said, strict=True))
    n = len(trajectories)
    positives, negatives = tp + fn, tn + fp
    metrics: dict[str, Any] = {
        "n": n,
        "positives": positives,
        "negatives": negatives,
        "tp": tp,
        "fp": fp,
        "tn": tn,
        "fn": fn,
        "agreement": _rate(tp + tn, n),
        "false_positive_rate": _rate(fp, negatives),
        "false_negative_rate": _rate(fn, positives),
        "judged_success_rate": _rate(tp + fp, n),
        "true_success_rate": _rate(positives, n),
        "mean_seconds_per_judgement": round(wall / n, 4),
        "mean_call_seconds": round(sum(seconds for _, seconds in results) / n, 4),
        "wall_seconds": round(wall, 3),
    }
    stats_after = _judge_stats(judge)
    if stats_before is not None and stats_after is not None:
        for key in _STAT_KEYS:
            metrics[key] = int(stats_after.get(key, 0) - stats_before.get(key, 0))
        requests = metrics["requests"]
        latency = stats_after.get("latency_seconds", 0.0) - stats_before.get("latency_seconds", 0.0)
        metrics["mean_request_seconds"] = round(latency / requests, 4) if requests else None
    return metrics


def _judge_stats(judge: SuccessJudge) -> dict[str, float] | None:
    stats = getattr(judge, "stats", None)
    if not callable(stats):
        return None
    result = stats()
    return result if isinstance(result, dict) else None
