"""The core install runs PhoneSim, the small policy and the serial runtime without any extra; a
feature whose extra is missing ends in one line naming its pip command; core modules import no
optional package.

A missing package is simulated in a child interpreter by ``sys.modules[name] = None`` (what
Python itself reads as "not importable"), so the tests run in the full development venv.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from distrl.extras import EXTRAS

ROOT = Path(__file__).resolve().parents[1]
OPTIONAL = sorted({module for modules in EXTRAS.values() for module in modules})
#: Runs ``distrl`` (argv after ``--``) with every optional package made unimportable.
WITHOUT_EXTRAS = (
    "import sys\n"
    f"for name in {OPTIONAL!r}:\n"
    "    sys.modules[name] = None\n"
    "from distrl.cli.main import main\n"
    "raise SystemExit(main(sys.argv[1:]))\n"
)
TINY_TRAIN = [
    "--updates",
    "1",
    "--devices",
    "2",
    "train.min_replay=1",
    "train.eval_episodes=2",
    "train.episodes_per_round=2",
    "train.batch_size=2",
]


@pytest.fixture
def without_extras(child_env: dict[str, str]) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``distrl ARGV`` in a child interpreter where no optional package imports."""

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", WITHOUT_EXTRAS, *argv],
            capture_output=True,
            text=True,
            timeout=300,
            env=child_env,
        )

    return run


def test_core_install_plays_and_trains_serially(without_extras, tmp_path: Path) -> None:
    played = without_extras("play", "--episodes", "2", "--json", "--run-root", str(tmp_path))
    assert played.returncode == 0, played.stderr
    assert json.loads(played.stdout)["episodes"] == 2
    trained = without_extras("train", *TINY_TRAIN, "--json", "--run-root", str(tmp_path))
    assert trained.returncode == 0, trained.stderr
    assert json.loads(trained.stdout)["updates"] == 1


@pytest.mark.parametrize(
    ("argv", "feature", "extra"),
    [
        (["train", "--runtime", "ray"], "--runtime ray", "ray"),
        (["train", "--policy", "vlm", "--vlm", "tiny"], "policy.kind=vlm", "vlm"),
        (["play", "--env", "android"], "env.backend=android", "android"),
        (["play", "--env", "miniwob"], "env.backend=miniwob", "miniwob"),
        (["train", "judge.kind=vlm"], "judge.kind=vlm", "judge"),
        (["judge-eval", "RUN_DIR"], "distrl judge-eval", "judge"),
        (["bench", "collect"], "distrl bench collect", "ray"),
        (["train", "log.wandb=true"], "log.wandb=true", "wandb"),
    ],
)
def test_a_missing_extra_is_one_line_naming_it(
    argv: list[str], feature: str, extra: str, tmp_path: Path, without_extras
) -> None:
    if argv[0] == "judge-eval":
        played = without_extras(
            "play", "--episodes", "1", "--save-screenshots", "--json", "--run-root", str(tmp_path)
        )
        argv = ["judge-eval", json.loads(played.stdout)["run_dir"]]
    else:
        argv = [*argv, "--run-root", str(tmp_path)] if argv[0] != "bench" else argv
    result = without_extras(*argv)
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        f"distrl: error: {feature} needs the '{extra}' extra: pip install 'distrl[{extra}]'\n"
    )


def test_core_modules_import_no_optional_package(child_env: dict[str, str]) -> None:
    core = [
        "distrl.cli.main",
        "distrl.cli.parser",
        *(f"distrl.cli.{name}_cmd" for name in ("play", "train", "tasks", "eval", "view")),
        *(f"distrl.cli.{name}_cmd" for name in ("judge", "bench", "config", "demos")),
        "distrl.runtime.serial",
        "distrl.runtime.training",
        "distrl.envs.devices",
        "distrl.envs.gym_backend",
        "distrl.envs.phonesim.gym_env",
        "distrl.policies",
        "distrl.policies.builtin",
        "distrl.algos.registry",
        "distrl.judges.factory",
        "distrl.logs.scalars",
    ]
    code = (
        "import importlib, json, sys\n"
        f"for name in {core!r}:\n"
        "    importlib.import_module(name)\n"
        f"print(json.dumps(sorted(m for m in {OPTIONAL!r} if m in sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=child_env
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_pyproject_core_and_extras() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {dep.split(">")[0].split("=")[0].split("<")[0] for dep in project["dependencies"]}
    assert core >= {"numpy", "torch", "pydantic", "pyyaml", "pyarrow", "gymnasium", "rich"}
    extras = project["optional-dependencies"]
    for extra, modules in EXTRAS.items():
        packages = {dep.split(">")[0].split("<")[0].split("=")[0] for dep in extras[extra]}
        assert set(modules) <= packages, extra  # each extra installs the modules it stands for
        assert not packages & core
    assert extras["all"] == [f"distrl[{','.join(EXTRAS)}]"] and "test" in extras
    assert 'pip_install -e ".[all,test]"' in (ROOT / "scripts" / "setup.sh").read_text()
