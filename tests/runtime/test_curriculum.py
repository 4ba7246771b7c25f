"""The task curriculum: learning-progress weights against a hand computation, the sampler's
weighted draws, determinism, and its state through a checkpoint."""

from __future__ import annotations

import numpy as np
import pytest

from distrl.config.schema import CurriculumConfig
from distrl.core.task import Task
from distrl.runtime.curriculum import TaskCurriculum, family_score
from distrl.runtime.task_sampler import TaskSampler

#: Outcome windows (oldest first) of five families, window 10.
HISTORIES = {
    "solved": [1] * 10,
    "hopeless": [0] * 10,
    "steady": [1, 1, 0, 0, 0, 0, 0, 0, 1, 1],  # p 0.4, halves 0.4 and 0.4
    "changing": [0] * 9 + [1],  # p 0.1, halves 0.0 and 0.2
    "new": [0, 1],  # fewer than min_episodes
}


def _curriculum(floor: float = 0.2, unsolved_score: float = 0.0) -> TaskCurriculum:
    cfg = CurriculumConfig(
        enabled=True, window=10, min_episodes=4, floor=floor, unsolved_score=unsolved_score
    )
    curriculum = TaskCurriculum(HISTORIES, cfg)
    for family, outcomes in HISTORIES.items():
        curriculum.record((family, bool(o)) for o in outcomes)
    return curriculum


def test_scores_by_hand() -> None:
    assert family_score(HISTORIES["solved"], 4) == 0.0
    assert family_score(HISTORIES["hopeless"], 4) == 0.0
    assert family_score(HISTORIES["steady"], 4) == pytest.approx(4 * 0.4 * 0.6)  # 0.96
    # Rare but improving: 4 p (1 - p) = 0.36 plus the change between halves, 0.2.
    assert family_score(HISTORIES["changing"], 4) == pytest.approx(0.36 + 0.2)
    assert family_score(HISTORIES["new"], 4) == 1.0  # explored first
    assert family_score([0, 0, 1, 1, 1], 4) == 1.0  # 0.96 + 0.5, capped at 1
    # An odd window's middle outcome belongs to neither half: [0 0] 1 [1 1].
    assert family_score([0, 0, 1, 1, 1], 4) == min(1.0, 4 * 0.6 * 0.4 + 1.0)


def test_probabilities_by_hand_with_the_floor() -> None:
    probabilities = _curriculum().probabilities()
    total = 0.96 + 0.56 + 1.0  # solved and hopeless score 0
    expected = {
        "solved": 0.2 / 5,
        "hopeless": 0.2 / 5,
        "steady": 0.2 / 5 + 0.8 * 0.96 / total,
        "changing": 0.2 / 5 + 0.8 * 0.56 / total,
        "new": 0.2 / 5 + 0.8 * 1.0 / total,
    }
    assert probabilities == pytest.approx(expected)
    assert sum(probabilities.values()) == pytest.approx(1.0)
    # floor 1: uniform over families whatever the history.
    assert _curriculum(floor=1.0).probabilities() == pytest.approx(dict.fromkeys(HISTORIES, 0.2))


def test_unsolved_families_keep_their_score_above_the_floor() -> None:
    # Only a window without a success takes unsolved_score; a new family still scores 1.
    assert family_score(HISTORIES["hopeless"], 4, unsolved_score=0.5) == 0.5
    assert family_score(HISTORIES["solved"], 4, unsolved_score=0.5) == 0.0
    assert family_score(HISTORIES["changing"], 4, unsolved_score=0.5) == pytest.approx(0.56)
    assert family_score([0, 0], 4, unsolved_score=0.5) == 1.0
    probabilities = _curriculum(unsolved_score=0.5).probabilities()
    total = 0.5 + 0.96 + 0.56 + 1.0
    assert probabilities["hopeless"] == pytest.approx(0.2 / 5 + 0.8 * 0.5 / total)
    assert probabilities["solved"] == pytest.approx(0.2 / 5)
    assert sum(probabilities.values()) == pytest.approx(1.0)


def test_every_family_solved_or_hopeless_draws_uniformly() -> None:
    cfg = CurriculumConfig(enabled=True, window=4, min_episodes=2)
    curriculum = TaskCurriculum(["a", "b"], cfg)
    curriculum.record([("a", True)] * 4 + [("b", False)] * 4 + [("elsewhere", True)])
    assert curriculum.probabilities() == {"a": 0.5, "b": 0.5}
    assert curriculum.success() == {"a": 1.0, "b": 0.0}


def test_the_window_slides_and_the_state_comes_back() -> None:
    curriculum = _curriculum()
    curriculum.record([("solved", False)] * 3)  # the three oldest successes leave the window
    assert curriculum.success()["solved"] == pytest.approx(0.7)
    state = curriculum.state_dict()
    assert state["solved"] == [1] * 7 + [0] * 3
    restored = TaskCurriculum(HISTORIES, curriculum.cfg)
    restored.load_state_dict({**state, "gone": [1, 1]})  # a family no longer trained: dropped
    assert restored.probabilities() == curriculum.probabilities()
    # "solved" now moves (halves 1.0 and 0.4): it scores 1 beside steady, changing and new.
    new_weight = 0.2 / 5 + 0.8 * 1.0 / (1.0 + 0.96 + 0.56 + 1.0)
    assert restored.table()["new"] == {
        "weight": round(new_weight, 4),
        "success": 0.5,
        "episodes": 2,
    }


def _tasks() -> list[Task]:
    """Three tasks of family a, one of family b."""
    return [
        Task(f"{family}-{i}", "do it", "general", "train", spec={"template": family})
        for family, count in (("a", 3), ("b", 1))
        for i in range(count)
    ]


def test_the_sampler_draws_families_by_weight_then_tasks_uniformly() -> None:
    sampler = TaskSampler(_tasks(), 7)
    sampler.set_family_weights({"a": 0.2, "b": 0.8, "unknown": 5.0})
    draws = [sampler().task_id for _ in range(20_000)]
    share_b = draws.count("b-0") / len(draws)
    assert share_b == pytest.approx(0.8, abs=0.015)
    for i in range(3):  # a's 0.2 split evenly over its three tasks
        assert draws.count(f"a-{i}") / len(draws) == pytest.approx(0.2 / 3, abs=0.01)


def test_sampler_draws_are_deterministic_and_none_restores_uniform_draws() -> None:
    def stream(weights: dict[str, float] | None) -> list[str]:
        sampler = TaskSampler(_tasks(), np.random.default_rng(3))
        sampler.set_family_weights(weights)
        return [sampler().task_id for _ in range(50)]

    assert stream({"a": 0.5, "b": 0.5}) == stream({"a": 0.5, "b": 0.5})
    plain = TaskSampler(_tasks(), np.random.default_rng(3))
    assert stream(None) == [plain().task_id for _ in range(50)]  # the unweighted stream
    assert stream({"a": 0.0, "b": 0.0}) == stream(None)


def test_the_board_hands_each_worker_newer_task_weights_once() -> None:
    from distrl.runtime.distributed.actors import WeightsBoard  # the plain class, no Ray

    board = WeightsBoard()
    assert board.poll_task_weights(0) == (0, None)  # nothing published: uniform draws
    board.publish_task_weights({"a": 0.25, "b": 0.75})
    assert board.poll_task_weights(0) == (1, {"a": 0.25, "b": 0.75})
    assert board.poll_task_weights(1) == (1, None)  # a worker that has them gets nothing
