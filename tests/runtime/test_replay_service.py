"""The replay component: store before count, duplicate sends, late priorities, backpressure,
and a restore that agrees with the store."""

from __future__ import annotations

import pickle
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from distrl.algos.registry import build_algorithm
from distrl.algos.step_window import cut_windows
from distrl.config.schema import RunConfig
from distrl.core.trajectory import LEARNER_VERSION_KEY, Trajectory
from distrl.replay import EmptyReplayError
from distrl.runtime.replay_service import ReplayService
from distrl.store import TrajectoryStore


def _replay(tmp_path: Path | None, **kwargs: object) -> ReplayService:
    options: dict = {"window": 4, "capacity": 1000, "max_staleness": 50, "keep_screenshots": False}
    options.update(kwargs)
    store = tmp_path / "trajectories" if tmp_path is not None else None
    return ReplayService(build_algorithm(RunConfig()), store_dir=store, **options)


def test_trajectories_count_once_stored_and_a_resend_is_ignored(
    tmp_path: Path, episodes: list[Trajectory]
) -> None:
    replay = _replay(tmp_path, flush_seconds=3600.0)
    assert replay.add(episodes[:5]) == 5
    # Held until the flush: not stored, so not counted and not sampled.
    assert replay.counters.trajectories == 0 and len(replay) == 0
    assert replay.add(episodes[3:8]) == 3  # a retried send overlapping the first
    assert replay.flush() == 8
    store = TrajectoryStore(tmp_path / "trajectories")
    assert store.count() == replay.counters.trajectories == 8
    assert len(store.shard_paths()) == 1  # one shard per flush, not per send
    assert replay.add(episodes[:2]) == 0 and replay.flush() == 0
    assert replay.counters.duplicates == 4


def test_late_priorities_for_an_overwritten_slot_are_ignored(episodes: list[Trajectory]) -> None:
    replay = _replay(None, capacity=8, min_replay=1)
    replay.ingest(episodes[:4])
    batch = replay.sample(6, learner_version=0)
    assert batch is not None and len(batch.windows) == 6
    replay.ingest(episodes[4:12])  # the ring wraps: every sampled slot now holds a new window
    assert replay.update_priorities(batch.slots, batch.generations, np.full(6, 9.0)) == 0
    fresh = replay.sample(6, learner_version=0)
    assert fresh is not None
    assert replay.update_priorities(fresh.slots, fresh.generations, np.full(6, 9.0)) == 6


