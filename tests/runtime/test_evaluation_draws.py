"""Evaluation you can quote (issue 17 item 2): each evaluation of a run draws its own test tasks
from the run's seed stream (the same draw twice replays exactly), the starting and the final
policy are measured on the same draw (issue 19: a run's gain is the policy's, not two draws'),
and success rates carry their binomial standard error."""

from __future__ import annotations

from pathlib import Path

import pytest
from torch.utils.tensorboard import SummaryWriter

from distrl.config.loader import load_config
from distrl.envs.task_sets import load_tasks
from distrl.policies.small import SmallPolicy, SmallPolicyConfig
from distrl.runtime import evaluation
from distrl.runtime.evaluation import binomial_se, evaluate
from distrl.runtime.run_log import PAIRED_DRAW, TrainResult, record_eval


def _played(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Records, per evaluation, which task each episode played (a spy on the worker's output)."""
    played: list[list[str]] = []
    real = evaluation.Worker

    class Recording(real):  # type: ignore[misc, valid-type]
        def play(self, episodes: int):  # type: ignore[no-untyped-def]
            trajectories = super().play(episodes)
            played.append([t.task.task_id for t in trajectories])
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


def test_a_run_starts_and_ends_on_one_draw_and_curves_between_on_their_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The first and the final point play the same greedy episodes (final_eval_episodes of draw
    0), so a policy that did not change scores the same at both; the points between take draws
    1, 2, ... and face other tasks."""
    overrides = ["train.devices=2", "train.eval_episodes=4", "train.final_eval_episodes=8"]
    cfg = load_config("quick", overrides)
    tasks = load_tasks(cfg, "test")
    policy = SmallPolicy(SmallPolicyConfig())
    played = _played(monkeypatch)
    result = TrainResult(run_dir=tmp_path)
    with SummaryWriter(str(tmp_path / "tb")) as writer:
        for final in (False, False, False, True):
            record_eval(cfg, policy, tasks, 0.0, 0, result, writer, final=final)
    start, first_between, second_between, end = result.curve
    assert [p["draw"] for p in result.curve] == [PAIRED_DRAW, 1, 2, PAIRED_DRAW]
    assert start["episodes"] == end["episodes"] == 8 and first_between["episodes"] == 4
    assert end["final"] and "final" not in start
    # Greedy and sampled per point: the greedy episodes of the pair are one sample, replayed.
    greedy_start, greedy_between, greedy_end = played[0], played[2], played[6]
    assert greedy_start == greedy_end and start["success"] == end["success"]
    assert greedy_between != greedy_start[:4] and played[4] != greedy_between
    assert result.summary()["initial_success"] == result.summary()["final_success"]


def test_binomial_standard_error_by_hand() -> None:
    assert binomial_se(0.25, 48) == pytest.approx((0.25 * 0.75 / 48) ** 0.5)
    assert binomial_se(0.5, 320) == pytest.approx(0.02795, abs=1e-5)
    assert binomial_se(1.0, 10) == 0.0
    with pytest.raises(ValueError, match="at least one episode"):
        binomial_se(0.5, 0)
