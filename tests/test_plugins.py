"""Plug-ins: an env, a policy and a judge defined outside the package train through
``distrl train`` by ``module:attribute``; any gymnasium env runs as ``gym:ENV_ID``; unknown names
are one line listing the built-ins and the plug-in forms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from distrl.cli.main import main
from distrl.config.loader import load_config
from distrl.plugins import ALGORITHMS, ENV_BACKENDS, JUDGES, POLICIES
from distrl.policies.base import load_policy
from distrl.runtime.run_log import POLICY_CHECKPOINT

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SMALL_TRAIN = [
    "--devices",
    "2",
    "train.episodes_per_round=4",
    "train.min_replay=4",
    "train.batch_size=4",
    "train.eval_episodes=4",
]


@pytest.fixture
def examples_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))


def test_env_policy_and_judge_from_outside_the_package_train(
    examples_on_path: None, tmp_path: Path, capsys
) -> None:
    argv = [
        "train",
        "--env",
        "light_switch_env:backend",
        "--policy",
        "compact_policy:make_policy",
        "judge.kind=brightness_judge:BrightnessJudge",
        "--updates",
        "3",
        "--run-root",
        str(tmp_path),
        *SMALL_TRAIN,
        "--json",
    ]
    assert main(argv) == 0, capsys.readouterr().err
    summary = json.loads(capsys.readouterr().out)
    assert summary["updates"] == 3 and summary["episodes"] >= 4
    assert set(summary["curve"][-1]) >= {"success", "sampled_success"}
    policy = load_policy(Path(summary["run_dir"]) / POLICY_CHECKPOINT)
    assert type(policy).__name__ == "CompactPolicy" and policy.config.d_model == 32
    assert policy.version == 3


def test_the_judge_decides_success(examples_on_path: None) -> None:
    from brightness_judge import BrightnessJudge

    from distrl.core.action import Action
    from distrl.envs.devices import Purpose, make_device

    cfg = load_config(
        None,
        ["env.backend=light_switch_env:backend", "judge.kind=brightness_judge:BrightnessJudge"],
    )
    device = make_device(cfg, Purpose.TRAIN, 0, screenshots=False)
    assert isinstance(device.judge, BrightnessJudge)  # type: ignore[attr-defined]
    task = next(t for t in ENV_BACKENDS.resolve(cfg.env.backend).tasks(cfg, "train"))
    observation = device.reset(task)
    assert observation.screenshot.shape == (64, 32, 3)  # a judge needs screenshots
    y, x = next(e for e in observation.elements if e.text == "Light switch").center_yx
    _, reward, done, info = device.step(Action.tap(y, x))
    assert (reward, done, info["success"]) == (1.0, True, True)
    assert device.judge.calls == 1  # type: ignore[attr-defined]


def test_algorithm_plug_in_by_module_attribute(tmp_path: Path, capsys) -> None:
    argv = ["train", "--algo", "distrl.algos.registry:aride", "--updates", "1"]
    assert main([*argv, "--run-root", str(tmp_path), *SMALL_TRAIN, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["updates"] <= 1


def test_play_any_gymnasium_env(tmp_path: Path, capsys) -> None:
    argv = ["play", "--env", "gym:distrl/PhoneSim-v0", "--policy", "random", "--episodes", "2"]
    assert main([*argv, "--json", "--run-root", str(tmp_path)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["episodes"] == 2 and summary["mean_steps"] > 0


def test_train_on_a_gymnasium_env_with_its_element_list(tmp_path: Path, capsys) -> None:
    """The small policy reads the element list, which PhoneSim's gym env puts in info."""
    argv = ["train", "--env", "gym:distrl/PhoneSim-general-train-v0", "--updates", "1"]
    assert main([*argv, "--run-root", str(tmp_path), *SMALL_TRAIN, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["updates"] == 1 and summary["episodes"] >= 4


@pytest.mark.parametrize(
    ("override", "builtins"),
    [
        ("env.backend=nowhere", "phonesim, android, miniwob, gym:ID"),
        ("policy.kind=huge", "small, vlm"),
        ("train.algo=ppo", "aride, digirl, fbc"),
        ("judge.kind=human", "state, vlm"),
        ("env.backend=gym", "gym:..."),
    ],
)
def test_unknown_names_are_one_line_naming_the_forms(override: str, builtins: str, capsys) -> None:
    assert main(["config", "show", override]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and builtins in err
    if override != "env.backend=gym":
        assert "module:attribute" in err


@pytest.mark.parametrize(
    ("flag", "name", "needle"),
    [
        ("--env", "no_such_module:backend", "no module 'no_such_module'"),
        ("--policy", "distrl.policies:no_such_thing", "has no 'no_such_thing'"),
        ("--env", "gym:NoSuchEnv-v9", "gymnasium cannot make it"),
        ("--env", "distrl.core.task:Task", "is not a device backend"),
        ("--env", "distrl.core.task:Task.to_dict", "is not a device backend"),
    ],
)
def test_plug_ins_that_do_not_resolve_are_one_line(
    flag: str, name: str, needle: str, tmp_path: Path, capsys
) -> None:
    argv = ["play", flag, name, "--episodes", "1", "--run-root", str(tmp_path)]
    if flag == "--policy":
        argv = ["train", flag, name, "--updates", "1", "--run-root", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("distrl: error: ") and needle in err, err


def test_every_kind_resolves_its_builtins() -> None:
    for kind in (ENV_BACKENDS, POLICIES, ALGORITHMS, JUDGES):
        for name in kind.builtins:
            assert kind.resolve(name) is not None or kind is JUDGES, (kind.key, name)
