"""The learning-rate schedule (``train.lr_schedule``, docs/design.md §7.16): the factor it hands
the learner over a run's budget, what the learner does with it, and both runtimes carrying it to
the optimiser and into the checkpoint."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from distrl.algos.registry import build_algorithm
from distrl.config.loader import ConfigError, load_config
from distrl.config.schema import RunConfig
from distrl.policies.small import SmallPolicy, SmallPolicyConfig
from distrl.runtime.checkpoint import load_checkpoint
from distrl.runtime.distributed.driver import train_ray
from distrl.runtime.learner import Learner
from distrl.runtime.lr_schedule import LearningRateSchedule
from distrl.runtime.replay_service import ReplayService
from distrl.runtime.serial import train
from distrl.viewer.curves import read_scalars

TinyRun = Callable[[Path, str, int], RunConfig]


def test_constant_is_always_one() -> None:
    schedule = LearningRateSchedule("constant")
    assert [schedule.scale(f, u, 10) for f, u in ((0.0, 0), (0.5, 5), (1.0, 10))] == [1.0] * 3
    assert schedule.last == 1.0


def test_linear_falls_from_the_budget_left_at_the_first_look_to_zero() -> None:
    schedule = LearningRateSchedule("linear")
    # A warm start spent 40% of the time budget before the loop's first look.
    assert schedule.scale(0.4, 0, None) == pytest.approx(1.0)
    assert schedule.scale(0.7, 50, None) == pytest.approx(0.5)
    assert schedule.scale(0.85, 80, None) == pytest.approx(0.25)
    assert schedule.last == pytest.approx(0.25)
    assert schedule.scale(1.0, 100, None) == 0.0
    assert schedule.scale(1.3, 120, None) == 0.0  # an overrun loop never goes below 0


def test_linear_follows_the_update_budget_when_it_runs_out_first() -> None:
    schedule = LearningRateSchedule("linear")
    assert schedule.scale(0.0, 0, 8) == pytest.approx(1.0)
    assert schedule.scale(0.1, 6, 8) == pytest.approx(0.25)  # time would allow 0.9
    assert schedule.scale(0.9, 6, 8) == pytest.approx(0.1 / 1.0)  # now time runs out first


def test_a_resumed_schedule_goes_on_from_its_scale_and_never_jumps_up() -> None:
    schedule = LearningRateSchedule("linear", start_scale=0.4)
    # The resumed command's budget restarts; the scale falls from 0.4 over what it has left.
    assert schedule.scale(0.0, 0, None) == pytest.approx(0.4)
    assert schedule.scale(0.5, 0, None) == pytest.approx(0.2)
    assert schedule.scale(1.0, 0, None) == 0.0
    with pytest.raises(ValueError, match="scale"):
        LearningRateSchedule("linear", start_scale=1.5)


def test_an_unknown_schedule_is_named_in_the_error() -> None:
    with pytest.raises(ConfigError, match="lr_schedule"):
        load_config(None, ["train.lr_schedule=cosine"])


def _learner(lr: float) -> Learner:
    torch.manual_seed(0)
    return Learner(
        SmallPolicy(SmallPolicyConfig()), build_algorithm(RunConfig()), lr=lr, grad_clip=1.0
    )


def test_the_learner_steps_at_its_rate_times_the_scale(episode_replay: ReplayService) -> None:
    batch = episode_replay.sample(8, 0)
    assert batch is not None
    halved, reference, frozen = _learner(1e-2), _learner(5e-3), _learner(1e-2)
    start, _ = frozen.weights()
    halved.set_lr_scale(0.5)
    frozen.set_lr_scale(0.0)
    for learner in (halved, reference, frozen):
        learner.update(batch)
    assert halved.optimizer.param_groups[0]["lr"] == pytest.approx(5e-3)
    # Adam at lr 0.01 scaled by 0.5 is Adam at lr 0.005, step for step.
    moved, expected = halved.weights()[0], reference.weights()[0]
    assert all(torch.allclose(moved[k], expected[k], atol=1e-7) for k in expected)
    assert any(not torch.equal(moved[k], start[k]) for k in start)
    # At scale 0 an update counts (version, update count) but moves no weight.
    after, version = frozen.weights()
    assert version == 1 and frozen.updates == 1
    assert all(torch.equal(after[k], start[k]) for k in start)


def _scheduled(tiny_run: TinyRun, run_root: Path, runtime: str) -> RunConfig:
    cfg = tiny_run(run_root, runtime, 6)
    cfg.train.lr_schedule = "linear"
    return cfg


def _trained_at(state: dict, cfg: RunConfig) -> float:
    """The rate the checkpointed optimiser last stepped at."""
    return state["learner"]["optimizer"]["param_groups"][0]["lr"] / cfg.train.lr


@pytest.mark.parametrize("runtime", ["serial", "ray"])
def test_a_run_decays_its_rate_and_checkpoints_the_scale(
    runtime: str, tmp_path: Path, tiny_run: TinyRun, request: pytest.FixtureRequest
) -> None:
    """The serial runtime sets its learner's optimiser; Ray's sync rounds send the scale with
    the learner actor's train call."""
    run = train
    if runtime == "ray":
        request.getfixturevalue("local_ray")
        run = train_ray
    cfg = _scheduled(tiny_run, tmp_path, runtime)
    state = load_checkpoint(run(cfg).run_dir)
    assert state["learner"]["updates"] == 6
    # Rounds of 2 updates out of 6: the last round was handed 1 - 4/6 (the 10-minute time budget
    # had hardly begun), and its optimiser stepped at that rate.
    assert state["lr_scale"] == pytest.approx(1 / 3)
    assert _trained_at(state, cfg) == pytest.approx(1 / 3)
    constant = load_checkpoint(run(tiny_run(tmp_path / "constant", runtime, 6)).run_dir)
    assert constant["lr_scale"] == 1.0 and _trained_at(constant, cfg) == pytest.approx(1.0)


def test_a_resumed_run_goes_on_from_the_checkpointed_scale(
    tmp_path: Path, tiny_run: TinyRun
) -> None:
    first = train(_scheduled(tiny_run, tmp_path, "serial"))
    resumed = _scheduled(tiny_run, tmp_path, "serial")
    resumed.train.max_updates = 12
    train(resumed, resume=first.run_dir)
    lr = dict(zip(*read_scalars(first.run_dir / "tensorboard", [])["learner/lr"], strict=True))
    # The first session handed out 1, 2/3 and 1/3 at updates 0, 2 and 4. The resumed one starts
    # from the checkpointed 1/3 (the new update budget alone would allow 1 - 6/12 = 1/2) and
    # ends at 1 - 10/12, where the update budget runs out first.
    assert lr[4.0] == pytest.approx(resumed.train.lr / 3)
    assert lr[6.0] == pytest.approx(resumed.train.lr / 3, rel=1e-3)
    assert lr[10.0] == pytest.approx(resumed.train.lr / 6)
    assert load_checkpoint(first.run_dir)["lr_scale"] == pytest.approx(1 / 6)
