"""Tests for the Parquet trajectory store (``distrl.store.parquet_store``).

What matters: a stored trajectory comes back exactly (pixels, NaNs, Unicode, element lists,
action histories), every append is one atomic shard, the files are plain Parquet for pandas and
pyarrow, and a broken folder fails with a message that names the file.
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from distrl.core import Action, Observation, Step, Task, Trajectory, UIElement
from distrl.core.screenshot import PNGScreenshot
from distrl.store import TRAJECTORY_SCHEMA, StoreError, TrajectoryStore, parquet_store

# -- builders --------------------------------------------------------------------------------------

RNG_SEED = 1234


def screenshot(rng: np.random.Generator, height: int = 12, width: int = 8) -> np.ndarray:
    """Random pixels, so a single wrong byte anywhere in the PNG round trip shows up."""
    return rng.integers(0, 256, size=(height, width, 3), dtype=np.uint8)


ELEMENTS = (
    UIElement("Wi-Fi", (0.0, 0.1, 1.0, 0.2), True, "com.android.settings:id/wifi", "switch", True),
    UIElement("Bluetooth", (0.0, 0.2, 1.0, 0.3), True, "id/bt", "switch", False, focused=True),
    UIElement('Привет, 世界 👋 "quoted" \\ back', (0.05, 0.3, 0.95, 0.4), False, "", "text"),
)

TYPED = 'héllo "world" \\ back\nslash ;&|$() `ls` 😀👨‍👩‍👧 中文'


def make_trajectory(
    rng: np.random.Generator,
    trajectory_id: str = "traj-a",
    *,
    final: bool = True,
) -> Trajectory:
    """A trajectory that exercises every field: all action kinds, NaN and finite log-probs,
    Unicode text, element lists, a final observation and non-default trajectory fields."""
    task = Task(
        task_id="general-0007",
        instruction="Turn on Wi-Fi, then search for 'café' ☕",
        suite="general",
        split="test",
        backend="phonesim",
        spec={"template": "toggle", "params": {"setting": "wifi", "on": True}, "seeds": [1, 2]},
        horizon=7,
    )
    actions = [
        Action.tap(0.15, 0.5),
        Action.swipe((0.8, 0.5), (0.2, 0.5)),
        Action.type_text(TYPED),
        Action.invalid('model said "tap it" without coordinates'),
        Action.press_enter(),
        Action.complete(),
    ]
    steps = []
    for index, action in enumerate(actions):
        observation = Observation(
            screenshot=screenshot(rng, 12 + index, 8 + 2 * index),
            instruction=task.instruction,
            elements=ELEMENTS[: index % 4],
            previous_actions=tuple(actions[:index]),
        )
        steps.append(
            Step(
                observation=observation,
                action=action,
                reward=1.0 if index == len(actions) - 1 else -0.01 * index,
                done=index == len(actions) - 1,
                behaviour_logprob=float("nan") if index % 2 else -1.25 * index,
                entropy=float("nan") if index == 3 else 0.5 + index,
                policy_version=100 + index,
                action_text=f"Action Plan: step {index} — ok\nAction Decision: ...",
                step_seconds=0.125 * index,
            )
        )
    final_observation = (
        Observation(screenshot(rng, 5, 9), task.instruction, ELEMENTS, tuple(actions))
        if final
        else None
    )
    return Trajectory(
        task=task,
        steps=steps,
        success=True,
        worker_id="worker-3",
        device_id="emulator-5554",
        trajectory_id=trajectory_id,
        started_at=1_700_000_000.123456,
        finished_at=1_700_000_042.654321,
        final_observation=final_observation,
        metadata={"host": "node-1", "note": "ünïcode ✓"},
    )


def small_trajectory(rng: np.random.Generator, trajectory_id: str = "") -> Trajectory:
    task = Task("t-1", "Go home", "general", "train")
    observation = Observation(screenshot(rng, 4, 4), task.instruction)
    step = Step(observation, Action.press_home(), reward=1.0, done=True)
    return Trajectory(task, [step], success=True, trajectory_id=trajectory_id)


# -- comparison ------------------------------------------------------------------------------------


def same_float(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def assert_same_observation(expected: Observation | None, actual: Observation | None) -> None:
    if expected is None:
        assert actual is None
        return
    assert actual is not None
    assert actual.screenshot.dtype == np.uint8
    assert actual.screenshot.shape == expected.screenshot.shape
    assert np.array_equal(actual.screenshot, expected.screenshot), "pixels differ"
    assert actual.instruction == expected.instruction
    assert actual.elements == expected.elements
    assert actual.previous_actions == expected.previous_actions


def assert_same_trajectory(
    expected: Trajectory, actual: Trajectory, *, same_id: bool = True
) -> None:
    assert actual.task == expected.task
    assert actual.success == expected.success
    assert actual.worker_id == expected.worker_id
    assert actual.device_id == expected.device_id
    if same_id:
        assert actual.trajectory_id == expected.trajectory_id
    assert actual.started_at == expected.started_at
    assert actual.finished_at == expected.finished_at
    assert actual.metadata == expected.metadata
    assert_same_observation(expected.final_observation, actual.final_observation)
    assert len(actual.steps) == len(expected.steps)
    for want, got in zip(expected.steps, actual.steps, strict=True):
        assert_same_observation(want.observation, got.observation)
        assert got.action == want.action
        assert same_float(got.reward, want.reward)
        assert got.done == want.done
        assert same_float(got.behaviour_logprob, want.behaviour_logprob)
        assert same_float(got.entropy, want.entropy)
        assert got.policy_version == want.policy_version
        assert got.action_text == want.action_text
        assert same_float(got.step_seconds, want.step_seconds)


# -- round trip ------------------------------------------------------------------------------------


def test_round_trip_is_exact(tmp_path: Path) -> None:
    rng = np.random.default_rng(RNG_SEED)
    rich = make_trajectory(rng, "traj-a")
    without_final = make_trajectory(rng, "traj-b", final=False)
    task = Task("t-empty", "Nothing happens", "general", "train")
    empty = Trajectory(task, [], success=False, trajectory_id="traj-empty")
    empty_with_final = Trajectory(
        task,
        [],
        success=False,
        trajectory_id="traj-empty-final",
        final_observation=Observation(screenshot(rng, 3, 3), "Nothing happens"),
    )
    store = TrajectoryStore(tmp_path)

    rows = store.append([rich, without_final, empty, empty_with_final])

    # 6 step rows + 1 final row, 6 step rows, 1 "empty" row, 1 "final" row.
    assert rows == 7 + 6 + 1 + 1
    loaded = store.load()
    assert [t.trajectory_id for t in loaded] == [
        "traj-a",
        "traj-b",
        "traj-empty",
        "traj-empty-final",
    ]
    originals = [rich, without_final, empty, empty_with_final]
    for expected, actual in zip(originals, loaded, strict=True):
        assert_same_trajectory(expected, actual)


def test_loaded_values_have_the_dataclass_types(tmp_path: Path) -> None:
    store = TrajectoryStore(tmp_path)
    store.append([make_trajectory(np.random.default_rng(RNG_SEED))])
    step = store.load()[0].steps[0]
    assert isinstance(step.reward, float)
    assert isinstance(step.policy_version, int)
    assert isinstance(step.done, bool)
    assert isinstance(step.observation.elements, tuple)
    assert isinstance(step.observation.previous_actions, tuple)
    assert step.observation.screenshot.flags.writeable


def test_history_that_is_not_the_step_prefix_is_kept(tmp_path: Path) -> None:
    # A backend may keep only the last k actions; the store must not "repair" that on load.
    rng = np.random.default_rng(RNG_SEED)
    trajectory = make_trajectory(rng)
    last = trajectory.steps[-1]
    truncated = Observation(
        last.observation.screenshot,
        last.observation.instruction,
        last.observation.elements,
        last.observation.previous_actions[-2:],
    )
    trajectory.steps[-1] = Step(truncated, last.action, last.reward, last.done)
    store = TrajectoryStore(tmp_path)
    store.append([trajectory])

    table = store.to_table()
    explicit = table.column("previous_actions_json").to_pylist()
    assert sum(value is not None for value in explicit) == 1, "only the odd row stores a history"
    assert_same_trajectory(trajectory, store.load()[0])


def test_empty_id_gets_a_fresh_uuid_without_touching_the_caller(tmp_path: Path) -> None:
    rng = np.random.default_rng(RNG_SEED)
    first, second = small_trajectory(rng), small_trajectory(rng)
    store = TrajectoryStore(tmp_path)
    store.append([first, second])

    assert first.trajectory_id == "" and second.trajectory_id == ""
    ids = store.trajectory_ids()
    assert len(ids) == 2 and ids[0] != ids[1]
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)
    loaded = store.load()
    assert [t.trajectory_id for t in loaded] == ids
    assert_same_trajectory(first, loaded[0], same_id=False)


def test_duplicate_ids_are_rejected(tmp_path: Path) -> None:
    rng = np.random.default_rng(RNG_SEED)
    store = TrajectoryStore(tmp_path)
    store.append([small_trajectory(rng, "dup")])

    with pytest.raises(StoreError, match="'dup' is already in the store"):
        store.append([small_trajectory(rng, "dup")])
    with pytest.raises(StoreError, match="'other' is already in the store"):
        store.append([small_trajectory(rng, "other"), small_trajectory(rng, "other")])
    assert len(store.shard_paths()) == 1
    assert store.count() == 1


# -- shards ----------------------------------------------------------------------------------------


def test_appends_fill_the_open_shard_then_rotate(tmp_path: Path) -> None:
    rng = np.random.default_rng(RNG_SEED)
    store = TrajectoryStore(tmp_path / "nested" / "store", shard_max_trajectories=3)
    assert store.count() == 0 and store.load() == [] and store.trajectory_ids() == []

    assert store.append([small_trajectory(rng, "a"), small_trajectory(rng, "b")]) == 2
    assert store.append([small_trajectory(rng, "c")]) == 1  # fills shard 0 to its 3
    assert store.append([make_trajectory(rng, "d")]) == 7  # shard 0 is full: a new one
    assert store.append([]) == 0  # nothing to write: no empty shard

    names = sorted(p.name for p in (tmp_path / "nested" / "store").iterdir())
    assert names == ["shard-000000.parquet", "shard-000001.parquet"]
    assert store.shard_paths() == [store.root / name for name in names]
    assert store.count() == 4
    assert store.trajectory_ids() == ["a", "b", "c", "d"]
    # A second handle on the same folder sees the same data and appends to the open shard ...
    other = TrajectoryStore(store.root, shard_max_trajectories=3)
    assert other.trajectory_ids() == ["a", "b", "c", "d"]
    other.append([small_trajectory(rng, "e")])
    # ... which the first handle then reads afresh rather than from what it wrote itself.
    store.append([small_trajectory(rng, "f"), small_trajectory(rng, "g")])
    assert [p.name for p in store.shard_paths()] == names
    assert store.count() == 7 and store.trajectory_ids() == list("abcdefg")
    assert [t.trajectory_id for t in TrajectoryStore(store.root).load()] == list("abcdefg")
    # An append is never split: shard 1 took "f" and "g" together, past its limit of 3.
    assert [pq.read_metadata(p).num_rows for p in store.shard_paths()] == [3, 7 + 3]


def test_a_shard_past_its_byte_limit_is_closed(tmp_path: Path) -> None:
    rng = np.random.default_rng(RNG_SEED)
    store = TrajectoryStore(tmp_path, shard_max_bytes=1)  # every shard is over the limit at once
    for name in "abc":
        store.append([small_trajectory(rng, name)])
    assert [p.name for p in store.shard_paths()] == [f"shard-00000{i}.parquet" for i in range(3)]
    # A store written one shard per append (as before rotation) loads, and appends rotate on.
    relaxed = TrajectoryStore(tmp_path)
    relaxed.append([small_trajectory(rng, "d")])
    assert len(relaxed.shard_paths()) == 3 and relaxed.trajectory_ids() == list("abcd")
    with pytest.raises(ValueError, match="must be >= 1"):
        TrajectoryStore(tmp_path, shard_max_trajectories=0)


def test_load_limit_and_iteration_keep_append_order(tmp_path: Path) -> None:
    rng = np.random.default_rng(RNG_SEED)
    store = TrajectoryStore(tmp_path)
    store.append([small_trajectory(rng, "a"), small_trajectory(rng, "b")])
    store.append([small_trajectory(rng, "c")])

    assert [t.trajectory_id for t in store.load(limit=2)] == ["a", "b"]
    assert [t.trajectory_id for t in store.load(limit=0)] == []
    assert [t.trajectory_id for t in store.load(limit=10)] == ["a", "b", "c"]
    assert [t.trajectory_id for t in store.iter_trajectories()] == ["a", "b", "c"]
    with pytest.raises(ValueError, match="limit"):
        store.load(limit=-1)


def test_task_outcomes_read_each_trajectory_once_across_shards(tmp_path: Path) -> None:
    rng = np.random.default_rng(RNG_SEED)
    # A many-row trajectory (steps and a final row), a one-step one and an empty one, each
    # in its own shard.
    failed = replace(small_trajectory(rng, "c"), steps=[], success=False)
    written = [make_trajectory(rng, "a"), small_trajectory(rng, "b"), failed]
    store = TrajectoryStore(tmp_path, shard_max_trajectories=1)
    store.append(written[:2])
    store.append(written[2:])
    assert len(store.shard_paths()) == 2
    assert store.task_outcomes() == [(t.task, t.success) for t in written]


def test_failed_write_leaves_no_shard_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(RNG_SEED)
    store = TrajectoryStore(tmp_path)
    store.append([small_trajectory(rng, "kept")])

    def crash_half_way(table: pa.Table, where: object, **kwargs: object) -> None:
        where.write(b"PAR1 half a shard")  # type: ignore[attr-defined]
        raise OSError("disk full")

    monkeypatch.setattr(parquet_store.pq, "write_table", crash_half_way)
    with pytest.raises(OSError, match="disk full"):
        store.append([small_trajectory(rng, "lost")])

    assert [p.name for p in tmp_path.iterdir()] == ["shard-000000.parquet"]
    assert store.trajectory_ids() == ["kept"]


def test_leftover_temp_files_are_ignored(tmp_path: Path) -> None:
    rng = np.random.default_rng(RNG_SEED)
    store = TrajectoryStore(tmp_path, shard_max_trajectories=1)
    store.append([small_trajectory(rng, "a")])
    # What a crash between "write temp" and "rename" leaves behind, plus unrelated files.
    (tmp_path / ".shard-000001.parquet.tmp-0123abcd").write_bytes(b"PAR1 truncated")
    (tmp_path / "shard-000001.parquet.partial").write_bytes(b"junk")
    (tmp_path / "README.txt").write_text("not a shard")

    assert store.count() == 1
    assert [t.trajectory_id for t in store.load()] == ["a"]
    store.append([small_trajectory(rng, "b")])
    assert (tmp_path / "shard-000001.parquet").is_file()
    assert store.trajectory_ids() == ["a", "b"]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_corrupt_shard_raises_a_clear_error(tmp_path: Path, damage: str) -> None:
    rng = np.random.default_rng(RNG_SEED)
    store = TrajectoryStore(tmp_path, shard_max_trajectories=1)
    store.append([small_trajectory(rng, "a")])
    store.append([small_trajectory(rng, "b")])
    shard = tmp_path / "shard-000001.parquet"
    data = shard.read_bytes()
    damaged = {"garbage": b"this is not parquet", "truncated": data[: len(data) // 2], "empty": b""}
    shard.write_bytes(damaged[damage])

    message = r"shard .*shard-000001\.parquet is not a readable Parquet file: "
    with pytest.raises(StoreError, match=message):
        store.load()
    with pytest.raises(StoreError, match=message):
        store.count()
    with pytest.raises(StoreError, match=message):
        store.to_table()
    with pytest.raises(StoreError, match=message):
        store.append([small_trajectory(rng, "c")])


def test_foreign_parquet_file_is_refused(tmp_path: Path) -> None:
    pq.write_table(pa.table({"x": [1, 2, 3]}), tmp_path / "shard-000000.parquet")
    with pytest.raises(StoreError, match="not written by TrajectoryStore"):
        TrajectoryStore(tmp_path).load()


def test_root_that_is_a_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "store"
    path.write_text("")
    with pytest.raises(StoreError, match="is not a folder"):
        TrajectoryStore(path)


# -- what is written -------------------------------------------------------------------------------


def test_files_are_plain_parquet_for_pyarrow_and_pandas(tmp_path: Path) -> None:
    rng = np.random.default_rng(RNG_SEED)
    trajectory = make_trajectory(rng, "a")
    store = TrajectoryStore(tmp_path)
    store.append([trajectory])
    store.append([small_trajectory(rng, "b")])
    # A temp file in the folder must not disturb generic readers either (they skip dot files).
    (tmp_path / ".shard-000002.parquet.tmp-dead").write_bytes(b"junk")

    table = pq.read_table(tmp_path)
    assert table.num_rows == 7 + 1
    assert set(TRAJECTORY_SCHEMA.names) <= set(table.column_names)

    frame = pd.read_parquet(tmp_path)
    steps = frame[frame.row_kind == "step"].sort_values(["trajectory_id", "step_index"])
    assert list(steps.trajectory_id) == ["a"] * 6 + ["b"]
    first = steps.iloc[0]
    assert first.action_type == "DUAL_POINT"
    assert (first.touch_y, first.touch_x) == (0.15, 0.5)
    png = Image.open(io.BytesIO(first.screenshot_png))
    assert np.array_equal(np.asarray(png), trajectory.steps[0].observation.screenshot)
    assert steps.iloc[2].typed_text == TYPED
    assert math.isnan(steps.iloc[1].behaviour_logprob)

    store_table = store.to_table()
    assert store_table.schema.equals(TRAJECTORY_SCHEMA)
    assert store_table.num_rows == 8
    assert store_table.to_pandas().shape == (8, len(TRAJECTORY_SCHEMA.names))


def test_to_table_of_an_empty_store_has_the_schema(tmp_path: Path) -> None:
    table = TrajectoryStore(tmp_path).to_table()
    assert table.num_rows == 0
    assert table.schema.equals(TRAJECTORY_SCHEMA)


def test_save_screenshots_false_stores_shapes_only(tmp_path: Path) -> None:
    trajectory = make_trajectory(np.random.default_rng(RNG_SEED))
    with_screens = TrajectoryStore(tmp_path / "with")
    without_screens = TrajectoryStore(tmp_path / "without", save_screenshots=False)
    with_screens.append([trajectory])
    without_screens.append([trajectory])

    assert without_screens.to_table().column("screenshot_png").null_count == 7
    loaded = without_screens.load()[0]
    for want, got in zip(trajectory.steps, loaded.steps, strict=True):
        assert got.observation.screenshot.shape == want.observation.screenshot.shape
        assert not got.observation.screenshot.any()
        assert got.observation.elements == want.observation.elements
        assert got.action == want.action
    assert loaded.final_observation is not None
    assert loaded.final_observation.screenshot.shape == (5, 9, 3)
    size = lambda store: sum(p.stat().st_size for p in store.shard_paths())  # noqa: E731
    assert size(without_screens) < size(with_screens)


def test_numpy_scalars_are_stored_as_plain_values(tmp_path: Path) -> None:
    # Backends compute boxes and rewards with numpy; np.float32 is not JSON-serialisable.
    box = tuple(np.float32(v) for v in (0.0, 0.25, 0.5, 0.75))
    element = UIElement("OK", box, np.bool_(True), "id/ok", focused=np.bool_(False))
    observation = Observation(np.zeros((2, 2, 3), dtype=np.uint8), "x", (element,))
    step = Step(observation, Action.complete(), np.float32(1.0), np.bool_(True), np.float64(-0.5))
    trajectory = Trajectory(Task("t", "x", "s", "train"), [step], True, trajectory_id="np")
    store = TrajectoryStore(tmp_path)
    store.append([trajectory])
    assert_same_trajectory(trajectory, store.load()[0])


def test_zero_pixel_screenshot_round_trips(tmp_path: Path) -> None:
    task = Task("t", "text only", "s", "train")
    observation = Observation(np.zeros((0, 0, 3), dtype=np.uint8), "text only")
    trajectory = Trajectory(
        task, [Step(observation, Action.complete(), 1.0, True)], True, "w", "d", "z"
    )
    store = TrajectoryStore(tmp_path)
    store.append([trajectory])
    assert_same_trajectory(trajectory, store.load()[0])


@pytest.mark.parametrize(
    "bad",
    [
        np.zeros((4, 4), dtype=np.uint8),
        np.zeros((4, 4, 4), dtype=np.uint8),
        np.zeros((4, 4, 3), dtype=np.float32),
    ],
)
def test_bad_screenshots_are_refused_by_name(tmp_path: Path, bad: np.ndarray) -> None:
    task = Task("t", "x", "s", "train")
    good = Observation(np.zeros((2, 2, 3), dtype=np.uint8), "x")
    steps = [
        Step(good, Action.press_back(), 0.0, False),
        Step(Observation(bad, "x"), Action.complete(), 1.0, True),
    ]
    store = TrajectoryStore(tmp_path)
    with pytest.raises(
        StoreError, match=r"trajectory 'bad-shot' step 1: screenshot must be an HxWx3 uint8"
    ):
        store.append([Trajectory(task, steps, True, trajectory_id="bad-shot")])
    assert store.shard_paths() == []


def test_non_json_task_spec_is_refused(tmp_path: Path) -> None:
    task = Task("t", "x", "s", "train", spec={"when": object()})
    trajectory = Trajectory(task, [], False, trajectory_id="odd-spec")
    with pytest.raises(StoreError, match="'odd-spec': task spec and metadata must be JSON"):
        TrajectoryStore(tmp_path).append([trajectory])


def test_png_encoded_screenshots_are_stored_as_they_are(tmp_path: Path) -> None:
    """Screenshots bounded at the device (PNGScreenshot) go into the PNG column byte for byte
    and load as the same pixels; a store appended to before (raw arrays) and after loads whole."""
    rng = np.random.default_rng(RNG_SEED)
    raw = make_trajectory(rng, "traj-raw")  # as a store written before bounded screenshots
    encoded = raw.with_observations(
        lambda o: replace(o, screenshot=PNGScreenshot.encode(o.screenshot))
    )
    encoded = replace(encoded, trajectory_id="traj-png")
    store = TrajectoryStore(tmp_path)
    store.append([raw])
    store.append([encoded])

    table = store.to_table().to_pylist()
    png_rows = [r for r in table if r["trajectory_id"] == "traj-png"]
    observations = [s.observation for s in encoded.steps]
    assert encoded.final_observation is not None
    observations.append(encoded.final_observation)
    assert [r["screenshot_png"] for r in png_rows] == [o.screenshot.png for o in observations]
    loaded_raw, loaded_png = store.load()
    assert_same_trajectory(raw, loaded_raw)
    for expected, actual in zip(raw.steps, loaded_png.steps, strict=True):
        assert_same_observation(expected.observation, actual.observation)
