"""The on-disk trajectory store: append-only Parquet shards that pandas, duckdb and pyarrow read.

Workers produce trajectories faster than anyone looks at them, and the people who do look use
dataframe tools, not our classes. So the store writes plain, flat Parquet with an explicit schema
(one row per observation, screenshots as PNG bytes) and rebuilds the exact
:class:`~distrl.core.trajectory.Trajectory` objects on load.

Layout::

    root/
      shard-000000.parquet      closed: full, never rewritten
      shard-000001.parquet      open: each append() rewrites it whole with the new rows added
      .shard-000001.parquet.tmp-<hex>   a write in progress (or left by a crash): never read

Shards rotate: an append goes into the newest shard until that shard holds
``shard_max_trajectories`` trajectories or ``shard_max_bytes`` on disk, then a new shard starts
(an append is never split, so a shard may pass a limit by one append).
A long run therefore makes a few files of hundreds of episodes, not one small file per flush
(thousands of them, which file systems, ``ls`` and dataframe readers all handle badly). The open
shard is rewritten through a temp file and an atomic rename, so a reader, or a restart after a
crash, sees the shard either before or after an append, never half of one. Stores written with
one shard per append (before rotation) load as they are.

Rows. Every row carries the trajectory's columns (ids, task, success, times, metadata; repeated,
which dictionary encoding makes nearly free) plus one observation, in ``row_kind``:

* ``"step"``: ``step_index`` 0..num_steps-1, the observation the agent saw and the action it took
  from it, with reward, log-prob, policy version and timing.
* ``"final"``: ``step_index == num_steps``, the observation after the last action
  (``Trajectory.final_observation``); every action/step column is null. Written only when the
  trajectory has a final observation. Storing it as a row of the same shape (rather than extra
  ``final_*`` columns on the last step) keeps one set of observation columns and lets a dataframe
  user get "every screen of the episode" by sorting on ``step_index``.
* ``"empty"``: a trajectory with no steps and no final observation, kept as one row of trajectory
  columns (``step_index == 0``) so that it is not silently lost; every observation and action
  column is null.

Per-step transitions are therefore ``df[df.row_kind == "step"]``.

``previous_actions`` are not stored: on load, observation ``i`` gets the actions of steps
``0..i-1`` (the final observation gets all of them). When an observation's history is not that
prefix (say a backend that keeps only the last k actions), the row stores it explicitly in
``previous_actions_json`` so loading is still exact; otherwise that column is null.

With ``save_screenshots=False`` the PNG column is null but the screenshot's height and width are
kept; such screenshots load as black ``HxWx3`` arrays of the original shape, so downstream code that
expects an image keeps working (check ``TrajectoryStore.to_table()["screenshot_png"]`` when it
matters).

One writer per folder: ``append`` rewrites the newest shard or picks the next free number and
``os.replace``-s onto it, so two processes appending to the same root at once could lose rows.
Readers may run alongside the writer; they only ever see complete shards.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import threading
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from distrl.core.action import Action, ActionType
from distrl.core.observation import Observation, UIElement
from distrl.core.screenshot import PNGScreenshot
from distrl.core.task import Task
from distrl.core.trajectory import Step, Trajectory

__all__ = [
    "STORE_FORMAT_VERSION",
    "TRAJECTORY_SCHEMA",
    "StoreError",
    "TrajectoryStore",
]

#: Bumped whenever a column changes meaning, so an old reader refuses a newer shard loudly.
STORE_FORMAT_VERSION = "1"

ROW_STEP = "step"
ROW_FINAL = "final"
ROW_EMPTY = "empty"

_FORMAT_KEY = b"distrl.store_format"
_NUM_TRAJECTORIES_KEY = b"distrl.num_trajectories"
_SHARD_RE = re.compile(r"^shard-(\d{6,})\.parquet$")
#: Rotation limits (see the module docstring): under a MB of rows per shard without screens.
DEFAULT_SHARD_MAX_TRAJECTORIES = 256
DEFAULT_SHARD_MAX_BYTES = 64 * 2**20

TRAJECTORY_SCHEMA = pa.schema(
    [
        # -- trajectory (repeated on each of its rows) ------------------------------------------
        pa.field("trajectory_id", pa.string(), nullable=False),
        pa.field("row_kind", pa.string(), nullable=False),
        pa.field("step_index", pa.int32(), nullable=False),
        pa.field("num_steps", pa.int32(), nullable=False),
        pa.field("success", pa.bool_(), nullable=False),
        pa.field("worker_id", pa.string(), nullable=False),
        pa.field("device_id", pa.string(), nullable=False),
        pa.field("started_at", pa.float64(), nullable=False),
        pa.field("finished_at", pa.float64(), nullable=False),
        pa.field("metadata_json", pa.string(), nullable=False),
        # -- task --------------------------------------------------------------------------------
        pa.field("task_id", pa.string(), nullable=False),
        pa.field("instruction", pa.string(), nullable=False),
        pa.field("suite", pa.string(), nullable=False),
        pa.field("split", pa.string(), nullable=False),
        pa.field("backend", pa.string(), nullable=False),
        pa.field("task_spec_json", pa.string(), nullable=False),
        pa.field("horizon", pa.int32(), nullable=False),
        # -- observation (null on "empty" rows) ------------------------------------------------
        pa.field("observation_instruction", pa.string()),
        pa.field("screenshot_png", pa.binary()),
        pa.field("screenshot_height", pa.int32()),
        pa.field("screenshot_width", pa.int32()),
        pa.field("elements_json", pa.string()),
        pa.field("previous_actions_json", pa.string()),
        # -- action and transition (null on "final" and "empty" rows) -------------------------
        pa.field("action_type", pa.string()),
        pa.field("touch_y", pa.float64()),
        pa.field("touch_x", pa.float64()),
        pa.field("lift_y", pa.float64()),
        pa.field("lift_x", pa.float64()),
        pa.field("typed_text", pa.string()),
        pa.field("invalid_reason", pa.string()),
        pa.field("action_text", pa.string()),
        pa.field("reward", pa.float64()),
        pa.field("done", pa.bool_()),
        pa.field("behaviour_logprob", pa.float64()),
        pa.field("entropy", pa.float64()),
        pa.field("policy_version", pa.int64()),
        pa.field("step_seconds", pa.float64()),
    ],
    metadata={_FORMAT_KEY: STORE_FORMAT_VERSION.encode()},
)

# PNG bytes are already deflated; compressing them again costs CPU for almost no space.
_COMPRESSION: dict[str, str] = {
    name: ("none" if name == "screenshot_png" else "zstd") for name in TRAJECTORY_SCHEMA.names
}
_OBSERVATION_COLUMNS = (
    "observation_instruction",
    "screenshot_png",
    "screenshot_height",
    "screenshot_width",
    "elements_json",
    "previous_actions_json",
)
#: The columns a trajectory's Task is rebuilt from.
_TASK_COLUMNS = ("task_id", "instruction", "suite", "split", "backend", "task_spec_json", "horizon")
_STEP_COLUMNS = tuple(TRAJECTORY_SCHEMA.names[TRAJECTORY_SCHEMA.get_field_index("action_type") :])


class StoreError(RuntimeError):
    """A trajectory cannot be written, or a shard on disk cannot be read back."""


# -- encoding ------------------------------------------------------------------------------------


def _encode_png(screenshot: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(screenshot)).save(buffer, format="PNG")
    return buffer.getvalue()


def _decode_png(data: bytes, height: int, width: int, where: str) -> np.ndarray:
    try:
        with Image.open(io.BytesIO(data)) as image:
            pixels = np.array(image.convert("RGB"), dtype=np.uint8)
    except (OSError, ValueError) as exc:
        raise StoreError(f"{where}: screenshot_png is not a readable PNG: {exc}") from exc
    if pixels.shape != (height, width, 3):
        raise StoreError(
            f"{where}: screenshot_png decodes to shape {pixels.shape}, "
            f"but the row records {(height, width, 3)}"
        )
    return pixels


def _action_to_list(action: Action) -> list[Any]:
    return [
        action.action_type.value,
        *action.touch_yx,
        *action.lift_yx,
        action.text,
        action.invalid_reason,
    ]


def _action_from_list(values: list[Any]) -> Action:
    kind, touch_y, touch_x, lift_y, lift_x, text, reason = values
    return Action(ActionType(kind), (touch_y, touch_x), (lift_y, lift_x), text, reason)


def _element_to_dict(element: UIElement) -> dict[str, Any]:
    # Backends often compute boxes with numpy; np.float32 and np.bool_ are not JSON-serialisable.
    return {
        "text": element.text,
        "bbox": [float(value) for value in element.bbox],
        "clickable": bool(element.clickable),
        "resource_id": element.resource_id,
        "kind": element.kind,
        "checked": None if element.checked is None else bool(element.checked),
        "focused": bool(element.focused),
    }


def _element_from_dict(data: dict[str, Any]) -> UIElement:
    x0, y0, x1, y1 = data["bbox"]
    return UIElement(
        text=data["text"],
        bbox=(x0, y0, x1, y1),
        clickable=data["clickable"],
        resource_id=data["resource_id"],
        kind=data["kind"],
        checked=data["checked"],
        focused=data["focused"],
    )


def _dumps(value: Any) -> str:
    # ensure_ascii=False keeps non-Latin text readable in the Parquet file (and smaller).
    return json.dumps(value, ensure_ascii=False)


def _observation_columns(
    observation: Observation,
    expected_history: tuple[Action, ...],
    save_screenshots: bool,
    where: str,
) -> dict[str, Any]:
    screenshot = observation.screenshot
    if isinstance(screenshot, PNGScreenshot):  # bounded at the device: stored as it is
        return {
            **_observation_text_columns(observation, expected_history),
            "screenshot_png": screenshot.png if save_screenshots else None,
            "screenshot_height": screenshot.height,
            "screenshot_width": screenshot.width,
        }
    if (
        not isinstance(screenshot, np.ndarray)
        or screenshot.ndim != 3
        or screenshot.shape[2] != 3
        or screenshot.dtype != np.uint8
    ):
        described = (
            f"{screenshot.dtype} array of shape {screenshot.shape}"
            if isinstance(screenshot, np.ndarray)
            else type(screenshot).__name__
        )
        raise StoreError(f"{where}: screenshot must be an HxWx3 uint8 array, got {described}")
    height, width = int(screenshot.shape[0]), int(screenshot.shape[1])
    # PNG cannot hold a 0-pixel image; such a screenshot is stored like an unsaved one (shape only),
    # which loads back as the same empty array.
    keep_pixels = save_screenshots and height > 0 and width > 0
    return {
        **_observation_text_columns(observation, expected_history),
        "screenshot_png": _encode_png(screenshot) if keep_pixels else None,
        "screenshot_height": height,
        "screenshot_width": width,
    }


def _observation_text_columns(
    observation: Observation, expected_history: tuple[Action, ...]
) -> dict[str, Any]:
    """An observation's columns other than its screenshot."""
    history = tuple(observation.previous_actions)
    return {
        "observation_instruction": observation.instruction,
        "elements_json": _dumps([_element_to_dict(e) for e in observation.elements]),
        "previous_actions_json": (
            None if history == expected_history else _dumps([_action_to_list(a) for a in history])
        ),
    }


