"""play: episodes reach the store in batches, count only once stored, and an interrupted run
keeps every episode it counted."""

from __future__ import annotations

from pathlib import Path

import pytest

from distrl.config.schema import RunConfig
from distrl.core.trajectory import Trajectory
from distrl.runtime.play import play
from distrl.store import TrajectoryStore


def _config(tmp_path: Path, episodes: int) -> RunConfig:
    cfg = RunConfig()
    cfg.play.policy, cfg.play.episodes = "random", episodes
    cfg.run_root, cfg.run_name = str(tmp_path), "play"
    return cfg


def test_episodes_are_stored_in_few_shards_and_all_counted(tmp_path: Path) -> None:
    result = play(_config(tmp_path, 40))
    store = TrajectoryStore(result.run_dir / "trajectories")
    assert result.episodes == store.count() == 40
    assert len(store.shard_paths()) == 1  # 40 episodes in appends of 16, 16 and 8: one shard


def test_an_interrupted_play_keeps_every_episode_it_handed_on(tmp_path: Path) -> None:
    seen: list[Trajectory] = []

    def stop_after_twenty(trajectory: Trajectory) -> None:
        seen.append(trajectory)
        if len(seen) == 20:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        play(_config(tmp_path, 40), on_episode=stop_after_twenty)
    stored = TrajectoryStore(tmp_path / "play" / "trajectories").trajectory_ids()
    # Handed on only once stored; the batch being handed on when the stop came is stored whole.
    assert {t.trajectory_id for t in seen} <= set(stored)
    assert len(stored) == 32
