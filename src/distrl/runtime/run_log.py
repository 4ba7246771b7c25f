"""What every training runtime records the same way: the clock, the evaluation curve, checkpoints
(written atomically by :mod:`distrl.runtime.checkpoint`), and the run's summary files.

Both runtimes (serial and ray) evaluate the test split at fixed wall-clock points, greedy and
sampled, checkpoint on a period and end with an evaluation of the final policy, so their curves
and run folders compare one to one.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torch.utils.tensorboard import SummaryWriter

from distrl.config.schema import RunConfig
from distrl.core.task import Task
from distrl.errors import InputError, first_sentence
from distrl.policies.base import Policy
from distrl.runtime.allocator import active_allocator
from distrl.runtime.checkpoint import (
    CHECKPOINT,
    POLICY_CHECKPOINT,
    load_checkpoint,
    save_checkpoint,
)
from distrl.runtime.drops import DropLog
from distrl.runtime.evaluation import EvaluationDevices, evaluate
from distrl.runtime.run_dir import write_summary
from distrl.store import StoreError

__all__ = [
    "CHECKPOINT",
    "POLICY_CHECKPOINT",
    "RunClock",
    "TrainResult",
    "load_checkpoint",
    "record_eval",
    "save_checkpoint",
    "write_outputs",
]

#: The evaluation draw the starting and the final policy are both measured on (see
#: :func:`record_eval`); periodic points take draws 1, 2, ... after it.
PAIRED_DRAW = 0


@dataclass
class TrainResult:
    run_dir: Path
    curve: list[dict[str, float]] = field(default_factory=list)
    updates: int = 0
    episodes: int = 0
    #: Runtime-specific figures (the ray runtime's collection: utilisation, drops, restarts).
    extra: dict[str, Any] = field(default_factory=dict)
    #: Episodes the devices dropped, by cause (the serial runtime's; the ray runtime counts its
    #: own in ``extra``).
    drops: DropLog | None = None

    def summary(self) -> dict[str, object]:
        return {
            "initial_success": self.curve[0]["success"] if self.curve else 0.0,
            "final_success": self.curve[-1]["success"] if self.curve else 0.0,
            "final_success_se": self.curve[-1].get("success_se", 0.0) if self.curve else 0.0,
            "minutes": round(self.curve[-1]["minutes"], 2) if self.curve else 0.0,
            "updates": self.updates,
            "episodes": self.episodes,
            "curve": self.curve,
            **self.extra,
            **(self.drops.summary() if self.drops is not None else {}),
            "allocator": active_allocator(),  # it moves the learner's speed (allocator.py)
            "run_dir": str(self.run_dir),
        }


class RunClock:
    """Wall-clock budget, evaluation and checkpoint schedule; resumes where a checkpoint left.

    Two budgets: ``train.minutes`` bounds the training phase (this clock's ``elapsed``, carried
    over a resume); ``train.total_minutes`` bounds the whole command from ``command_started``
    (warm start included), keeping back ``reserve`` seconds for the final evaluation (the
    training loop sets it to what its last evaluation took)."""

    def __init__(
        self,
        cfg: RunConfig,
        elapsed_before: float = 0.0,
        last_eval_minutes=None,
        command_started: float | None = None,
    ):
        self.started = time.monotonic() - elapsed_before
        self.budget = cfg.train.minutes * 60
        total = cfg.train.total_minutes
        self.total = None if total is None else total * 60
        self.command_started = time.monotonic() if command_started is None else command_started
        self.reserve = 0.0
        self.eval_every = cfg.train.eval_every_minutes * 60
        self.checkpoint_every = cfg.train.checkpoint_every_minutes * 60
        self.next_eval = 0.0 if last_eval_minutes is None else last_eval_minutes * 60
        if last_eval_minutes is not None:
            self.next_eval += self.eval_every
        self.next_checkpoint = elapsed_before + self.checkpoint_every

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def fraction(self) -> float:
        """How much of the tighter budget is spent."""
        fraction = self.elapsed / self.budget
        if self.total is not None:
            spent = time.monotonic() - self.command_started + self.reserve
            fraction = max(fraction, spent / self.total)
        return fraction

    def out_of_time(self) -> bool:
        return self.fraction >= 1.0

    def eval_due(self) -> bool:
        if self.elapsed < self.next_eval:
            return False
        self.next_eval = self.elapsed + self.eval_every
        return True

    def checkpoint_due(self) -> bool:
        if self.elapsed < self.next_checkpoint:
            return False
        self.next_checkpoint = self.elapsed + self.checkpoint_every
        return True


def record_eval(
    cfg: RunConfig,
    policy: Policy,
    test_tasks: list[Task],
    elapsed: float,
    updates: int,
    result: TrainResult,
    writer: SummaryWriter,
    devices: EvaluationDevices | None = None,
    final: bool = False,
) -> None:
    """Evaluate ``policy`` on the test split (greedy and sampled) and add a curve point with
    each success rate's standard error.

    The first point (the starting policy) and the final one (``final``: the policy the run ends
    with) are the pair a run is quoted by, ``initial_success`` and ``final_success``: both play
    ``train.final_eval_episodes`` greedy episodes of draw 0 (one task sequence, one set of
    device seeds), so their difference is the policy's, not the luck of two draws of the test
    split. The points between them are the curve: a point's index in it picks its own draw
    (1, 2, ...; a resumed run's curve goes on, so its draws do too). Every point's sampled
    success, a secondary figure, plays ``train.eval_episodes`` episodes of the point's draw."""
    paired = final or not result.curve
    draw = PAIRED_DRAW if paired else len(result.curve)
    greedy_episodes = cfg.train.final_eval_episodes if paired else cfg.train.eval_episodes
    greedy = evaluate(policy, cfg, test_tasks, greedy_episodes, True, devices, draw)
    sampled = evaluate(policy, cfg, test_tasks, cfg.train.eval_episodes, False, devices, draw)
    point = {
        "minutes": elapsed / 60,
        "success": greedy.success_rate,
        "success_se": greedy.success_se,
        "episodes": greedy.episodes,
        "sampled_success": sampled.success_rate,
        "sampled_success_se": sampled.success_se,
        "sampled_episodes": sampled.episodes,
        "updates": updates,
        "draw": draw,
    }
    if final:
        point["final"] = True
    result.curve.append(point)
    writer.add_scalar("eval/success_greedy", greedy.success_rate, updates)
    writer.add_scalar("eval/success_greedy_se", greedy.success_se, updates)
    writer.add_scalar("eval/success_sampled", sampled.success_rate, updates)
    writer.add_scalar("eval/success_sampled_se", sampled.success_se, updates)


@contextmanager
def restoring_from(run_dir: Path) -> Iterator[None]:
    """Around the code that puts a loaded checkpoint's state back: a state that does not fit
    (a learner of another shape, a field of the wrong kind) is the file's fault, told in one
    line naming it, not a traceback from deep inside ``load_state_dict``."""
    try:
        yield
    except (InputError, StoreError):
        raise  # already names its file (a damaged shard is not the checkpoint's fault)
    except (KeyError, IndexError, TypeError, ValueError, RuntimeError) as error:
        raise InputError(
            f"checkpoint {run_dir / CHECKPOINT} does not fit this run "
            f"({type(error).__name__}: {first_sentence(str(error))}); restore it from a copy, "
            "or start a new run (without --resume)"
        ) from error


def write_outputs(run_dir: Path, result: TrainResult) -> None:
    write_summary(run_dir, result.summary())
    (run_dir / "curve.json").write_text(json.dumps(result.curve, indent=2) + "\n")