#: Step fields stored as same-named columns (the observation and action have columns of their own).
_STEP_SCALAR_COLUMNS = (
    "reward",
    "done",
    "behaviour_logprob",
    "entropy",
    "policy_version",
    "action_text",
    "step_seconds",
)


def _step_columns(step: Step) -> dict[str, Any]:
    action = step.action
    return {
        "action_type": action.action_type.value,
        "touch_y": float(action.touch_yx[0]),
        "touch_x": float(action.touch_yx[1]),
        "lift_y": float(action.lift_yx[0]),
        "lift_x": float(action.lift_yx[1]),
        "typed_text": action.text,
        "invalid_reason": action.invalid_reason,
        "action_text": step.action_text,
        "reward": float(step.reward),
        "done": bool(step.done),
        "behaviour_logprob": float(step.behaviour_logprob),
        "entropy": float(step.entropy),
        "policy_version": int(step.policy_version),
        "step_seconds": float(step.step_seconds),
    }


def _trajectory_rows(
    trajectory: Trajectory, trajectory_id: str, save_screenshots: bool
) -> list[dict[str, Any]]:
    """The Parquet rows of one trajectory, in step order (see the module docstring)."""
    task = trajectory.task
    where = f"trajectory {trajectory_id!r}"
    try:
        spec_json = _dumps(task.spec)
        metadata_json = _dumps(dict(trajectory.metadata))
    except (TypeError, ValueError) as exc:
        raise StoreError(
            f"{where}: task spec and metadata must be JSON-serialisable: {exc}"
        ) from exc
    shared = {
        "trajectory_id": trajectory_id,
        "num_steps": len(trajectory.steps),
        "success": bool(trajectory.success),
        "worker_id": trajectory.worker_id,
        "device_id": trajectory.device_id,
        "started_at": float(trajectory.started_at),
        "finished_at": float(trajectory.finished_at),
        "metadata_json": metadata_json,
        "task_id": task.task_id,
        "instruction": task.instruction,
        "suite": task.suite,
        "split": task.split,
        "backend": task.backend,
        "task_spec_json": spec_json,
        "horizon": int(task.horizon),
    }
    null_observation = dict.fromkeys(_OBSERVATION_COLUMNS)
    null_step = dict.fromkeys(_STEP_COLUMNS)

    rows: list[dict[str, Any]] = []
    actions = tuple(step.action for step in trajectory.steps)
    for index, step in enumerate(trajectory.steps):
        observation = _observation_columns(
            step.observation, actions[:index], save_screenshots, f"{where} step {index}"
        )
        rows.append(
            {
                **shared,
                "row_kind": ROW_STEP,
                "step_index": index,
                **observation,
                **_step_columns(step),
            }
        )
    if trajectory.final_observation is not None:
        observation = _observation_columns(
            trajectory.final_observation, actions, save_screenshots, f"{where} final observation"
        )
        rows.append(
            {
                **shared,
                "row_kind": ROW_FINAL,
                "step_index": len(actions),
                **observation,
                **null_step,
            }
        )
    elif not trajectory.steps:
        rows.append(
            {**shared, "row_kind": ROW_EMPTY, "step_index": 0, **null_observation, **null_step}
        )
    return rows