def test_demonstrations_fill_their_share_of_every_batch_without_priorities_or_counts(
    tmp_path: Path, episodes: list[Trajectory]
) -> None:
    replay = _replay(tmp_path, min_replay=1, demo_fraction=0.25, max_staleness=0)
    demonstrations, online = episodes[:3], episodes[3:8]
    kept = replay.add_demonstrations(demonstrations)
    assert kept == sum(-(-len(t) // 4) for t in demonstrations)  # windows of 4 steps
    assert len(replay) == 0 and replay.counters.trajectories == 0  # offline data: not collected
    replay.add(online)
    demo_ids = {t.trajectory_id for t in demonstrations}
    # At learner version 9 every online window is stale (max_staleness 0): the learner waits for
    # fresh data rather than train on demonstrations alone; with fresh data the share holds again.
    assert replay.sample(8, learner_version=9) is None
    replay.add(_acted_by(episodes[8:10], version=9))
    for version in (9, 9):
        batch = replay.sample(8, learner_version=version)
        assert batch is not None
        from_demos = [w.trajectory_id in demo_ids for w in batch.windows]
        assert sum(from_demos) == 2  # round(8 * 0.25)
        assert list(batch.slots[np.array(from_demos)]) == [-1, -1]
        assert np.all(batch.weights[np.array(from_demos)] == 1.0)
        # Priorities go to the online windows only.
        assert (
            replay.update_priorities(batch.slots, batch.generations, np.ones(len(batch.windows)))
            == len(batch.windows) - 2
        )
    assert TrajectoryStore(tmp_path / "trajectories").count() == len(online) + 2
    with pytest.raises(ValueError, match="demo_fraction"):
        _replay(None, demo_fraction=1.0)


def _acted_by(
    trajectories: list[Trajectory], version: int, success: bool | None = None
) -> list[Trajectory]:
    """Copies of ``trajectories`` acted by ``version`` (new ids; optionally a new outcome)."""
    return [
        replace(
            t,
            trajectory_id=f"{t.trajectory_id}-v{version}",
            steps=[replace(step, policy_version=version) for step in t.steps],
            success=t.success if success is None else success,
        )
        for t in trajectories
    ]


@pytest.mark.parametrize(
    ("algo", "prioritized"),
    [("aride", True), ("aride", False), ("digirl", False), ("fbc", False)],
    ids=["aride-dper", "aride-uniform", "digirl", "filtered-bc"],
)
def test_stale_windows_leave_every_sampler_and_batches_are_fresh_or_none(
    episodes: list[Trajectory], algo: str, prioritized: bool
) -> None:
    cfg = RunConfig()
    cfg.train.algo, cfg.aride.prioritized = algo, prioritized
    replay = ReplayService(
        build_algorithm(cfg), window=4, capacity=1000, max_staleness=5, keep_screenshots=False,
        min_replay=1,
    )  # fmt: skip
    old = _acted_by(episodes[:6], version=0, success=True)  # filtered BC admits successes only
    replay.ingest(old)
    old_windows = len(replay)
    assert old_windows > 0 and replay.sample(16, learner_version=5) is not None  # 5 is fresh
    # The learner moves to version 6: every window acted by version 0 is now stale. Nothing is
    # left to draw, so the learner waits instead of training on stale data.
    assert replay.sample(16, learner_version=6) is None
    assert len(replay) == 0 and replay.counters.stale_dropped == old_windows
    fresh = _acted_by(episodes[6:12], version=4, success=True)
    replay.ingest(fresh)
    fresh_ids = {t.trajectory_id for t in fresh}
    for version in (6, 7, 8, 9):
        batch = replay.sample(16, learner_version=version)
        assert batch is not None and len(batch.windows) == 16
        assert {w.trajectory_id for w in batch.windows} <= fresh_ids
        assert all(version - min(w.policy_versions) <= 5 for w in batch.windows)
    # At version 10 the version-4 windows are stale too; the sampler itself holds none of them.
    assert replay.sample(16, learner_version=10) is None
    assert len(replay.buffer.storage) == 0
    with pytest.raises(EmptyReplayError):
        replay.buffer.sampler.sample(1, np.random.default_rng(0))
    # A late priority for a withdrawn window changes nothing.
    assert replay.update_priorities(batch.slots, batch.generations, np.ones(16)) == 0


def test_backpressure_holds_inserts_to_a_ratio_of_samples(episodes: list[Trajectory]) -> None:
    replay = _replay(None, min_replay=4, max_inserts_per_sample=1.0)
    replay.ingest(episodes)
    windows = replay.counters.windows_added
    assert windows > 8 and not replay.can_accept()  # far ahead of a learner that drew nothing
    for _ in range(windows // 4):
        replay.sample(4, learner_version=0)
    assert replay.can_accept()


def test_backpressure_counts_trajectories_waiting_for_their_flush(
    tmp_path: Path, episodes: list[Trajectory]
) -> None:
    # Held for an hour: without counting what waits for the flush, the replay would say "yes"
    # to a fast collector for the whole period (an async run overshot its budget so on CI).
    replay = _replay(tmp_path, flush_seconds=3600.0, min_replay=4, max_inserts_per_sample=1.0)
    replay.add(episodes)
    assert replay.counters.windows_added == 0 and not replay.can_accept()
    replay.flush()
    assert replay.counters.windows_added > 4 and not replay.can_accept()


def test_learner_waits_once_it_has_drawn_its_ratio_of_the_data(episodes: list[Trajectory]) -> None:
    replay = _replay(None, min_replay=4, max_samples_per_insert=2.0)
    replay.ingest(episodes[:6])
    allowed = 2 * replay.counters.windows_added
    drawn = 0
    while (batch := replay.sample(4, learner_version=0)) is not None:
        drawn += len(batch.windows)
    # It stops at the first request past 2 draws per inserted window (a batch may cross it).
    assert allowed <= drawn < allowed + 4
    assert replay.counters.learner_waits == 1
    replay.ingest(episodes[6:8])  # new data lets it go on
    assert replay.sample(4, learner_version=0) is not None


def test_only_async_runs_rate_limit_the_learner() -> None:
    from distrl.runtime.components import build_replay

    cfg = RunConfig()
    cfg.train.runtime, cfg.train.mode = "ray", "async"
    assert build_replay(cfg, False, None).max_samples_per_insert == cfg.train.max_samples_per_insert
    cfg.train.mode = "sync"  # a sync round gets every update it asks for
    assert build_replay(cfg, False, None).max_samples_per_insert is None
    cfg.train.runtime = "serial"
    assert build_replay(cfg, False, None).max_samples_per_insert is None


def test_restore_rebuilds_from_the_store_and_counts_what_it_holds(
    tmp_path: Path, episodes: list[Trajectory]
) -> None:
    replay = _replay(tmp_path)
    replay.add(episodes[:6])
    state = replay.state_dict()  # a checkpoint after 6 ...
    replay.add(episodes[6:9])  # ... then 3 more stored before the crash
    restored = _replay(tmp_path)
    stored = TrajectoryStore(tmp_path / "trajectories").load()
    restored.restore(state, stored, learner_version=0)
    assert restored.counters.trajectories == 9 == len(stored)
    assert len(restored) == len(replay)
    assert restored.add(episodes[:9]) == 0  # already stored: never stored twice


def test_stored_trajectories_carry_the_learner_version_they_arrived_at(
    tmp_path: Path, episodes: list[Trajectory]
) -> None:
    replay = _replay(tmp_path)
    replay.add(episodes[:2])
    replay.sample(4, learner_version=7)  # the learner has moved on to version 7
    replay.add(episodes[2:4])
    stored = {t.trajectory_id: t for t in TrajectoryStore(tmp_path / "trajectories").load()}
    versions = [stored[t.trajectory_id].metadata[LEARNER_VERSION_KEY] for t in episodes[:4]]
    assert versions == ["0", "0", "7", "7"]
    assert LEARNER_VERSION_KEY not in episodes[0].metadata  # the sender's copy is untouched


def test_windows_hold_one_object_per_distinct_element_and_read_the_same(
    episodes: list[Trajectory],
) -> None:
    """The replay shares equal UI elements across its windows (a copy arrives with every
    trajectory); what a window says is unchanged."""
    # Each episode as a worker's send delivers it: its own copies of every element.
    arrived = [pickle.loads(pickle.dumps(t)) for t in episodes]
    replay = _replay(None)
    replay.ingest(arrived)
    held = [replay.buffer.storage[slot] for slot in replay.buffer.storage.slots()]
    elements = [e for w in held for o in w.observations for e in o.elements]
    assert len({id(e) for e in elements}) == len(set(elements)) < len(elements)
    shaping = replay.algorithm.shaping
    plain = [w for t in episodes for w in cut_windows(t, 4, shaping, keep_screenshots=False)]
    assert [w.observations for w in held] == [w.observations for w in plain]
