"""Rewording during online training.

``train.demo_phrasing_augmentation``: the replay rewords the demonstration windows it draws, one
rewording per window applied to every observation of it, keeping the words the window's steps
need; the policy's own windows and the kept demonstrations are never changed.

``train.task_phrasing_augmentation``: a worker's train task is reworded before its episode, never
a word of the task's parameters, so the policy acts (and its log-probs are taken) on the
sentence it saw and PhoneSim still judges the task it is; evaluation is never reworded."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from distrl.agents.oracle import OracleAgent
from distrl.algos.phrasing_augmentation import PhrasingEdit, task_template_words, task_words
from distrl.algos.registry import build_algorithm
from distrl.algos.step_window import StepWindow, cut_windows
from distrl.cli.main import main
from distrl.config.loader import ConfigError, load_config
from distrl.config.schema import RunConfig
from distrl.core.action import ActionType
from distrl.core.trajectory import Trajectory
from distrl.envs.phonesim.env import PhoneSimEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.policies.unseen_words import UNKNOWN_WORD
from distrl.runtime.components import build_replay
from distrl.runtime.replay_service import ReplayService
from distrl.runtime.rollout import run_episode
from distrl.runtime.task_sampler import TaskSampler
from distrl.runtime.warm_start import cloning_augments
from distrl.store import TrajectoryStore

#: Templates whose demonstrations type a text, tap names and carry numbers.
TEMPLATES = ("send_message", "create_note", "add_contact", "toggle_setting", "lookup_contact")


@pytest.fixture(scope="module")
def demonstrations() -> list[Trajectory]:
    tasks = load_suite("general", "train")
    demos = []
    for index, template in enumerate(TEMPLATES):
        for task in [t for t in tasks if t.spec.get("template") == template][:2]:
            env = PhoneSimEnv(seed=index)
            demos.append(run_episode(env, OracleAgent(env), task))
    assert all(demo.success for demo in demos)
    return demos


def _windows(trajectories: list[Trajectory], length: int = 3) -> list[StepWindow]:
    shaping = build_algorithm(RunConfig()).shaping
    return [w for t in trajectories for w in cut_windows(t, length, shaping)]


def _train(tmp_path: Path, capsys: pytest.CaptureFixture[str], *options: str) -> dict:
    """A short real serial run on 2 devices; its JSON result."""
    command = ["train", "--run-root", str(tmp_path), "--minutes", "30", "--json"]
    small = ["train.devices=2", "train.min_replay=4", "train.eval_episodes=4"]
    assert main([*command, *small, "train.final_eval_episodes=4", *options]) == 0
    return json.loads(capsys.readouterr().out)


#: What may stick to a word in an instruction ("Haddad:", '"good', 'night"').
PUNCTUATION = "\"'?,.:!"


def _needed_tokens(window: StepWindow) -> set[str]:
    """What must survive in any rewording: names (a capital inside the sentence), numbers and
    every word a step types."""
    instruction = window.observations[0].instruction.split()
    needed = {t for i, t in enumerate(instruction) if (i > 0 and t[:1].isupper())}
    needed |= {t for t in instruction if any(c.isdigit() for c in t)}
    for action in window.actions:
        if action.action_type == ActionType.TYPE:
            needed |= set(action.text.split())
    return needed


def test_a_demonstration_window_is_reworded_as_one_episode(
    demonstrations: list[Trajectory],
) -> None:
    windows = _windows(demonstrations)
    edit = PhrasingEdit.from_demonstrations(demonstrations, rate=1.0)
    # A word some screen of the episode shows is needed in every step of it, so it is neither
    # edited nor inserted elsewhere ("airplane" appears only on the settings screen).
    assert {"airplane", "mode", "note", "contact"}.isdisjoint(edit.pool)
    assert {"a", "my", "find", "create"} <= set(edit.pool)  # ("the" is typed in a note)
    rng = np.random.default_rng(0)
    changed = 0
    for window in windows:
        for _ in range(5):
            reworded = edit.reword_window(window, rng)
            instruction = reworded.observations[0].instruction
            changed += instruction != window.observations[0].instruction
            # One instruction for the whole window: every step, the first observation, and the
            # bootstrap observation when the episode goes on past the window.
            assert {o.instruction for o in reworded.observations} == {instruction}
            assert reworded.first_observation.instruction == instruction
            if window.bootstrap_observation is not None:
                assert reworded.bootstrap_observation is not None
                assert reworded.bootstrap_observation.instruction == instruction
            # Only the instruction changes: actions, screens, rewards and log-probs do not.
            assert reworded.actions == window.actions
            assert reworded.rewards == window.rewards
            assert reworded.behaviour_logprobs == window.behaviour_logprobs
            assert reworded.policy_versions == window.policy_versions
            assert [o.elements for o in reworded.observations] == [
                o.elements for o in window.observations
            ]
            words = {w.strip(PUNCTUATION) for w in instruction.split()}
            for token in _needed_tokens(window):
                assert token.strip(PUNCTUATION) in words, (token, instruction)
    # Rate 1: most draws reword (a swap of equal words, or an instruction with one template
    # word such as "Text Umar Haddad: running late", can leave it as it was).
    assert changed > 0.6 * 5 * len(windows)


def test_rate_zero_and_a_seed_give_what_they_say(demonstrations: list[Trajectory]) -> None:
    window = _windows(demonstrations)[0]
    assert PhrasingEdit(["now"], rate=0.0).reword_window(window, np.random.default_rng(0)) is window
    edit = PhrasingEdit(["now", "please"], rate=1.0)
    first = edit.reword_window(window, np.random.default_rng(3))
    assert edit.reword_window(window, np.random.default_rng(3)) == first


def test_the_replay_rewords_the_drawn_demonstrations_only(
    demonstrations: list[Trajectory], episodes: list[Trajectory]
) -> None:
    online = episodes[:6]
    replay = ReplayService(
        build_algorithm(RunConfig()),
        window=3,
        capacity=1000,
        max_staleness=50,
        keep_screenshots=False,
        demo_fraction=0.5,
        demo_rewording=1.0,
    )
    replay.add_demonstrations(demonstrations)
    kept = [w.observations[0].instruction for w in replay.demo_windows]
    replay.add(online)
    replay.flush()
    originals = {t.trajectory_id: t.task.instruction for t in demonstrations + online}
    demo_ids = {t.trajectory_id for t in demonstrations}
    reworded = drawn = 0
    for _ in range(40):
        batch = replay.sample(8, learner_version=0)
        assert batch is not None
        for window, slot in zip(batch.windows, batch.slots, strict=True):
            instruction = window.observations[0].instruction
            if window.trajectory_id in demo_ids:
                assert slot == -1
                drawn += 1
                reworded += instruction != originals[window.trajectory_id]
            else:  # the policy's own steps keep the wording they were acted on
                assert instruction == originals[window.trajectory_id]
    assert drawn == 40 * 4 and reworded > 0.6 * drawn
    # The kept demonstrations are never changed: each draw rewords a copy.
    assert [w.observations[0].instruction for w in replay.demo_windows] == kept
    assert kept == [originals[w.trajectory_id] for w in replay.demo_windows]


def test_the_config_switches_it_on_and_refuses_it_without_a_demonstration_share(
    demonstrations: list[Trajectory],
) -> None:
    cfg = load_config("vlm-quick", ["train.demo_phrasing_augmentation=0.5"])
    replay = build_replay(cfg, keep_screenshots=False, store_dir=None)
    replay.add_demonstrations(demonstrations)
    assert replay.demo_rewording is not None and replay.demo_rewording.rate == 0.5
    assert replay.demo_rewording.pool == PhrasingEdit.from_demonstrations(demonstrations, 0.5).pool
    kept = len(replay.demo_windows)
    with pytest.raises(ValueError, match="add them in one call"):
        replay.add_demonstrations(demonstrations)
    assert len(replay.demo_windows) == kept  # the refused call kept nothing
    off_cfg = load_config("vlm-quick", ["train.demo_phrasing_augmentation=0"])
    off = build_replay(off_cfg, keep_screenshots=False, store_dir=None)
    off.add_demonstrations(demonstrations)
    assert off.demo_rewording is None
    with pytest.raises(ConfigError, match="train.demo_fraction is 0"):
        load_config("quick", ["train.demo_phrasing_augmentation=0.5", "train.demo_fraction=0"])


def test_a_run_rewords_its_demonstration_draws_and_reports_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A short real serial run: the demonstration share is drawn and reworded, and the run's
    JSON and TensorBoard say how many."""
    result = _train(
        tmp_path,
        capsys,
        "--updates=3",
        "train.episodes_per_round=2",
        "train.batch_size=8",
        "train.warm_start_episodes=8",
        "train.bc_steps=2",
        "train.demo_fraction=0.5",
        "train.demo_phrasing_augmentation=1.0",
    )
    figures = result["demo_rewording"]
    assert figures["demo_windows_sampled"] == 3 * 4  # 3 updates, half of 8 windows each
    # Rate 1: most drawn windows are reworded (see the first test for the ones that are not).
    assert 0.5 * 12 <= figures["demo_windows_reworded"] <= 12
    events = EventAccumulator(str(Path(result["run_dir"]) / "tensorboard"))
    events.Reload()
    assert "replay/demo_reworded_share" in events.Tags()["scalars"]


