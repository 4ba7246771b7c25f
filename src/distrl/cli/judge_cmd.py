"""``distrl judge-eval`` (a VLM judge against stored ground truth) and ``distrl fake-vlm``.

``judge-eval RUN_DIR`` loads the run's trajectories (stored with ``--save-screenshots``), judges
each with the VLM judge of the config's ``judge.vlm`` section and prints agreement and error rates.
``fake-vlm`` serves :class:`~distrl.judges.fake_endpoint.FakeChatEndpoint` in demo mode in the
foreground, so the whole pipeline can be tried without a model::

    distrl play --policy noisy --episodes 20 --save-screenshots --run-name demo
    distrl fake-vlm &                       # http://127.0.0.1:8000/v1
    distrl judge-eval runs/demo --json
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from distrl.cli.foreground import interrupt_on_signals
from distrl.cli.main import emit_json
from distrl.cli.progress import progress_bar
from distrl.config.loader import load_config
from distrl.config.schema import RunConfig
from distrl.core.trajectory import Trajectory
from distrl.errors import InputError
from distrl.extras import require
from distrl.judges.fake_endpoint import FakeChatEndpoint, ReceivedRequest
from distrl.judges.judge_eval import judge_eval
from distrl.store import TrajectoryStore
from distrl.store.parquet_store import StoreError

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _trajectory_folder(run_dir: str) -> Path:
    """A run folder's ``trajectories/``, or the given folder when it holds the shards itself."""
    path = Path(run_dir)
    if (path / "trajectories").is_dir():
        return path / "trajectories"
    if path.is_dir() and any(path.glob("shard-*.parquet")):
        return path
    raise InputError(
        f"run folder {run_dir!r} has no trajectories/ "
        "(make one with `distrl play --save-screenshots`)"
    )


def _load_trajectories(run_dir: str, episodes: int | None) -> list[Trajectory]:
    if episodes is not None and episodes < 1:
        raise InputError(f"--episodes must be >= 1, got {episodes}")
    try:
        return TrajectoryStore(_trajectory_folder(run_dir)).load(limit=episodes)
    except StoreError as error:
        raise InputError(f"cannot read the trajectories of {run_dir!r}: {error}") from None


def _judge_config(args: argparse.Namespace, overrides: list[str]) -> RunConfig:
    """The config with ``--base-url``/``--model`` applied to judge.vlm; a user's own
    ``judge.vlm.base_url=...``/``model=...`` override wins over the flag.

    The flags are assigned as text rather than passed as ``key=value`` overrides, because
    overrides are YAML-parsed and a model named ``1.5`` would arrive as a number."""
    cfg = load_config(getattr(args, "preset", None), overrides)
    user_keys = {item.partition("=")[0].strip() for item in overrides}
    base_url = getattr(args, "judge_base_url", None)
    model = getattr(args, "judge_model", None)
    if base_url is not None and "judge.vlm.base_url" not in user_keys:
        cfg.judge.vlm.base_url = str(base_url)
    if model is not None and "judge.vlm.model" not in user_keys:
        cfg.judge.vlm.model = str(model)
    return cfg


def run(args: argparse.Namespace, overrides: list[str]) -> int:
    """``distrl judge-eval RUN_DIR``: judge stored episodes, print agreement with ground truth."""
    cfg = _judge_config(args, overrides)
    trajectories = _load_trajectories(args.run_dir, getattr(args, "judge_episodes", None))
    as_json = bool(getattr(args, "json", False))
    vlm = cfg.judge.vlm
    require("openai", "judge", "distrl judge-eval")
    from distrl.judges.vlm import JudgeUnavailable, VLMJudge

    judge = VLMJudge(vlm)
    err = Console(stderr=True)
    try:
        with progress_bar(
            TextColumn(f"[bold]judge-eval[/] {escape(vlm.model)} at {escape(vlm.base_url)}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err,
            keep=not as_json,
        ) as progress:
            bar = progress.add_task("judge", total=len(trajectories))
            metrics = judge_eval(trajectories, judge, on_judged=lambda *_: progress.advance(bar))
    except JudgeUnavailable as error:
        raise InputError(
            f"{error} (is the endpoint running? `distrl fake-vlm` serves a local fake)"
        ) from None
    finally:
        judge.close()
    summary: dict[str, Any] = {
        **metrics,
        "model": vlm.model,
        "base_url": vlm.base_url,
        "run_dir": str(args.run_dir),
    }
    if as_json:
        emit_json(summary)
        return 0
    _print_table(summary)
    return 0


def _show(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _print_table(summary: dict[str, Any]) -> None:
    out = Console(file=sys.stdout)
    table = Table(
        "metric", "value", title=f"judge-eval: {summary['model']} on {summary['run_dir']}"
    )
    for key in ("agreement", "false_positive_rate", "false_negative_rate"):
        table.add_row(f"[bold]{key}[/]", _show(summary[key]))
    table.add_section()
    for key in ("judged_success_rate", "true_success_rate", "n", "tp", "fp", "tn", "fn"):
        table.add_row(key, _show(summary[key]))
    table.add_section()
    for key in (
        "unparseable",
        "requests",
        "cache_hits",
        "retries",
        "mean_seconds_per_judgement",
        "mean_request_seconds",
    ):
        if key in summary:
            table.add_row(key, _show(summary[key]))
    out.print(table)
    out.print(
        f"{summary['n']} episodes judged in {summary['wall_seconds']:.1f} s by "
        f"{summary['model']} at {summary['base_url']}"
    )


def run_fake_vlm(args: argparse.Namespace, overrides: list[str]) -> int:
    """``distrl fake-vlm``: serve the demo-mode fake endpoint until Ctrl-C."""
    if overrides:
        raise InputError(f"fake-vlm takes no config overrides, got {overrides[0]!r}")
    host = getattr(args, "fake_vlm_host", None) or "127.0.0.1"
    port = getattr(args, "fake_vlm_port", None)
    port = 8000 if port is None else int(port)
    if not 0 <= port <= 65535:
        raise InputError(f"--port must be in 0..65535, got {port}")
    err = Console(stderr=True, highlight=False)

    def report(request: ReceivedRequest) -> None:
        """One line per request: status, images and the verdict line (never headers or keys)."""
        lines = (request.answer or "").strip().splitlines()
        outcome = request.fault or (lines[-1] if lines else "")
        images = len(request.images)
        line = f"POST /v1/chat/completions {request.status} ({images} images) {outcome}"
        err.print(line, markup=False)

    fake = FakeChatEndpoint(
        host=host, port=port, api_key=getattr(args, "fake_vlm_key", None), on_request=report
    )
    try:
        fake.start()
    except OSError as error:
        raise InputError(f"cannot serve on {host}:{port}: {error.strerror or error}") from None
    interrupt_on_signals()
    try:
        if host not in _LOOPBACK:
            err.print(f"[yellow]warning:[/] serving on {host}, reachable beyond this machine")
        print(f"fake VLM endpoint at {fake.url} (demo mode), Ctrl-C to stop", flush=True)
        err.print(
            "demo verdicts: success when the agent's last action is STATUS_TASK_COMPLETE, else a "
            "coin seeded by the last screenshot's hash; agreement measured against it tests the "
            "pipeline, not a model"
        )
        stop = threading.Event()
        while not stop.wait(1.0):  # short waits keep Ctrl-C prompt on every platform
            pass
    except KeyboardInterrupt:
        err.print("fake-vlm: stopped")
    finally:
        fake.stop()
    return 0