# -- decoding ------------------------------------------------------------------------------------


def _decode_observation(
    row: dict[str, Any], history: tuple[Action, ...], where: str
) -> Observation:
    height, width = row["screenshot_height"], row["screenshot_width"]
    if row["screenshot_png"] is None:
        screenshot = np.zeros((height, width, 3), dtype=np.uint8)
    else:
        screenshot = _decode_png(row["screenshot_png"], height, width, where)
    if row["previous_actions_json"] is not None:
        history = tuple(_action_from_list(a) for a in json.loads(row["previous_actions_json"]))
    return Observation(
        screenshot=screenshot,
        instruction=row["observation_instruction"],
        elements=tuple(_element_from_dict(e) for e in json.loads(row["elements_json"])),
        previous_actions=history,
    )


def _decode_action(row: dict[str, Any]) -> Action:
    return Action(
        ActionType(row["action_type"]),
        (row["touch_y"], row["touch_x"]),
        (row["lift_y"], row["lift_x"]),
        row["typed_text"],
        row["invalid_reason"],
    )


def _decode_trajectory(rows: list[dict[str, Any]], shard: Path) -> Trajectory:
    """Rebuild one trajectory from its rows (all rows of one id, any order)."""
    first = rows[0]
    where = f"shard {shard}, trajectory {first['trajectory_id']!r}"
    rows = sorted(rows, key=lambda row: row["step_index"])
    step_rows = [row for row in rows if row["row_kind"] == ROW_STEP]
    final_rows = [row for row in rows if row["row_kind"] == ROW_FINAL]
    found = [row["step_index"] for row in step_rows]
    if found != list(range(first["num_steps"])):
        raise StoreError(f"{where}: expected steps 0..{first['num_steps'] - 1}, found {found}")

    steps: list[Step] = []
    actions: list[Action] = []
    for row in step_rows:
        observation = _decode_observation(row, tuple(actions), f"{where} step {row['step_index']}")
        action = _decode_action(row)
        actions.append(action)
        scalars = {name: row[name] for name in _STEP_SCALAR_COLUMNS}
        steps.append(Step(observation=observation, action=action, **scalars))
    final_observation = (
        _decode_observation(final_rows[0], tuple(actions), f"{where} final observation")
        if final_rows
        else None
    )
    task = Task.from_dict({**first, "spec": json.loads(first["task_spec_json"])})
    return Trajectory(
        task=task,
        steps=steps,
        success=first["success"],
        worker_id=first["worker_id"],
        device_id=first["device_id"],
        trajectory_id=first["trajectory_id"],
        started_at=first["started_at"],
        finished_at=first["finished_at"],
        final_observation=final_observation,
        metadata=json.loads(first["metadata_json"]),
    )


