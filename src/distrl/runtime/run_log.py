"""What every training runtime records the same way: the clock, the evaluation curve, checkpoints
written atomically, and the run's summary files.

Both runtimes (serial and ray) evaluate the test split at fixed wall-clock points, greedy and
sampled, checkpoint on a period and end with an evaluation of the final policy, so their curves
and run folders compare one to one.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.utils.tensorboard import SummaryWriter

from distrl.config.schema import RunConfig
from distrl.core.task import Task
from distrl.errors import InputError, first_sentence
from distrl.policies.base import Policy
from distrl.runtime.drops import DropLog
from distrl.runtime.evaluation import EvaluationDevices, evaluate
from distrl.runtime.run_dir import write_summary
from distrl.store import StoreError
from distrl.torch_files import read_torch_file

CHECKPOINT = "checkpoints/latest.pt"
POLICY_CHECKPOINT = "checkpoints/policy.pt"


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
            "minutes": round(self.curve[-1]["minutes"], 2) if self.curve else 0.0,
            "updates": self.updates,
            "episodes": self.episodes,
            "curve": self.curve,
            **self.extra,
            **(self.drops.summary() if self.drops is not None else {}),
            "run_dir": str(self.run_dir),
        }


class RunClock:
    """Wall-clock budget, evaluation and checkpoint schedule; resumes where a checkpoint left."""

    def __init__(self, cfg: RunConfig, elapsed_before: float = 0.0, last_eval_minutes=None):
        self.started = time.monotonic() - elapsed_before
        self.budget = cfg.train.minutes * 60
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
        return self.elapsed / self.budget

    def out_of_time(self) -> bool:
        return self.elapsed >= self.budget

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
) -> None:
    """Evaluate ``policy`` on the test split (greedy and sampled) and add a curve point."""
    episodes = cfg.train.eval_episodes
    greedy = evaluate(policy, cfg, test_tasks, episodes, True, devices).success_rate
    sampled = evaluate(policy, cfg, test_tasks, episodes, False, devices).success_rate
    result.curve.append(
        {"minutes": elapsed / 60, "success": greedy, "sampled_success": sampled, "updates": updates}
    )
    writer.add_scalar("eval/success_greedy", greedy, updates)
    writer.add_scalar("eval/success_sampled", sampled, updates)


def save_checkpoint(run_dir: Path, state: dict[str, Any], policy: Policy) -> None:
    """``state`` to ``checkpoints/latest.pt`` and the policy alone to ``checkpoints/policy.pt``
    (for ``distrl eval``), each written to a temporary file and renamed into place."""
    path = run_dir / CHECKPOINT
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(state, path.with_suffix(".tmp"))
    os.replace(path.with_suffix(".tmp"), path)
    policy_path = run_dir / POLICY_CHECKPOINT
    policy.save(policy_path.with_suffix(".tmp"))
    os.replace(policy_path.with_suffix(".tmp"), policy_path)


#: What every runtime's checkpoint holds (a resumed run reads these before anything else).
_CHECKPOINT_FIELDS: dict[str, type | tuple[type, ...]] = {
    "learner": dict,
    "replay": dict,
    "curve": list,
    "elapsed": (int, float),
    "episodes": int,
}


def load_checkpoint(run_dir: Path) -> dict[str, Any]:
    """The state saved by :func:`save_checkpoint`; an :class:`InputError` naming the file when it
    is damaged, foreign or not shaped like a distrl checkpoint."""
    path = run_dir / CHECKPOINT
    fix = "restore it from a copy, or start a new run (without --resume)"
    state = read_torch_file(path, "checkpoint", fix)
    if not isinstance(state, dict):
        raise InputError(f"checkpoint {path} is not a distrl run checkpoint (a mapping); {fix}")
    for key, kind in _CHECKPOINT_FIELDS.items():
        if not isinstance(state.get(key), kind):
            raise InputError(
                f"checkpoint {path} is not a distrl run checkpoint ({key!r} is missing or of the "
                f"wrong type); {fix}"
            )
    return state


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
