"""Success replay: successes kept past the staleness bound, the capacity and per-family quota,
rarity-weighted draws, the exact share of a batch, behaviour log-probs, and a restore that
rebuilds the same store."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from distrl.algos.registry import build_algorithm
from distrl.config.schema import RunConfig
from distrl.core.trajectory import Trajectory
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.policies.small import SmallPolicy, SmallPolicyConfig
from distrl.runtime.collection_stats import RecentCollection, replay_stats
from distrl.runtime.replay_service import ReplayService
from distrl.runtime.success_replay import RARITY_FLOOR, SuccessStore
from distrl.runtime.worker import Worker


@pytest.fixture(scope="module")
def base() -> Trajectory:
    """One real episode of the small policy (behaviour log-probs recorded)."""
    tasks = load_suite("general", "train")
    worker = Worker([PhoneSimEnv(seed=0)], SmallPolicy(SmallPolicyConfig()), lambda: tasks[0])
    return worker.collect(1)[0]


def _episode(base: Trajectory, name: str, family: str, success: bool, version: int) -> Trajectory:
    """``base`` as an episode of ``family`` with the given outcome, acted by ``version``."""
    return replace(
        base,
        trajectory_id=name,
        task=replace(base.task, spec={"template": family}),
        success=success,
        steps=[replace(step, policy_version=version) for step in base.steps],
    )


def _kept(store: SuccessStore) -> dict[str, list[str]]:
    return {f: [k.trajectory_id for k in store.kept[f]] for f in store.families()}


def test_capacity_is_shared_out_so_rare_families_keep_their_successes(base: Trajectory) -> None:
    store = SuccessStore(capacity=4)

    def offer(name: str, family: str, success: bool = True) -> bool:
        return store.observe(_episode(base, name, family, success, 0), [object()])  # type: ignore[list-item]

    for i in range(1, 6):
        assert offer(f"a{i}", "a")
    assert _kept(store) == {"a": ["a2", "a3", "a4", "a5"]}  # one family: oldest out first
    assert not offer("b-fail", "b", success=False)  # failures only count in the success rate
    offer("b1", "b")
    offer("c1", "c")
    assert _kept(store) == {"a": ["a4", "a5"], "b": ["b1"], "c": ["c1"]}  # a held the most
    offer("b2", "b")  # a and b hold two each: a's oldest entered first and goes
    assert _kept(store) == {"a": ["a5"], "b": ["b1", "b2"], "c": ["c1"]}
    offer("a6", "a")  # a and b tie again: a5 entered before b1
    assert _kept(store) == {"a": ["a6"], "b": ["b1", "b2"], "c": ["c1"]}
    assert len(store) == 4 and store.figures()["success_tasks"] == 3
    # Draw weights: rarity over every episode seen (a: 6 of 6, b: 2 of 3, c: 1 of 1).
    assert store.rarity() == pytest.approx({"a": RARITY_FLOOR, "b": 1 / 3, "c": RARITY_FLOOR})


def test_families_are_drawn_by_rarity(base: Trajectory) -> None:
    store = SuccessStore(capacity=10)
    for i in range(10):  # common: 9 successes in 10 episodes; rare: 1 in 10
        store.observe(_episode(base, f"c{i}", "common", i > 0, 0), ["common"])  # type: ignore[list-item]
        store.observe(_episode(base, f"r{i}", "rare", i == 0, 0), ["rare"])  # type: ignore[list-item]
    assert _kept(store)["rare"] == ["r0"]  # the rare success survives nine common ones
    drawn = store.sample(20_000, np.random.default_rng(0))
    assert drawn.count("rare") / len(drawn) == pytest.approx(0.9 / (0.9 + 0.1), abs=0.01)
    assert store.sample(0, np.random.default_rng(0)) == []


def _replay(tmp_path: Path | None = None, **options: object) -> ReplayService:
    settings: dict = {"window": 4, "capacity": 1000, "max_staleness": 2, "keep_screenshots": False}
    settings |= {"min_replay": 1, "success_share": 0.25, "success_capacity": 50, **options}
    store = tmp_path / "trajectories" if tmp_path is not None else None
    return ReplayService(build_algorithm(RunConfig()), store_dir=store, **settings)


def test_successes_outlive_the_staleness_bound_and_fill_their_share(base: Trajectory) -> None:
    replay = _replay(demo_fraction=0.25)
    replay.add_demonstrations([_episode(base, "demo", "demo", True, 0)])
    old = [_episode(base, f"old{i}", "rare", i == 0, 0) for i in range(3)]
    replay.ingest(old)
    replay.ingest([_episode(base, "fresh", "common", False, 10)])
    for _ in range(5):
        batch = replay.sample(8, learner_version=10)  # version 0 is 10 updates stale
        assert batch is not None and len(batch.windows) == 8
        ids = [w.trajectory_id for w in batch.windows]
        # Exactly: 4 online (fresh only), 2 demonstration and 2 success-store windows.
        assert ids[:4] == ["fresh"] * 4 and ids[4:6] == ["demo"] * 2 and ids[6:] == ["old0"] * 2
        assert list(batch.slots[4:]) == [-1] * 4 and np.all(batch.weights[4:] == 1.0)
        for window in batch.windows[6:]:  # off-policy data: the behaviour that acted
            steps = base.steps[window.start : window.start + len(window)]
            assert window.behaviour_logprobs == tuple(s.behaviour_logprob for s in steps)
            assert set(window.policy_versions) == {0}
    assert replay.counters.success_windows_sampled == 10
    assert replay.counters.windows_sampled == 20
    stats = replay_stats(replay, RecentCollection())
    assert stats["success_stored"] == 1 and stats["success_tasks"] == 1
    assert stats["success_store_windows"] == -(-len(base) // 4)
    # Small batches keep one online window: 4 windows, 1 demonstration, 1 success.
    small = replay.sample(4, learner_version=10)
    assert small is not None
    assert [w.trajectory_id for w in small.windows][2:] == ["demo", "old0"]


def test_success_replay_off_changes_nothing(base: Trajectory) -> None:
    replay = _replay(success_share=0.0)
    replay.ingest([_episode(base, "win", "a", True, 0)])
    batch = replay.sample(8, learner_version=0)
    assert batch is not None and set(batch.slots.tolist()) != {-1}
    assert replay.successes is None and replay.success_figures() == {}
    assert replay.counters.success_windows_sampled == 0


def test_the_shares_must_leave_online_windows() -> None:
    with pytest.raises(ValueError, match="success_share"):
        _replay(demo_fraction=0.5, success_share=0.5)
    with pytest.raises(ValidationError, match="leaves no online windows"):
        RunConfig(train={"demo_fraction": 0.5}, success_replay={"share": 0.5})


def test_a_restore_rebuilds_the_same_store(tmp_path: Path, base: Trajectory) -> None:
    replay = _replay(tmp_path, success_capacity=3)
    families = ["a", "b", "a", "c", "a", "b", "a", "a"]
    episodes = [_episode(base, f"t{i}", family, i % 3 != 1, i) for i, family in enumerate(families)]
    for episode in episodes:
        replay.add([episode])
    # A buffer of 2 windows refills from the last trajectory only; the success store from all.
    restored = _replay(tmp_path, success_capacity=3, capacity=2)
    assert replay.store is not None
    restored.restore(replay.state_dict(), replay.store.load(), learner_version=7)
    assert replay.successes is not None and restored.successes is not None
    assert _kept(restored.successes) == _kept(replay.successes)
    assert restored.successes.seen == replay.successes.seen