# -- the store -----------------------------------------------------------------------------------


class TrajectoryStore:
    """An append-only folder of Parquet shards holding finished trajectories.

    >>> import tempfile
    >>> store = TrajectoryStore(Path(tempfile.mkdtemp()))
    >>> store.count()
    0

    ``append`` never mutates the trajectories it is given: a trajectory with an empty
    ``trajectory_id`` is written under a fresh ``uuid4().hex``, which is what ``load`` returns and
    ``trajectory_ids`` lists. Ids are unique across the store; appending a trajectory whose id is
    already stored (or twice in one call) raises :class:`StoreError` instead of merging two
    episodes into one.
    """

    def __init__(
        self,
        root: Path | str,
        *,
        save_screenshots: bool = True,
        shard_max_trajectories: int = DEFAULT_SHARD_MAX_TRAJECTORIES,
        shard_max_bytes: int = DEFAULT_SHARD_MAX_BYTES,
    ) -> None:
        """Open (creating if needed) the store at ``root``.

        ``save_screenshots=False`` stores screenshots as null (shape only) to save disk; useful for
        long runs where only rewards, actions and element lists matter. A shard takes appends
        until it holds ``shard_max_trajectories`` trajectories or ``shard_max_bytes`` bytes.
        """
        if shard_max_trajectories < 1 or shard_max_bytes < 1:
            raise ValueError(
                "shard_max_trajectories and shard_max_bytes must be >= 1, got "
                f"{shard_max_trajectories} and {shard_max_bytes}"
            )
        self.root = Path(root)
        self.save_screenshots = save_screenshots
        self.shard_max_trajectories = shard_max_trajectories
        self.shard_max_bytes = shard_max_bytes
        if self.root.exists() and not self.root.is_dir():
            raise StoreError(f"store root {self.root} exists and is not a folder")
        self.root.mkdir(parents=True, exist_ok=True)
        self._write_lock = threading.Lock()
        # A shard changes only by an atomic rewrite, so its ids are cached by (name, size, mtime).
        self._ids_cache: dict[str, tuple[tuple[int, int], list[str]]] = {}
        # The open shard's rows as last written by this handle, so an append need not read them.
        self._open_cache: tuple[str, tuple[int, int], pa.Table] | None = None

    def __repr__(self) -> str:
        return f"TrajectoryStore({str(self.root)!r}, save_screenshots={self.save_screenshots})"

    # -- writing ---------------------------------------------------------------------------------
    def append(self, trajectories: Sequence[Trajectory]) -> int:
        """Add ``trajectories`` to the open shard (or a new one); return the rows written.

        The shard is written to a hidden temp file in the same folder, flushed to disk and then
        renamed into place, so a reader (or a restart after a crash) sees either the whole append
        or nothing of it. An empty sequence writes nothing and returns 0.
        """
        if not trajectories:
            return 0
        with self._write_lock:
            stored = set(self.trajectory_ids())
            rows: list[dict[str, Any]] = []
            batch_ids: set[str] = set()
            for trajectory in trajectories:
                trajectory_id = trajectory.trajectory_id or uuid.uuid4().hex
                if trajectory_id in stored or trajectory_id in batch_ids:
                    raise StoreError(
                        f"trajectory id {trajectory_id!r} is already in the store at {self.root}; "
                        "ids must be unique (leave trajectory_id empty to get a fresh one)"
                    )
                batch_ids.add(trajectory_id)
                rows.extend(_trajectory_rows(trajectory, trajectory_id, self.save_screenshots))
            try:
                table = pa.Table.from_pylist(rows, schema=TRAJECTORY_SCHEMA)
            except (pa.ArrowException, UnicodeError, TypeError, ValueError) as exc:
                raise StoreError(f"cannot convert trajectories to the store schema: {exc}") from exc
            shards = self._shards()
            open_shard = self._open_shard(shards)
            if open_shard is None:
                index = _shard_index(shards[-1]) + 1 if shards else 0
                target, previous_ids = self.root / f"shard-{index:06d}.parquet", []
                combined = table
            else:
                target, previous_ids = open_shard, self._shard_ids(open_shard)
                combined = pa.concat_tables([self._open_table(open_shard), table])
            ids = previous_ids + list(_batch_ids_in_order(rows))
            schema = TRAJECTORY_SCHEMA.with_metadata(
                {**TRAJECTORY_SCHEMA.metadata, _NUM_TRAJECTORIES_KEY: str(len(ids)).encode()}
            )
            self._write_shard(combined.replace_schema_metadata(schema.metadata), target)
            key = _stat_key(target)
            self._ids_cache[target.name] = (key, ids)
            self._open_cache = (target.name, key, combined)
            return table.num_rows

    def _open_shard(self, shards: list[Path]) -> Path | None:
        """The newest shard if it still takes appends (below both rotation limits), else None."""
        if not shards:
            return None
        newest = shards[-1]
        if newest.stat().st_size >= self.shard_max_bytes:
            return None
        if len(self._shard_ids(newest)) >= self.shard_max_trajectories:
            return None
        return newest

    def _open_table(self, shard: Path) -> pa.Table:
        """The open shard's rows: from this handle's last write when the file is unchanged."""
        cached = self._open_cache
        if cached is not None and cached[0] == shard.name and cached[1] == _stat_key(shard):
            return cached[2]
        return _read_shard(shard).replace_schema_metadata(TRAJECTORY_SCHEMA.metadata)

    def _write_shard(self, table: pa.Table, final: Path) -> None:
        temp = self.root / f".{final.name}.tmp-{uuid.uuid4().hex}"
        try:
            with open(temp, "wb") as handle:
                pq.write_table(table, handle, compression=_COMPRESSION)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, final)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        _fsync_folder(self.root)

    # -- reading ---------------------------------------------------------------------------------
    def shard_paths(self) -> list[Path]:
        """The complete shards, oldest first (temp files of unfinished writes are left out)."""
        return self._shards()

    def count(self) -> int:
        """How many trajectories the store holds (read from shard footers, not the data)."""
        total = 0
        for shard in self._shards():
            metadata = _read_shard_schema(shard).metadata or {}
            try:
                total += int(metadata[_NUM_TRAJECTORIES_KEY])
            except (KeyError, ValueError) as exc:
                raise StoreError(f"shard {shard} has no valid trajectory count: {exc!r}") from exc
        return total

    def trajectory_ids(self) -> list[str]:
        """Every stored trajectory id, in the order they were appended."""
        ids: list[str] = []
        for shard in self._shards():
            ids.extend(self._shard_ids(shard))
        return ids

    def task_outcomes(self) -> list[tuple[Task, bool]]:
        """Each stored trajectory's task and success, in append order, read from those columns
        only: what a run's summary counts per task family without decoding any observation."""
        outcomes: list[tuple[Task, bool]] = []
        for shard in self._shards():
            table = _read_shard(shard, columns=["trajectory_id", "success", *_TASK_COLUMNS])
            seen: set[str] = set()
            for row in table.to_pylist():
                if row["trajectory_id"] not in seen:
                    seen.add(row["trajectory_id"])
                    task = Task.from_dict({**row, "spec": json.loads(row["task_spec_json"])})
                    outcomes.append((task, bool(row["success"])))
        return outcomes

    def iter_trajectories(self) -> Iterator[Trajectory]:
        """Yield stored trajectories in append order, reading one shard at a time."""
        for shard in self._shards():
            table = _read_shard(shard)
            columns = {name: table.column(name).to_pylist() for name in table.column_names}
            grouped: dict[str, list[dict[str, Any]]] = {}
            for i in range(table.num_rows):
                row = {name: values[i] for name, values in columns.items()}
                grouped.setdefault(row["trajectory_id"], []).append(row)
            for rows in grouped.values():
                yield _decode_trajectory(rows, shard)

    def load(self, limit: int | None = None) -> list[Trajectory]:
        """The first ``limit`` stored trajectories (all when None), in append order."""
        if limit is not None and limit < 0:
            raise ValueError(f"limit must be >= 0 or None, got {limit}")
        return list(itertools.islice(self.iter_trajectories(), limit))

    def to_table(self) -> pa.Table:
        """Every row of every shard as one pyarrow Table (``.to_pandas()`` for a DataFrame)."""
        tables = [_read_shard(shard) for shard in self._shards()]
        if not tables:
            return TRAJECTORY_SCHEMA.empty_table()
        return pa.concat_tables(
            [t.replace_schema_metadata(TRAJECTORY_SCHEMA.metadata) for t in tables]
        )

    # -- helpers ---------------------------------------------------------------------------------
    def _shards(self) -> list[Path]:
        if not self.root.is_dir():
            raise StoreError(f"store root {self.root} does not exist or is not a folder")
        shards = [p for p in self.root.iterdir() if _SHARD_RE.match(p.name) and p.is_file()]
        return sorted(shards, key=_shard_index)

    def _shard_ids(self, shard: Path) -> list[str]:
        key = _stat_key(shard)
        cached = self._ids_cache.get(shard.name)
        if cached is not None and cached[0] == key:
            return cached[1]
        column = _read_shard(shard, columns=["trajectory_id"]).column("trajectory_id")
        ids = list(dict.fromkeys(column.to_pylist()))
        self._ids_cache[shard.name] = (key, ids)
        return ids