# -- the policy's own episodes: train tasks reworded before they start ------------------------


@pytest.mark.parametrize("suite", ["general", "webshop"])
def test_a_reworded_task_keeps_its_parameters_words_and_identity(suite: str) -> None:
    tasks = load_suite(suite, "train")
    pool = task_template_words(tasks)
    # The pool is wording only: no task's parameter word shows up in it by way of that task.
    assert not {"airplane", "bluetooth", "sennheiser", "momentum"} & set(pool)
    edit = PhrasingEdit(pool, rate=1.0)
    rng = np.random.default_rng(0)
    changed = 0
    for task in tasks:
        reworded = edit.reword_task(task, rng)
        assert (reworded.task_id, reworded.spec, reworded.split) == (
            task.task_id,
            task.spec,
            task.split,
        )
        changed += reworded.instruction != task.instruction
        words = {w.strip(PUNCTUATION).lower() for w in reworded.instruction.split()}
        kept = {w.strip(PUNCTUATION).lower() for w in task.instruction.split()}
        assert task_words(task) & kept <= words, (task.instruction, reworded.instruction)
    assert changed > 0.6 * len(tasks)
    assert PhrasingEdit(pool, rate=0.0).reword_task(tasks[0], rng) is tasks[0]


def test_the_train_sampler_rewords_its_share_reproducibly_and_draws_as_before_when_off() -> None:
    cfg = load_config("quick", ["train.task_phrasing_augmentation=0.5"])
    first = TaskSampler.for_training(cfg, np.random.default_rng(3))
    drawn = [first() for _ in range(2000)]
    originals = {t.task_id: t.instruction for t in load_suite("general", "train")}
    reworded = sum(t.instruction != originals[t.task_id] for t in drawn)
    assert 0.3 * 2000 < reworded <= 0.5 * 2000 + 100  # rate 0.5, less the edits that change nothing
    again = TaskSampler.for_training(cfg, np.random.default_rng(3))
    assert [again() for _ in range(2000)] == drawn
    # Off: no rewording and the very task stream a sampler without it draws.
    off = TaskSampler.for_training(load_config("quick", []), np.random.default_rng(3))
    plain = TaskSampler(load_suite("general", "train"), np.random.default_rng(3))
    assert off.rewording is None
    assert [off().task_id for _ in range(200)] == [plain().task_id for _ in range(200)]


