"""Evaluation you can quote (issue 17 item 2): each evaluation of a run draws its own test tasks
from the run's seed stream (the same draw twice replays exactly), and success rates carry their
binomial standard error."""

from __future__ import annotations

import pytest

from distrl.config.loader import load_config
from distrl.envs.task_sets import load_tasks
from distrl.policies.small import SmallPolicy, SmallPolicyConfig
from distrl.runtime import evaluation
from distrl.runtime.evaluation import binomial_se, evaluate


def _played(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Records, per evaluation, which task each episode played (a spy on the worker's output)."""
    played: list[list[str]] = []
    real = evaluation.Worker

    class Recording(real):  # type: ignore[misc, valid-type]
        def collect(self, episodes: int):  # type: ignore[no-untyped-def]
            trajectories = super().collect(episodes)
            played.append([t.task.task_id for t in trajectories[:episodes]])
            return trajectories

    monkeypatch.setattr(evaluation, "Worker", Recording)
    return played


def test_each_evaluation_draws_its_own_tasks_and_a_draw_replays_exactly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cfg = load_config("quick", ["train.devices=2"])
    tasks = load_tasks(cfg, "test")
    policy = SmallPolicy(SmallPolicyConfig())
    played = _played(monkeypatch)
    first = evaluate(policy, cfg, tasks, 8, greedy=True, draw=0)
    again = evaluate(policy, cfg, tasks, 8, greedy=True, draw=0)
    evaluate(policy, cfg, tasks, 8, greedy=True, draw=1)
    assert played[0] == played[1] and first == again  # one draw, one sample of the test split
    assert played[0] != played[2]  # the next evaluation faces other tasks
    other_seed = load_config("quick", ["train.devices=2", "seed=1"])
    evaluate(policy, other_seed, tasks, 8, greedy=True, draw=0)
    assert played[3] != played[0]  # a per-seed stream
    assert first.success_se == pytest.approx(binomial_se(first.success_rate, 8))


def test_an_evaluation_keeps_the_episodes_it_scored_when_asked() -> None:
    """The episodes a failure study reads are the ones the evaluation scored; by default an
    evaluation keeps none (a run evaluates every few minutes)."""
    cfg = load_config("quick", ["train.devices=2"])
    tasks = load_tasks(cfg, "test")
    policy = SmallPolicy(SmallPolicyConfig())
    kept = evaluate(policy, cfg, tasks, 6, greedy=False, draw=3, keep_episodes=True)
    plain = evaluate(policy, cfg, tasks, 6, greedy=False, draw=3)
    assert plain == kept and plain.played == ()  # the same draw, scored alike
    assert len(kept.played) == kept.episodes == 6
    assert kept.success_rate == pytest.approx(sum(t.success for t in kept.played) / 6)
    assert kept.mean_steps == pytest.approx(sum(len(t) for t in kept.played) / 6)


def test_binomial_standard_error_by_hand() -> None:
    assert binomial_se(0.25, 48) == pytest.approx((0.25 * 0.75 / 48) ** 0.5)
    assert binomial_se(0.5, 320) == pytest.approx(0.02795, abs=1e-5)
    assert binomial_se(1.0, 10) == 0.0
    with pytest.raises(ValueError, match="at least one episode"):
        binomial_se(0.5, 0)