def _batch_ids_in_order(rows: list[dict[str, Any]]) -> Iterator[str]:
    """The trajectory ids of ``rows`` (several rows per trajectory), each once, in order."""
    return iter(dict.fromkeys(row["trajectory_id"] for row in rows))


def _stat_key(path: Path) -> tuple[int, int]:
    """What changes when a shard is rewritten: its size and modification time."""
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns


def _shard_index(path: Path) -> int:
    match = _SHARD_RE.match(path.name)
    assert match is not None  # only called on paths that _shards() kept
    return int(match.group(1))


_READ_ERRORS = (pa.ArrowException, OSError, ValueError)


def _check_schema(schema: pa.Schema, shard: Path) -> None:
    """Refuse a shard that is not ours or is from another store format, naming the file."""
    version = (schema.metadata or {}).get(_FORMAT_KEY)
    if version is None:
        raise StoreError(f"shard {shard} was not written by TrajectoryStore (no format tag)")
    if version.decode() != STORE_FORMAT_VERSION:
        raise StoreError(
            f"shard {shard} has store format {version.decode()!r}, this distrl reads "
            f"{STORE_FORMAT_VERSION!r}; upgrade distrl or convert the store"
        )
    missing = [name for name in TRAJECTORY_SCHEMA.names if name not in schema.names]
    if missing:
        raise StoreError(f"shard {shard} lacks the store columns {missing}")


