"""The command line fits the ecosystem: --version, help with choices and defaults, clean metavars,
only meaningful flags per command, overrides anywhere, quiet broken pipes, ``config show``."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest
import yaml

import distrl
from distrl.cli.main import main
from distrl.cli.parser import build_parser, config_overrides, parse
from distrl.config.schema import RunConfig
from distrl.runtime.run_log import RunClock


def command_parsers() -> dict[str, argparse.ArgumentParser]:
    """Every (sub)command's parser by its prog name (``distrl tasks list``...)."""
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser) -> None:
        found[parser.prog] = parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in dict.fromkeys(action.choices.values()):
                    walk(child)

    walk(build_parser())
    return found


def flags(prog: str) -> set[str]:
    return {name for a in command_parsers()[prog]._actions for name in a.option_strings}


def test_version(capsys) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"distrl {distrl.__version__}"


def test_help_shows_choices_and_defaults() -> None:
    play = command_parsers()["distrl play"].format_help()
    assert "{general,webshop}" in play and "{oracle,noisy,random}" in play
    assert "(env.suite; default: general)" in play and "(play.episodes; default: 20)" in play
    train = " ".join(command_parsers()["distrl train"].format_help().split())
    assert "--total-minutes" in train and "warm start, training and final evaluation" in train
    assert "budget of the training phase alone" in train
    assert "module:attribute" in train and "gym:ENV_ID" in train


def test_no_internal_metavars_leak() -> None:
    for prog, parser in command_parsers().items():
        for action in parser._actions:
            if not action.option_strings or action.nargs == 0:
                continue
            longest = max(action.option_strings, key=len).lstrip("-").upper().replace("-", "_")
            if action.dest.upper() != longest:  # the destination is internal: never shown
                assert action.metavar != action.dest.upper(), (prog, action.dest)
                assert action.dest.upper() not in parser.format_help(), (prog, action.dest)


def test_only_meaningful_flags_per_command() -> None:
    assert {"--seed", "--run-root", "--run-name", "--preset"} <= flags("distrl play")
    assert {"--seed", "--run-root", "--preset"} <= flags("distrl train")
    for prog in ("distrl tasks list", "distrl tasks templates", "distrl fake-vlm"):
        assert not {"--seed", "--run-root", "--run-name"} & flags(prog), prog
    assert "--run-root" not in flags("distrl eval") and "--seed" in flags("distrl eval")
    assert not {"--preset", "--seed", "--run-root"} & flags("distrl view")
    assert main(["tasks", "list", "--seed", "3"]) == 2


def test_overrides_anywhere_after_the_command(capsys) -> None:
    parser = build_parser()
    args = parse(parser, ["judge-eval", "RUN", "--episodes", "1", "judge.vlm.model=m", "--json"])
    assert args.run_dir == "RUN" and args.judge_episodes == 1 and args.json
    assert args.overrides == ["judge.vlm.model=m"]
    argv = ["tasks", "list", "env.split=test", "--limit", "1", "env.suite=webshop", "--json"]
    assert main(argv) == 0
    listing = json.loads(capsys.readouterr().out)
    assert (listing["suite"], listing["split"], len(listing["tasks"])) == ("webshop", "test", 1)


def test_a_stray_word_after_options_is_one_usage_line(capsys) -> None:
    for argv in (["tasks", "list", "--limit", "1", "stray"], ["view", "RUN", "--json", "a=b"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("distrl: error: "), err
        assert "stray" in err or "a=b" in err


def test_piping_into_head_ends_without_a_traceback(child_env: dict[str, str]) -> None:
    """The listing (hundreds of KB) outgrows the pipe's buffer, so the reader's exit breaks the
    pipe while distrl still writes."""
    command = [sys.executable, "-m", "distrl.cli.main", "tasks", "list", "--suite", "webshop"]
    for extra in (["--json"], []):
        child = subprocess.Popen(
            [*command, *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**child_env, "COLUMNS": "120"},
        )
        assert child.stdout is not None and child.stderr is not None
        first = child.stdout.read(1)
        child.stdout.close()  # what `head -c 1` does after its byte
        err = child.stderr.read().decode()
        assert child.wait(timeout=120) in (0, 141), err
        assert first and err == "", err


def test_config_show(capsys) -> None:
    assert main(["config", "show", "--preset", "quick", "train.minutes=3", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["train"]["minutes"] == 3 and shown["train"]["warm_start_episodes"] == 400
    assert RunConfig.model_validate(shown).env.suite == "general"
    assert main(["config", "show", "--suite", "webshop"]) == 2  # no such flag: overrides only
    capsys.readouterr()
    assert main(["config", "show", "env.suite=webshop"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["env"]["suite"] == "webshop"
    assert main(["config", "show", "train.minutes=-1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "train.minutes" in err


def test_total_budget_counts_from_the_command_start() -> None:
    cfg = RunConfig(train={"minutes": 10, "total_minutes": 1})
    clock = RunClock(cfg, command_started=0.0)  # the command started long before the loop
    assert clock.out_of_time() and clock.elapsed < 60
    fresh = RunClock(cfg)
    assert not fresh.out_of_time()
    fresh.reserve = 61.0  # the last evaluation took longer than what is left
    assert fresh.out_of_time()
    assert not RunClock(RunConfig(train={"minutes": 10}), command_started=0.0).out_of_time()


@pytest.mark.parametrize("flag", ["--total-minutes", "--minutes"])
def test_budget_flags_set_their_keys(flag: str) -> None:
    key = "total_minutes" if flag == "--total-minutes" else "minutes"
    args = parse(build_parser(), ["train", flag, "2.5"])
    assert f"train.{key}=2.5" in config_overrides(args)