def test_the_mask_edit_goes_into_all_three_rewordings(
    demonstrations: list[Trajectory],
) -> None:
    """With the mask edit chosen, vlm-quick draws it in the cloned steps, the demonstration
    draws and the train tasks; a masked task keeps its identity and parameters."""
    cfg = load_config(
        "vlm-quick",
        ["policy.vlm.mask_unseen_words=true", "train.phrasing_edits=[delete,swap,insert,mask]"],
    )
    (cloning,) = [a for a in cloning_augments(cfg, demonstrations) if isinstance(a, PhrasingEdit)]
    replay = build_replay(cfg, keep_screenshots=False, store_dir=None)
    replay.add_demonstrations(demonstrations)
    sampler = TaskSampler.for_training(cfg, np.random.default_rng(0))
    for edit in (cloning, replay.demo_rewording, sampler.rewording):
        assert edit is not None and edit.edits == ("delete", "swap", "insert", "mask")
    originals = {t.task_id: t for t in load_suite("general", "train")}
    masked = [t for t in (sampler() for _ in range(400)) if UNKNOWN_WORD in t.instruction]
    assert 400 * 0.5 * 0.25 * 0.6 < len(masked) < 400 * 0.5 * 0.25 * 1.4
    for task in masked:
        assert task.spec == originals[task.task_id].spec


def test_task_rewording_is_refused_where_the_wording_is_the_task() -> None:
    with pytest.raises(ConfigError, match="only the phonesim backend"):
        load_config("miniwob", ["train.task_phrasing_augmentation=0.5"])
    with pytest.raises(ConfigError, match="judge.kind 'vlm'"):
        load_config("quick", ["train.task_phrasing_augmentation=0.5", "judge.kind=vlm"])


def test_a_run_acts_on_reworded_train_tasks_and_stores_what_it_saw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _train(
        tmp_path,
        capsys,
        "--updates=2",
        "train.episodes_per_round=8",
        "train.batch_size=4",
        "train.warm_start_episodes=0",
        "train.task_phrasing_augmentation=1.0",
    )
    stored = TrajectoryStore(Path(result["run_dir"]) / "trajectories").load()
    originals = {t.task_id: t for t in load_suite("general", "train")}
    assert stored and all(t.task.task_id in originals for t in stored)
    reworded = [t for t in stored if t.task.instruction != originals[t.task.task_id].instruction]
    assert len(reworded) > 0.5 * len(stored)
    for trajectory in reworded:  # every step shows the reworded sentence the policy acted on
        assert {s.observation.instruction for s in trajectory.steps} == {
            trajectory.task.instruction
        }
