"""Ray placement: a local Ray bound to loopback, and workers placed by the device resource on a
two-node cluster (ray.cluster_utils.Cluster: real raylets, one machine)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import ray
from ray.cluster_utils import Cluster

from distrl.cli.main import main
from distrl.config.schema import RunConfig
from distrl.errors import InputError
from distrl.runtime.distributed.driver import train_ray
from distrl.runtime.distributed.session import (
    TASK_EVENTS_VARIABLE,
    bound_task_history,
    ray_session,
)


def _cfg(tmp_path: Path) -> RunConfig:
    cfg = RunConfig()
    cfg.run_root = str(tmp_path)
    cfg.train.runtime = "ray"
    cfg.train.devices = 4
    cfg.train.min_replay = 16
    cfg.train.batch_size = 8
    cfg.train.eval_episodes = 2
    cfg.train.final_eval_episodes = 2
    cfg.train.max_updates = 3
    cfg.ray.workers = 2
    cfg.ray.num_cpus = 2
    cfg.ray.call_timeout_seconds = 120
    return cfg


def test_local_ray_listens_on_loopback_with_token_auth_and_no_dashboard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """...and its GCS keeps a bounded task history (``ray.task_events_kept``)."""
    monkeypatch.setenv(TASK_EVENTS_VARIABLE, "unset by the test")  # restored afterwards
    monkeypatch.delenv(TASK_EVENTS_VARIABLE)
    cfg = _cfg(tmp_path)
    cfg.ray.task_events_kept = 1234
    assert not ray.is_initialized()
    with ray_session(cfg):
        context = ray.get_runtime_context()
        assert context.gcs_address.startswith("127.0.0.1:")
        assert {node["NodeManagerAddress"] for node in ray.nodes()} == {"127.0.0.1"}
        assert os.environ.get("RAY_AUTH_MODE") == "token"
        assert ray.cluster_resources()["distrl_device"] == 4
        node = ray._private.worker.global_worker.node
        assert not node.address_info.get("webui_url")
        (gcs,) = node.all_processes["gcs_server"]
        environment = Path(f"/proc/{gcs.process.pid}/environ").read_bytes().split(b"\0")
        assert f"{TASK_EVENTS_VARIABLE}=1234".encode() in environment
    assert not ray.is_initialized()


def test_a_task_history_limit_the_user_exported_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TASK_EVENTS_VARIABLE, "77")
    bound_task_history(5)
    assert os.environ[TASK_EVENTS_VARIABLE] == "77"


def test_too_few_device_slots_is_a_clear_error(tmp_path: Path) -> None:
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    try:
        cfg = _cfg(tmp_path)
        cfg.ray.address = cluster.address
        with pytest.raises(InputError, match="offers 0 units of the device resource"):
            train_ray(cfg)
    finally:
        ray.shutdown()
        cluster.shutdown()


def test_workers_are_placed_on_the_node_that_offers_devices(tmp_path: Path) -> None:
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 2})
    device_node = cluster.add_node(num_cpus=1, resources={"distrl_device": 4})
    try:
        cfg = _cfg(tmp_path)
        cfg.ray.address = cluster.address
        result = train_ray(cfg)
        assert result.updates == 3 and result.episodes > 0
        assert result.extra["worker_nodes"] == [device_node.node_id] * 2
    finally:
        ray.shutdown()
        cluster.shutdown()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ray-address", "127.0.0.1:1"], "ray.address=127.0.0.1:1: no Ray cluster answers"),
        (["--ray-address", "nonsense"], "expected 'auto' or host:port"),
        (["--workers", "9", "--devices", "4"], "ray.workers=9 exceeds train.devices=4"),
        (["--mode", "lockstep"], "train.mode"),
    ],
)
def test_bad_runtime_settings_fail_in_one_line_before_any_work(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["train", "--runtime", "ray", "--run-root", str(tmp_path), "--json", *args])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1
    assert not any(tmp_path.iterdir())  # no run folder, no warm start