def _read_shard_schema(shard: Path) -> pa.Schema:
    """The checked schema of ``shard``, from its footer only."""
    try:
        schema = pq.read_schema(shard)
    except _READ_ERRORS as exc:
        raise _unreadable(shard, exc) from exc
    _check_schema(schema, shard)
    return schema


def _read_shard(shard: Path, columns: list[str] | None = None) -> pa.Table:
    """The store columns of ``shard`` (or just ``columns``); closes the file before returning."""
    try:
        with pq.ParquetFile(shard) as parquet:
            _check_schema(parquet.schema_arrow, shard)
            return parquet.read(columns=columns or TRAJECTORY_SCHEMA.names)
    except _READ_ERRORS as exc:
        raise _unreadable(shard, exc) from exc


def _unreadable(shard: Path, exc: Exception) -> StoreError:
    """The error for a damaged shard (truncated by a full disk, overwritten, emptied): what arrow
    said, on one line, and the fix, since the rest of the store is still good."""
    reason = " ".join(str(exc).split()) or type(exc).__name__
    return StoreError(
        f"shard {shard} is not a readable Parquet file: {reason}; move it out of "
        f"{shard.parent} to use the rest of the store (its trajectories are lost)"
    )


def _fsync_folder(folder: Path) -> None:
    """Persist the rename itself (POSIX); best effort where folders cannot be opened."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
