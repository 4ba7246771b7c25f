"""judge_eval's metrics against a hand count on real PhoneSim episodes, and ``distrl judge-eval``
end to end against a fake endpoint on a free port."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from distrl.cli.judge_cmd import run, run_fake_vlm
from distrl.config.loader import load_config
from distrl.config.schema import VLMJudgeConfig
from distrl.core.action import ActionType
from distrl.core.trajectory import Trajectory
from distrl.errors import InputError
from distrl.judges.fake_endpoint import FakeChatEndpoint, Fault, ReceivedRequest
from distrl.judges.judge_eval import episode_actions, episode_screenshots, judge_eval
from distrl.judges.prompt import build_prompt
from distrl.judges.vlm import JudgeUnavailable, VLMJudge
from distrl.runtime.play import play
from distrl.store import TrajectoryStore

EPISODES = 8


def _play(root: Path, name: str, episodes: int, save_screenshots: bool) -> Path:
    """A run folder of noisy-oracle PhoneSim episodes (seed 3: 5 successes, 3 failures)."""
    cfg = load_config(
        None,
        [
            "play.policy=noisy",
            "play.noise=0.5",
            f"play.episodes={episodes}",
            f"play.save_screenshots={str(save_screenshots).lower()}",
            f"run_root={root}",
            f"run_name={name}",
            "seed=3",
        ],
    )
    return play(cfg).run_dir


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _play(tmp_path_factory.mktemp("runs"), "screens", EPISODES, save_screenshots=True)


@pytest.fixture(scope="module")
def trajectories(run_dir: Path) -> list[Trajectory]:
    loaded = TrajectoryStore(run_dir / "trajectories").load()
    truth = [t.success for t in loaded]
    assert len(loaded) == EPISODES and any(truth) and not all(truth)  # both kinds present
    return loaded


@pytest.fixture
def fake() -> Iterator[FakeChatEndpoint]:
    with FakeChatEndpoint(mode="scripted", answers=[]) as endpoint:
        yield endpoint


def fast_config(url: str) -> VLMJudgeConfig:
    return VLMJudgeConfig(
        base_url=url, model="fake-vlm", requests_per_minute=60_000, backoff_seconds=0.01
    )


def request_key(text: str, last_image: bytes) -> str:
    return hashlib.sha256(text.encode() + last_image).hexdigest()


def test_metrics_match_a_hand_count(trajectories: list[Trajectory], fake: FakeChatEndpoint) -> None:
    cfg = fast_config(fake.url)
    # Plan each episode's answer: the truth, flipped for every third episode, and one refusal.
    planned: dict[str, str] = {}
    judged: list[bool] = []
    for index, trajectory in enumerate(trajectories):
        prompt = build_prompt(
            trajectory.task, episode_screenshots(trajectory), episode_actions(trajectory), cfg
        )
        says_success = trajectory.success != (index % 3 == 0)
        answer = "Status: success" if says_success else "Reasoning...\n**Status:** failure"
        if index == 1:
            answer, says_success = "I can't evaluate phone screenshots.", False
        planned[request_key(prompt.text, prompt.screenshots_png[-1])] = answer
        judged.append(says_success)
    assert len(planned) == len(trajectories)  # every episode makes a distinct request

    def answer(request: ReceivedRequest) -> str:
        return planned[request_key(request.prompt_text, request.images[-1])]

    with FakeChatEndpoint(mode="scripted", answers=answer) as endpoint:
        judge = VLMJudge(fast_config(endpoint.url))
        metrics = judge_eval(trajectories, judge, workers=3)

    truth = [t.success for t in trajectories]
    pairs = list(zip(truth, judged, strict=True))
    tp = pairs.count((True, True))
    fp = pairs.count((False, True))
    tn = pairs.count((False, False))
    fn = pairs.count((True, False))
    positives, negatives = tp + fn, tn + fp
    assert (positives, negatives) == (sum(truth), len(truth) - sum(truth))
    assert metrics["n"] == EPISODES
    assert (metrics["tp"], metrics["fp"], metrics["tn"], metrics["fn"]) == (tp, fp, tn, fn)
    assert (metrics["positives"], metrics["negatives"]) == (positives, negatives)
    assert metrics["agreement"] == round((tp + tn) / EPISODES, 4)
    assert metrics["false_positive_rate"] == round(fp / negatives, 4)
    assert metrics["false_negative_rate"] == round(fn / positives, 4)
    assert metrics["judged_success_rate"] == round((tp + fp) / EPISODES, 4)
    assert metrics["unparseable"] == 1
    assert metrics["requests"] == EPISODES and metrics["cache_hits"] == 0
    assert metrics["mean_seconds_per_judgement"] > 0

    # The same judge again: every verdict but the refusal comes from the cache.
    with FakeChatEndpoint(mode="scripted", answers=answer) as endpoint:
        judge = VLMJudge(fast_config(endpoint.url))
        judge_eval(trajectories, judge)
        again = judge_eval(trajectories, judge)
    assert again["cache_hits"] == EPISODES - 1 and again["requests"] == 1
    assert again["tp"] == tp and again["fp"] == fp


def test_the_judge_sees_the_final_screen_and_every_action(
    trajectories: list[Trajectory], fake: FakeChatEndpoint
) -> None:
    trajectory = trajectories[0]
    fake.add_answers("Status: success")
    judge_eval([trajectory], VLMJudge(fast_config(fake.url)))
    (request,) = fake.requests
    assert len(request.images) == 2
    prompt = build_prompt(
        trajectory.task,
        episode_screenshots(trajectory),
        episode_actions(trajectory),
        fast_config(""),
    )
    assert request.images == list(prompt.screenshots_png)
    assert trajectory.task.instruction in request.prompt_text
    assert f"{len(trajectory)}. " in request.prompt_text


def test_rates_are_none_without_a_class(trajectories: list[Trajectory]) -> None:
    class AlwaysYes:
        def judge(self, task: Any, screenshots: Any, actions: Any) -> bool:
            return True

    successes = [t for t in trajectories if t.success]
    metrics = judge_eval(successes, AlwaysYes())
    assert metrics["false_positive_rate"] is None and metrics["negatives"] == 0
    assert metrics["false_negative_rate"] == 0.0 and metrics["agreement"] == 1.0
    assert "requests" not in metrics  # a judge without stats()


def test_no_screenshots_is_a_clear_error(tmp_path: Path) -> None:
    bare = _play(tmp_path, "bare", 2, save_screenshots=False)
    loaded = TrajectoryStore(bare / "trajectories").load()
    with pytest.raises(InputError, match="--save-screenshots"):
        judge_eval(loaded, VLMJudge(fast_config("http://127.0.0.1:9/v1")))
    with pytest.raises(InputError, match="no trajectories"):
        judge_eval([], VLMJudge(fast_config("http://127.0.0.1:9/v1")))


def test_judge_unavailable_propagates(
    trajectories: list[Trajectory], fake: FakeChatEndpoint
) -> None:
    fake.inject(Fault.server_error(), times=50)
    cfg = fast_config(fake.url).model_copy(update={"max_retries": 1})
    with pytest.raises(JudgeUnavailable, match="unavailable after 2 attempt"):
        judge_eval(trajectories, VLMJudge(cfg), workers=2)
    # the queued judgements are skipped once one fails: only those in flight finish their tries
    assert len(fake.requests) <= 2 * 2 < 2 * len(trajectories)


# -- the CLI ------------------------------------------------------------------------------------


def judge_args(run_dir: Path | str, url: str | None, **changes: Any) -> argparse.Namespace:
    values: dict[str, Any] = {
        "command": "judge-eval",
        "run_dir": str(run_dir),
        "judge_episodes": None,
        "judge_base_url": url,
        "judge_model": "fake-vlm",
        "preset": None,
        "seed": None,
        "run_root": None,
        "run_name": None,
        "json": True,
        "overrides": [],
    }
    values.update(changes)
    return argparse.Namespace(**values)


def demo_verdict(trajectory: Trajectory) -> bool:
    """What the demo fake answers, computed here from its documented rule."""
    if (
        trajectory.steps
        and trajectory.steps[-1].action.action_type is ActionType.STATUS_TASK_COMPLETE
    ):
        return True
    prompt = build_prompt(
        trajectory.task,
        episode_screenshots(trajectory),
        episode_actions(trajectory),
        VLMJudgeConfig(),
    )
    return hashlib.sha256(prompt.screenshots_png[-1]).digest()[0] % 2 == 0


def test_cli_judge_eval_json_against_the_demo_fake(
    run_dir: Path, trajectories: list[Trajectory], capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeChatEndpoint() as endpoint:  # demo mode, as `distrl fake-vlm` serves it
        code = run(
            judge_args(run_dir, endpoint.url, judge_episodes=6),
            ["judge.vlm.requests_per_minute=60000"],
        )
        assert len(endpoint.requests) == 6
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    expected = [(t.success, demo_verdict(t)) for t in trajectories[:6]]
    assert summary["n"] == 6
    assert summary["tp"] == expected.count((True, True))
    assert summary["fp"] == expected.count((False, True))
    assert summary["tn"] == expected.count((False, False))
    assert summary["fn"] == expected.count((True, False))
    assert summary["model"] == "fake-vlm" and summary["base_url"] == endpoint.url
    assert summary["unparseable"] == 0 and summary["requests"] == 6


def test_cli_table_output_and_user_override_wins(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeChatEndpoint(models=["served"]) as endpoint:
        args = judge_args(run_dir, endpoint.url, json=False, judge_episodes=2)
        overrides = ["judge.vlm.model=served", "judge.vlm.requests_per_minute=60000"]
        assert run(args, overrides) == 0
    out = capsys.readouterr().out
    assert "agreement" in out and "false_positive_rate" in out and "served" in out


def test_cli_errors_are_one_line_input_errors(run_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no trajectories/"):
        run(judge_args(tmp_path / "missing", "http://127.0.0.1:9/v1"), [])
    with pytest.raises(InputError, match="--episodes must be >= 1"):
        run(judge_args(run_dir, "http://127.0.0.1:9/v1", judge_episodes=0), [])
    with FakeChatEndpoint(mode="scripted", answers=[]) as endpoint:
        url = endpoint.url
    with pytest.raises(InputError, match="is the endpoint running"):  # nothing listens there
        run(judge_args(run_dir, url, judge_episodes=1), ["judge.vlm.max_retries=0"])
    with (
        FakeChatEndpoint(api_key="right") as endpoint,
        pytest.raises(InputError, match="judge.vlm.api_key_env") as caught,
    ):
        run(
            judge_args(run_dir, endpoint.url, judge_episodes=1),
            ["judge.vlm.api_key_env=DISTRL_TEST_NO_SUCH_KEY"],
        )
    assert "\n" not in str(caught.value)


def test_fake_vlm_rejects_overrides() -> None:
    args = argparse.Namespace(fake_vlm_port=0, fake_vlm_host="127.0.0.1", fake_vlm_key=None)
    with pytest.raises(InputError, match="no config overrides"):
        run_fake_vlm(args, ["a=b"])


def test_fake_vlm_serves_until_ctrl_c(run_dir: Path) -> None:
    """The foreground server as a user runs it: prints its URL, answers, stops on SIGINT."""
    code = (
        "import argparse, sys; from distrl.cli.judge_cmd import run_fake_vlm; "
        "sys.exit(run_fake_vlm(argparse.Namespace(fake_vlm_port=0, fake_vlm_host='127.0.0.1', "
        "fake_vlm_key='k'), []))"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        url = line.split()[4]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        trajectory = TrajectoryStore(run_dir / "trajectories").load(limit=1)
        judge = VLMJudge(fast_config(url), api_key="k")
        metrics = judge_eval(trajectory, judge)
        assert metrics["n"] == 1 and metrics["requests"] == 1
    finally:
        process.send_signal(signal.SIGINT)
        try:
            _, err = process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()  # never leave a server behind, even when the test fails
            process.communicate()
            raise
    assert process.returncode == 0
    assert "POST /v1/chat/completions 200 (2 images) Status:" in err
    assert "k" not in err.replace("(", " ").split()  # the key is never printed


def test_distrl_main_wires_judge_eval(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from distrl.cli.main import main

    with FakeChatEndpoint() as endpoint:
        argv = ["judge-eval", str(run_dir), "judge.vlm.requests_per_minute=60000"]
        argv += ["--base-url", endpoint.url, "--model", "m", "--episodes", "2", "--json"]
        assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["n"] == 2 and summary["model"] == "m" and summary["base_url"] == endpoint.url
    assert main(["judge-eval", str(run_dir / "nope"), "--json"]) == 2
    assert "no trajectories/" in capsys.readouterr().err
