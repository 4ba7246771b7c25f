"""The serial runtime: worker tagging, learner staleness bound, and a short train/resume."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from distrl.algos.registry import build_algorithm
from distrl.cli.main import main
from distrl.config.loader import load_config
from distrl.config.schema import RunConfig
from distrl.core.trajectory import Trajectory
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.envs.protocol import DeviceEnv
from distrl.envs.task_sets import load_tasks, task_family
from distrl.policies.base import load_policy
from distrl.policies.small import SmallPolicy, SmallPolicyConfig
from distrl.runtime.checkpoint import START_POLICY
from distrl.runtime.evaluation import evaluate
from distrl.runtime.learner import Learner
from distrl.runtime.replay_service import ReplayBatch, ReplayService
from distrl.runtime.serial import update_from_replay
from distrl.runtime.warm_start import demonstration_config, resumed_demonstrations
from distrl.runtime.worker import Worker
from distrl.store import TrajectoryStore


def _worker(policy: SmallPolicy, devices: int = 3) -> Worker:
    tasks = load_suite("general", "train")
    rng = np.random.default_rng(1)
    return Worker(
        [PhoneSimEnv(seed=10 + i) for i in range(devices)],
        policy,
        lambda: tasks[int(rng.integers(len(tasks)))],
        seed=1,
    )


def _learner(policy: SmallPolicy) -> Learner:
    return Learner(policy, build_algorithm(RunConfig()), lr=1e-3, grad_clip=1.0)


def _replay(max_staleness: int) -> ReplayService:
    return ReplayService(
        build_algorithm(RunConfig()),
        window=4,
        capacity=500,
        max_staleness=max_staleness,
        keep_screenshots=False,
    )


def test_worker_tags_steps_with_behaviour_logprob_and_version() -> None:
    policy = SmallPolicy(SmallPolicyConfig())
    policy.version = 7
    trajectories = _worker(policy).collect(5)
    assert len(trajectories) >= 5 and all(t.steps[-1].done for t in trajectories)
    steps = [s for t in trajectories for s in t.steps]
    assert all(s.policy_version == 7 for s in steps)
    scores = policy.score_actions([s.observation for s in steps], [s.action for s in steps])
    recorded = torch.tensor([s.behaviour_logprob for s in steps])
    assert torch.allclose(scores.logprobs.detach(), recorded, atol=1e-5)


def test_learner_updates_publish_versions_and_drop_stale_windows() -> None:
    learner = _learner(SmallPolicy(SmallPolicyConfig()))
    replay = _replay(max_staleness=2)
    worker = _worker(SmallPolicy(SmallPolicyConfig()))
    worker.set_weights(*learner.weights())
    old = worker.collect(6)  # acted by version 0
    old_windows = replay.ingest(old)
    assert old_windows > 0
    for _ in range(3):
        metrics = update_from_replay(learner, replay, batch_size=8)
        assert np.isfinite(metrics["loss"])
    assert learner.version == 3
    # Data acted by version 0 is now 3 versions old: withdrawn, every window of it, and the
    # learner waits rather than train on it ...
    assert replay.sample(8, learner.version) is None and len(replay) == 0
    dropped_before = replay.counters.stale_dropped
    assert dropped_before == old_windows
    # ... and on arrival.
    assert replay.ingest(old) == 0
    assert replay.counters.stale_dropped > dropped_before
    state, version = learner.weights()
    worker.set_weights(state, version)
    fresh = worker.collect(6)
    # Episodes in flight finish under the new weights; each step records who acted.
    for trajectory in fresh:
        versions = [s.policy_version for s in trajectory.steps]
        assert versions == sorted(versions) and set(versions) <= {0, 3}
    assert any(s.policy_version == 3 for t in fresh for s in t.steps)
    assert replay.ingest(fresh) > 0


def test_staleness_figures_count_replayed_windows_only() -> None:
    # Demonstration and success-replay windows (slot -1) are exempt from the staleness bound;
    # a demonstration acted by an old version must not show up as staleness of the update.
    learner = _learner(SmallPolicy(SmallPolicyConfig()))
    replay = _replay(max_staleness=50)
    worker = _worker(SmallPolicy(SmallPolicyConfig()))
    worker.set_weights(*learner.weights())
    replay.ingest(worker.collect(4))  # acted by version 0
    learner.policy.version = 4
    batch = replay.sample(6, learner.version)
    assert batch is not None and (batch.slots >= 0).all()
    demonstration = dataclasses.replace(
        batch.windows[0], policy_versions=(-100,) * len(batch.windows[0].policy_versions)
    )
    mixed = ReplayBatch(
        windows=[*batch.windows, demonstration],
        slots=np.append(batch.slots, -1),
        generations=np.append(batch.generations, -1),
        weights=np.append(batch.weights, 1.0),
    )
    _, metrics = learner.update(mixed)
    assert metrics["staleness_mean"] == 4.0 and metrics["staleness_max"] == 4.0


SMALL_RUN = [
    "train.devices=2",
    "train.episodes_per_round=2",
    "train.updates_per_round=1",
    "train.min_replay=4",
    "train.batch_size=4",
    "train.eval_episodes=4",
    "train.final_eval_episodes=6",
    "train.bc_steps=3",
]


def test_train_then_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    common = ["--run-root", str(tmp_path), "--json", *SMALL_RUN, "train.warm_start_episodes=4"]
    assert main(["train", "--updates", "2", "--minutes", "30", *common]) == 0
    first = json.loads(capsys.readouterr().out)
    run_dir = Path(first["run_dir"])
    assert first["updates"] == 2 and first["curve"][0]["updates"] == 0
    assert first["curve"][-1]["updates"] == 2  # the curve ends with the final policy
    # ... measured on train.final_eval_episodes greedy episodes of the starting point's draw
    # (the pair a run is quoted by); every point has its SE.
    final, start = first["curve"][-1], first["curve"][0]
    assert final["final"] and final["episodes"] == start["episodes"] == 6
    assert final["draw"] == start["draw"] == 0
    for point in first["curve"]:
        p, n = point["success"], point["episodes"]
        assert point["success_se"] == pytest.approx((p * (1 - p) / n) ** 0.5)
    assert first["final_success_se"] == final["success_se"]
    # The policy the online phase started from is kept: its start point can be played again.
    cfg = load_config(run_dir / "config.yaml")
    start_policy = load_policy(run_dir / START_POLICY)
    again = evaluate(start_policy, cfg, load_tasks(cfg, "test"), 6, True, draw=0)
    assert again.success_rate == start["success"] and start_policy.version == 0
    diagnostics = first["diagnostics"]  # A-RIDE logs every one of them
    assert set(diagnostics) == {
        "explained_variance",
        "clip_fraction",
        "approx_kl",
        "staleness_mean",
        "staleness_max",
        "entropy_kind",
        "entropy_tap_element",
        "entropy_type_text",
    }
    assert 0.0 <= diagnostics["clip_fraction"]["mean"] <= 1.0
    assert (run_dir / "checkpoints" / "latest.pt").exists()
    events = EventAccumulator(str(run_dir / "tensorboard"))
    events.Reload()
    logged = set(events.Tags()["scalars"])
    expected = {
        "eval/success_greedy",
        "eval/success_sampled",
        "eval/success_greedy_se",
        "collect/success",
        "collect/return",
        "collect/env_steps_per_s",
        "replay/stale_dropped",
        "learner/policy_loss",
        "learner/value_loss",
        "learner/entropy",
        "learner/entropy_kind",
        "learner/entropy_type_text",
        "learner/staleness_mean",
        "learner/priority_mean",
        "learner/updates_per_s",
    }
    assert expected <= logged, expected - logged
    stored = TrajectoryStore(run_dir / "trajectories").count()
    assert stored == first["episodes"]
    assert main(["train", "--resume", str(run_dir), "--updates", "4", *common[2:]]) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["run_dir"] == str(run_dir) and second["updates"] == 4
    assert [p["updates"] for p in second["curve"]] == [0, 2, 4]
    assert TrajectoryStore(run_dir / "trajectories").count() == second["episodes"] > stored
    # The refill of the replay on resume must not count the stored trajectories twice.
    state = torch.load(run_dir / "checkpoints" / "latest.pt", weights_only=True)
    assert state["replay"]["counters"]["trajectories"] == second["episodes"]


def test_a_resumed_run_keeps_its_demonstration_share(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--run-root", str(tmp_path), "--json", *SMALL_RUN, "train.warm_start_episodes=4"]
    share = [*common, "train.demo_fraction=0.5"]
    assert main(["train", "--updates", "1", "--minutes", "30", *share]) == 0
    run_dir = Path(json.loads(capsys.readouterr().out)["run_dir"])
    cfg = RunConfig()
    cfg.train.demo_fraction = 0.5
    demonstrations = resumed_demonstrations(cfg, run_dir)
    collected = TrajectoryStore(run_dir / "demos" / "trajectories").trajectory_ids()
    assert len(collected) == 4
    assert [t.trajectory_id for t in demonstrations] == collected
    cfg.train.demo_fraction = 0.0  # a run without the share never reads them
    assert resumed_demonstrations(cfg, run_dir) == []
    assert main(["train", "--resume", str(run_dir), "--updates", "2", *share[2:]]) == 0
    assert json.loads(capsys.readouterr().out)["updates"] == 2


@pytest.mark.parametrize("algo", ["digirl", "fbc"])
def test_baselines_train_and_their_policy_evaluates(
    algo: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # fbc admits successes only, so its replay needs a warm start good enough to succeed.
    args = ["train", "--updates", "2", "--run-root", str(tmp_path), "--json", *SMALL_RUN]
    warm = ["train.warm_start_episodes=12", "train.bc_steps=60", "train.min_replay=1"]
    assert main([*args, f"train.algo={algo}", *warm]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["updates"] == 2
    run_dir = summary["run_dir"]
    assert main(["eval", "--checkpoint", run_dir, "--episodes", "4", "--json"]) == 0
    evaluation = json.loads(capsys.readouterr().out)
    assert evaluation["episodes"] == 4 and evaluation["split"] == "test"  # eval's default split
    assert 0.0 <= evaluation["success_rate"] <= 1.0
    assert evaluation["policy_version"] == 2  # the policy the learner had after two updates


def test_collect_demos_then_warm_start_from_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            [
                "collect-demos",
                "--episodes",
                "5",
                "--noise",
                "0.1",
                "--run-root",
                str(tmp_path),
                "--json",
            ]
        )
        == 0
    )
    demos = json.loads(capsys.readouterr().out)
    assert demos["episodes"] == 5 and Path(demos["run_dir"]).name.startswith("demos-")
    config = (Path(demos["run_dir"]) / "config.yaml").read_text()
    assert "policy: noisy" in config and "noise: 0.1" in config
    args = ["train", "--updates", "1", "--run-root", str(tmp_path), "--json", *SMALL_RUN]
    assert main([*args, f"train.demos={demos['run_dir']}"]) == 0
    run_dir = Path(json.loads(capsys.readouterr().out)["run_dir"])
    assert not (run_dir / "demos").exists()  # cloned from the given folder, none collected


def test_eval_and_demos_input_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    not_a_policy = tmp_path / "x.pt"
    not_a_policy.write_bytes(b"junk")
    assert main(["eval", "--checkpoint", str(not_a_policy)]) == 2
    assert "x.pt: cannot be read" in capsys.readouterr().err
    assert main(["eval", "--checkpoint", str(tmp_path)]) == 2
    assert "without checkpoints/policy.pt" in capsys.readouterr().err
    args = ["train", "--updates", "1", "--run-root", str(tmp_path), *SMALL_RUN]
    assert main([*args, f"train.demos={tmp_path}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a demos run folder" in err


def test_replay_keeps_no_screenshots_for_a_policy_that_reads_elements_only() -> None:
    # A 360x720 screenshot is 0.78 MB: a full replay of them does not fit in memory (a 20-minute
    # run was OOM-killed at 17 GB before this), and the small policy never reads pixels.
    replay = _replay(max_staleness=50)
    trajectories = _worker(SmallPolicy(SmallPolicyConfig())).collect(3)
    assert replay.ingest(trajectories) > 0
    windows = [replay.buffer.storage[slot] for slot in replay.buffer.storage.slots()]
    observations = [o for w in windows for o in w.observations] + [
        w.bootstrap_observation for w in windows if w.bootstrap_observation is not None
    ]
    assert all(o.screenshot.shape == (1, 1, 3) for o in observations)
    # ... while what they learn from is unchanged, and the worker's trajectories keep theirs.
    assert trajectories[0].steps[0].observation.screenshot.shape[0] > 1
    first = trajectories[0].steps[0].observation
    assert windows[0].observations[0].elements == first.elements


def test_demonstrations_are_played_at_simulator_speed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run on latency-modelled devices must not spend its warm start waiting on them.
    from distrl.runtime import play as play_module

    seen: list[DeviceEnv] = []
    real = play_module.make_device

    def spy(*args: object, **kwargs: object) -> DeviceEnv:
        seen.append(real(*args, **kwargs))  # type: ignore[arg-type]
        return seen[-1]

    monkeypatch.setattr(play_module, "make_device", spy)
    cfg = RunConfig()
    cfg.env.phonesim.latency.enabled = True
    cfg.env.phonesim.latency.crash_prob = 0.1
    cfg.train.warm_start_episodes = 2
    cfg.run_root = str(tmp_path)
    demo_cfg = demonstration_config(cfg)
    assert demo_cfg.play.policy == "noisy" and cfg.env.phonesim.latency.enabled
    play_module.play(demo_cfg, load_suite("general", "train"), command="demos")
    assert isinstance(seen[0], PhoneSimEnv) and not seen[0].config.latency.enabled


def test_evaluation_runs_without_the_latency_and_fault_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from distrl.runtime import evaluation

    seen: list[DeviceEnv] = []
    real = evaluation.evaluation_devices

    def spy(cfg: RunConfig, count: int, screenshots: bool = True, draw: int = 0) -> list[DeviceEnv]:
        seen.extend(real(cfg, count, screenshots, draw))
        return seen[-count:]

    monkeypatch.setattr(evaluation, "evaluation_devices", spy)
    cfg = RunConfig()
    cfg.env.phonesim.latency.enabled = True
    cfg.env.phonesim.latency.crash_prob = 1.0  # every step would crash on the training devices
    tasks = load_suite("general", "test")
    result = evaluation.evaluate(SmallPolicy(SmallPolicyConfig()), cfg, tasks, 4, greedy=True)
    assert result.episodes == 4 and isinstance(seen[0], PhoneSimEnv)
    assert not any(d.config.latency.enabled for d in seen)  # type: ignore[attr-defined]
    assert cfg.env.phonesim.latency.enabled  # the run's own config is untouched


# -- the task curriculum and success replay (docs/design.md §7.12-7.13) ----------------------

FEATURES = [
    "train.warm_start_episodes=4",
    "curriculum.enabled=true",
    "curriculum.window=50",
    "success_replay.share=0.25",
]


def _windows(stored: list[Trajectory], window: int = 50) -> dict[str, list[int]]:
    """Per family, its last ``window`` outcomes in store order (what the curriculum holds)."""
    outcomes: dict[str, list[int]] = {}
    for trajectory in stored:
        outcomes.setdefault(task_family(trajectory.task), []).append(int(trajectory.success))
    return {family: values[-window:] for family, values in outcomes.items()}


def _train(root: Path, capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    command = ["train", "--run-root", str(root), "--minutes", "30", "--json"]
    assert main([*command, *SMALL_RUN, *FEATURES, *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_serial_run_curriculum_and_success_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _train(tmp_path / "a", capsys, "--updates", "3")
    run_dir = Path(first["run_dir"])
    stored = TrajectoryStore(run_dir / "trajectories").load()
    state = torch.load(run_dir / "checkpoints" / "latest.pt", weights_only=True)
    # Every finished train episode reached the curriculum, in the order it was stored.
    held = {family: outcomes for family, outcomes in state["curriculum"].items() if outcomes}
    assert held == _windows(stored)
    table = first["curriculum"]
    assert sum(row["episodes"] for row in table.values()) == len(stored)
    assert sum(row["weight"] for row in table.values()) == pytest.approx(1.0, abs=1e-3)
    successes = sum(t.success for t in stored)
    assert first["success_replay"]["success_stored"] == successes
    assert 0.0 <= first["success_replay"]["success_share"] < 1.0
    events = EventAccumulator(str(run_dir / "tensorboard"))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {f"curriculum/weight/{family}" for family in table} <= tags
    assert {"replay/success_stored", "replay/success_share", "replay/success_tasks"} <= tags

    # The same seed draws the same tasks and ends with the same curriculum.
    again = _train(tmp_path / "b", capsys, "--updates", "3")
    replayed = TrajectoryStore(Path(again["run_dir"]) / "trajectories").load()
    assert [t.task.task_id for t in replayed] == [t.task.task_id for t in stored]
    assert again["curriculum"] == table

    # A resumed run continues the curriculum it checkpointed (windows over the whole store).
    second = _train(tmp_path / "a", capsys, "--resume", str(run_dir), "--updates", "6")
    stored = TrajectoryStore(run_dir / "trajectories").load()
    assert second["episodes"] == len(stored) > first["episodes"]
    state = torch.load(run_dir / "checkpoints" / "latest.pt", weights_only=True)
    held = {family: outcomes for family, outcomes in state["curriculum"].items() if outcomes}
    assert held == _windows(stored)
    assert second["success_replay"]["success_stored"] == sum(t.success for t in stored)
