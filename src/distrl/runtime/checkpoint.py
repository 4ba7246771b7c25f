"""Checkpoints written as one unit: the run's state and its policy, both or neither.

A checkpoint is two files: ``latest.pt`` (everything a resumed run needs) and ``policy.pt`` (the
policy alone, for ``distrl eval``). They must always belong together: an evaluation of a run
killed mid-write must score the policy of the state a resume would continue from. So each
checkpoint is written into a fresh folder ``checkpoints.d/NNNNNN/``, both files and a
``complete`` marker fsynced, the folder fsynced, and only then does the link ``checkpoints``
switch to it, in one ``rename`` (atomic on POSIX), followed by an fsync of the run folder.
Readers open ``checkpoints/latest.pt`` and ``checkpoints/policy.pt`` through the link, so they
see the previous checkpoint or the new one, never a mix. The previous folder is kept (a reader
may still be opening it); older ones, and partial ones a kill left, are removed.

A run folder from before this layout has a real ``checkpoints/`` folder; the first write moves
it into ``checkpoints.d/`` before linking. If a kill lands between that move and the link,
:func:`current_checkpoint` falls back on the newest complete folder.

:func:`write_steps` lists the write as named steps so a test can stop after any of them, as a
kill would.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from distrl.errors import InputError
from distrl.policies.base import Policy
from distrl.torch_files import read_torch_file

#: The link to the current checkpoint folder, and the paths readers open through it.
CHECKPOINT_LINK = "checkpoints"
CHECKPOINT = f"{CHECKPOINT_LINK}/latest.pt"
POLICY_CHECKPOINT = f"{CHECKPOINT_LINK}/policy.pt"
#: The policy a run's online phase started from (after its warm start), kept beside the
#: checkpoints: a run's gain can be measured again on any evaluation draw later
#: (``distrl eval --checkpoint RUN/start_policy.pt``).
START_POLICY = "start_policy.pt"
#: Where the checkpoint folders live.
VERSIONS = "checkpoints.d"
#: Written last into a folder: the folder holds a whole checkpoint.
COMPLETE = "complete"


def _fsync_file(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _numbered(run_dir: Path) -> list[Path]:
    """The checkpoint folders under ``checkpoints.d``, oldest first."""
    versions = run_dir / VERSIONS
    if not versions.is_dir():
        return []
    return sorted((p for p in versions.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))


def current_checkpoint(run_dir: Path) -> Path | None:
    """The folder of the run's current checkpoint: where the link points, else (a kill between
    moving an old-layout folder and linking) the newest complete folder; None without any."""
    link = run_dir / CHECKPOINT_LINK
    if link.is_dir():
        return link.resolve() if link.is_symlink() else link
    complete = [p for p in _numbered(run_dir) if (p / COMPLETE).exists()]
    return complete[-1] if complete else None


def write_steps(
    run_dir: Path, state: dict[str, Any], policy: Policy
) -> list[tuple[str, Callable[[], None]]]:
    """The steps of one checkpoint write, in order (run them all: :func:`save_checkpoint`)."""
    numbered = _numbered(run_dir)
    folder = run_dir / VERSIONS / f"{int(numbered[-1].name) + 1 if numbered else 1:06d}"
    link = run_dir / CHECKPOINT_LINK
    staged_link = run_dir / f"{CHECKPOINT_LINK}.link"

    previous = current_checkpoint(run_dir)

    def make_folder() -> None:
        folder.mkdir(parents=True)

    def write_state() -> None:
        torch.save(state, folder / "latest.pt")
        _fsync_file(folder / "latest.pt")

    def write_policy() -> None:
        policy.save(folder / "policy.pt")
        _fsync_file(folder / "policy.pt")

    def mark_complete() -> None:
        (folder / COMPLETE).write_text("")
        _fsync_file(folder / COMPLETE)
        _fsync_dir(folder)
        _fsync_dir(folder.parent)

    def retire_old_layout() -> None:
        if link.is_dir() and not link.is_symlink():
            os.replace(link, run_dir / VERSIONS / f"{0:06d}")
            _fsync_dir(run_dir)

    def stage_link() -> None:
        if staged_link.is_symlink() or staged_link.exists():
            staged_link.unlink()
        staged_link.symlink_to(Path(VERSIONS) / folder.name)

    def switch() -> None:
        os.replace(staged_link, link)
        _fsync_dir(run_dir)

    def prune() -> None:
        # Everything but this checkpoint and the previous one (partial writes of killed runs
        # included).
        keep = {folder.resolve(), previous.resolve() if previous is not None else None}
        for old in _numbered(run_dir):
            if old.resolve() not in keep:
                shutil.rmtree(old, ignore_errors=True)

    return [
        ("make folder", make_folder),
        ("write state", write_state),
        ("write policy", write_policy),
        ("mark complete", mark_complete),
        ("retire old layout", retire_old_layout),
        ("stage link", stage_link),
        ("switch", switch),
        ("prune", prune),
    ]


def save_checkpoint(run_dir: Path, state: dict[str, Any], policy: Policy) -> None:
    """``state`` and ``policy`` as the run's new current checkpoint, atomically (see above)."""
    for _, step in write_steps(run_dir, state, policy):
        step()


def save_start_policy(run_dir: Path, policy: Policy) -> None:
    """``policy`` as the run's :data:`START_POLICY`, written whole or not at all (a temporary
    file fsynced, then renamed over the name)."""
    staged = run_dir / f".{START_POLICY}.partial"
    policy.save(staged)
    _fsync_file(staged)
    os.replace(staged, run_dir / START_POLICY)
    _fsync_dir(run_dir)


#: What every runtime's checkpoint holds (a resumed run reads these before anything else).
_CHECKPOINT_FIELDS: dict[str, type | tuple[type, ...]] = {
    "learner": dict,
    "replay": dict,
    "curve": list,
    "elapsed": (int, float),
    "episodes": int,
}


def load_checkpoint(run_dir: Path) -> dict[str, Any]:
    """The state of the run's current checkpoint (tensors and plain data only); an
    :class:`InputError` naming the file when it is missing, damaged, foreign or not shaped like
    a distrl checkpoint."""
    fix = "restore it from a copy, or start a new run (without --resume)"
    folder = current_checkpoint(run_dir)
    if folder is None:
        raise InputError(f"{run_dir / CHECKPOINT}: no checkpoint to resume from; {fix}")
    path = folder / "latest.pt"
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
