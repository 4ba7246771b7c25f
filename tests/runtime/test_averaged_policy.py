"""The averaged policy (``train.averaged_policy_decay``, docs/design.md §7.15): the learner keeps
an exponential moving average of its weights, evaluations and the saved policy use it, and
training goes on from the newest weights as if it were off."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from distrl.algos.registry import build_algorithm
from distrl.cli.eval_cmd import newest_policy
from distrl.cli.main import main
from distrl.config.schema import RunConfig
from distrl.policies.base import read_checkpoint
from distrl.policies.small import SmallPolicy, SmallPolicyConfig
from distrl.runtime.checkpoint import POLICY_CHECKPOINT, load_checkpoint
from distrl.runtime.distributed.driver import train_ray
from distrl.runtime.learner import Learner, update_from_replay
from distrl.runtime.replay_service import ReplayService
from distrl.runtime.serial import train

DECAY = 0.9


def _learner(decay: float) -> Learner:
    torch.manual_seed(0)
    return Learner(
        SmallPolicy(SmallPolicyConfig()),
        build_algorithm(RunConfig()),
        lr=1e-2,
        grad_clip=1.0,
        average_decay=decay,
    )


def _close(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)


def test_the_average_follows_its_reference_recurrence(episode_replay: ReplayService) -> None:
    learner, replay = _learner(DECAY), episode_replay
    expected, _ = learner.weights()  # the average starts from the weights before the first update
    for n in range(1, 13):
        assert update_from_replay(learner, replay, batch_size=8)
        newest, version = learner.weights()
        decay = min(DECAY, (1 + n) / (10 + n))  # the ramp, then the configured decay
        expected = {k: decay * expected[k] + (1 - decay) * newest[k] for k in newest}
        deployed, deployed_version = learner.deployed_weights()
        assert _close(deployed, expected) and deployed_version == version == n
    # After a dozen updates the average lags the newest weights: it is a different policy.
    assert not _close(deployed, newest)


def test_without_averaging_the_newest_weights_are_deployed(
    episode_replay: ReplayService,
) -> None:
    learner, replay = _learner(0.0), episode_replay
    for _ in range(3):
        update_from_replay(learner, replay, batch_size=8)
    assert _close(learner.deployed_weights()[0], learner.weights()[0])
    assert learner.average is None and "average" not in learner.state_dict()


def test_the_average_survives_a_checkpoint_and_goes_on_the_same(
    episode_replay: ReplayService,
) -> None:
    first, replay = _learner(DECAY), episode_replay
    for _ in range(4):
        update_from_replay(first, replay, batch_size=8)
    second = _learner(DECAY)
    # A deep copy, as a checkpoint file is: Adam's load keeps the moments' tensors it is given.
    second.load_state_dict(copy.deepcopy(first.state_dict()))
    assert second.averaged_updates == 4
    assert _close(second.deployed_weights()[0], first.deployed_weights()[0])
    batch = replay.sample(8, first.version)
    assert batch is not None
    first.update(batch)
    second.update(batch)
    assert _close(second.deployed_weights()[0], first.deployed_weights()[0])
    # A checkpoint written with averaging off restarts the average at the next update.
    third = _learner(DECAY)
    third.load_state_dict({k: v for k, v in first.state_dict().items() if k != "average"})
    assert third.average is None and _close(third.deployed_weights()[0], first.weights()[0])


def test_the_decay_is_checked() -> None:
    with pytest.raises(ValueError, match="average_decay"):
        _learner(1.0)


TinyRun = Callable[[Path, str, int], RunConfig]


def _averaged(
    tiny_run: TinyRun, run_root: Path, runtime: str, decay: float, updates: int = 6
) -> RunConfig:
    cfg = tiny_run(run_root, runtime, updates)
    cfg.train.averaged_policy_decay = decay
    return cfg


def test_a_serial_run_saves_the_average_and_trains_as_without_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tiny_run: TinyRun
) -> None:
    averaged = train(_averaged(tiny_run, tmp_path / "on", "serial", DECAY))
    plain = train(_averaged(tiny_run, tmp_path / "off", "serial", 0.0))
    on, off = load_checkpoint(averaged.run_dir), load_checkpoint(plain.run_dir)
    assert on["learner"]["updates"] == off["learner"]["updates"] == 6
    # Evaluating and saving the average did not move the weights training goes on from.
    assert _close(on["learner"]["policy"], off["learner"]["policy"])
    saved = read_checkpoint(averaged.run_dir / POLICY_CHECKPOINT)["state_dict"]
    assert _close(saved, on["learner"]["average"])
    assert not _close(saved, on["learner"]["policy"])
    assert _close(read_checkpoint(plain.run_dir / POLICY_CHECKPOINT)["state_dict"],
                  off["learner"]["policy"])  # fmt: skip

    # ``distrl eval`` scores the saved average; ``--newest`` the weights training went on from.
    assert _close(newest_policy(str(averaged.run_dir)).state_dict(), on["learner"]["policy"])
    for flags, weights in (([], "saved"), (["--newest"], "newest")):
        command = ["eval", "--checkpoint", str(averaged.run_dir), "--episodes", "2", "--json"]
        assert main([*command, *flags]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["weights"] == weights and summary["policy_version"] == 6
        assert summary["episodes"] == 2


def test_newest_needs_a_run_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy_file = tmp_path / "policy.pt"
    SmallPolicy(SmallPolicyConfig()).save(policy_file)
    assert main(["eval", "--checkpoint", str(policy_file), "--newest"]) != 0
    assert "--newest reads a run folder's resume state" in capsys.readouterr().err


def test_a_ray_run_saves_the_average_and_resumes_it(
    tmp_path: Path, local_ray: None, tiny_run: TinyRun
) -> None:
    first = train_ray(_averaged(tiny_run, tmp_path, "ray", DECAY))
    state = load_checkpoint(first.run_dir)
    assert state["learner"]["averaged_updates"] == 6
    saved = read_checkpoint(first.run_dir / POLICY_CHECKPOINT)["state_dict"]
    assert _close(saved, state["learner"]["average"])
    assert not _close(saved, state["learner"]["policy"])
    train_ray(_averaged(tiny_run, tmp_path, "ray", DECAY, updates=8), resume=first.run_dir)
    state = load_checkpoint(first.run_dir)
    assert state["learner"]["averaged_updates"] == 8  # went on from the checkpointed average
    saved = read_checkpoint(first.run_dir / POLICY_CHECKPOINT)["state_dict"]
    assert _close(saved, state["learner"]["average"])
