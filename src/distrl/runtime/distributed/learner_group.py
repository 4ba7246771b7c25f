"""A data-parallel learner: ``train.learner_processes`` Ray actors in one torch.distributed group.

Rank 0 is the :class:`~distrl.runtime.distributed.actors.LearnerActor`: it alone talks to the
replay and the weights board, so the rest of the runtime sees one learner. Ranks 1..N-1 are
:class:`LearnerShard` actors (one GPU each when the cluster has GPUs, else one CPU). Every rank
holds its own policy replica and optimiser, built from the same config and state, and the group
is formed once, with a TCP rendezvous on rank 0's node (127.0.0.1 on a single-node Ray).

Per update (:meth:`LearnerGroup.update`) rank 0 splits the sampled batch into contiguous shares
of whole windows, puts each share in the object store once and hands it to its shard; every rank
runs :func:`distrl.runtime.ddp.synchronized_step` on its share (micro-batch losses weighted by
their share of the whole batch's steps, gradients averaged in one all-reduce, clipped, stepped),
so the replicas stay identical without sending weights. Rank 0 then gathers the shards'
priorities (rank order is window order) and metrics and reports them as a one-process learner
would. Its state is the learner's state: checkpoints read it, and on ``--resume`` every shard
loads the same state before the group forms.

Example (what :class:`~distrl.runtime.distributed.driver.Placement` does)::

    shards = start_learner_group(cfg, learner_actor, {"num_cpus": 1}, policy_state, None)
    learner_actor.train.remote(10, 2.0)  # now data-parallel over 1 + len(shards) processes
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import numpy as np
import ray
import torch
import torch.distributed as dist

from distrl.algos.step_window import StepWindow
from distrl.config.schema import RunConfig
from distrl.errors import InputError
from distrl.runtime.components import build_learner, build_policy
from distrl.runtime.ddp import ShardStep, free_port, shard_of, window_steps
from distrl.runtime.learner import Learner
from distrl.runtime.replay_service import ReplayBatch


def restore_learner(
    cfg: RunConfig,
    policy_state: dict[str, torch.Tensor] | None,
    learner_state: dict[str, object] | None,
) -> Learner:
    """A learner built from ``cfg`` and loaded with the run's state: every rank builds its
    replica this way, so they start identical (the group's first broadcast makes sure)."""
    learner = build_learner(cfg, build_policy(cfg))
    if policy_state is not None:
        learner.policy.load_state_dict(policy_state)
    if learner_state is not None:
        learner.load_state_dict(learner_state)
    return learner


def rendezvous_address() -> str:
    """``tcp://host:port`` for a group whose rank 0 runs in this process: loopback on a
    single-node Ray (no interface beyond the machine), this node's IP on a cluster."""
    alive = [node for node in ray.nodes() if node.get("Alive")]
    host = "127.0.0.1" if len(alive) <= 1 else ray.util.get_node_ip_address()
    return f"tcp://{host}:{free_port(host)}"


def join_group(
    learner: Learner, address: str, rank: int, world_size: int, timeout_s: float
) -> None:
    """Join the learner's process group (NCCL when the replica lives on a GPU, else gloo) and
    take rank 0's trainable parameters, so the replicas start bit-identical."""
    device = learner.parameters[0].device
    if device.type == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group(
        "nccl" if device.type == "cuda" else "gloo",
        init_method=address,
        rank=rank,
        world_size=world_size,
        timeout=timedelta(seconds=timeout_s),
    )
    with torch.no_grad():
        for parameter in learner.parameters:
            dist.broadcast(parameter.data, src=0)


def leave_group() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()


class LearnerShard:
    """Rank ``rank`` (>= 1) of the learner group: a replica that steps on the windows rank 0
    sends it. Its constructor returns once the whole group has formed."""

    def __init__(
        self,
        cfg: RunConfig,
        rank: int,
        world_size: int,
        address: str,
        policy_state: dict[str, torch.Tensor] | None,
        learner_state: dict[str, object] | None,
    ):
        self.rank, self.world_size = rank, world_size
        self.learner = restore_learner(cfg, policy_state, learner_state)
        join_group(self.learner, address, rank, world_size, cfg.ray.call_timeout_seconds)

    def step(self, share: tuple[list[StepWindow], torch.Tensor], total_steps: int) -> ShardStep:
        """This rank's part of one update (returns once the gradients were all-reduced)."""
        windows, weights = share
        return self.learner.step(
            windows, weights, total_steps=total_steps, world_size=self.world_size
        )

    def ready(self) -> int:
        return self.rank

    def set_lr_scale(self, scale: float) -> None:
        self.learner.set_lr_scale(scale)

    def weights(self) -> tuple[dict[str, torch.Tensor], int]:
        """This replica's trainable tensors and version (tests check they equal rank 0's)."""
        return self.learner.weights()

    def leave(self) -> None:
        leave_group()


class LearnerGroup:
    """Rank 0's side of the group: one :meth:`update` drives every rank through one step."""

    def __init__(self, learner: Learner, shards: list[Any], timeout_s: float):
        self.learner, self.shards, self.timeout = learner, shards, timeout_s
        self.world_size = 1 + len(shards)

    def set_lr_scale(self, scale: float) -> None:
        """Every rank's optimiser steps at the same rate, or the replicas drift apart."""
        self.learner.set_lr_scale(scale)
        ray.get([shard.set_lr_scale.remote(scale) for shard in self.shards], timeout=self.timeout)

    def update(self, batch: ReplayBatch) -> tuple[np.ndarray, dict[str, float]]:
        """One data-parallel step on ``batch``; the same result as :meth:`Learner.update`
        (with advantage standardisation off; see :mod:`distrl.runtime.ddp`)."""
        weights = torch.tensor(batch.weights, dtype=torch.float32)  # Ray's arrays are read-only
        count, total = len(batch.windows), window_steps(batch.windows)
        acted = self.learner.version
        pending = []
        for rank, shard in enumerate(self.shards, start=1):
            part = shard_of(count, rank, self.world_size)
            share = ray.put((list(batch.windows[part]), weights[part]))
            pending.append(shard.step.remote(share, total))
        mine = shard_of(count, 0, self.world_size)
        own = self.learner.step(
            batch.windows[mine], weights[mine], total_steps=total, world_size=self.world_size
        )
        steps = [own, *ray.get(pending, timeout=self.timeout)]
        return Learner.report(batch, acted, steps)


def check_group_resources(processes: int, options: dict[str, float]) -> None:
    """Refuse a group the cluster cannot place (Ray would leave the shards pending forever)."""
    offered = ray.cluster_resources()
    for resource, key in (("CPU", "num_cpus"), ("GPU", "num_gpus")):
        needed = processes * float(options.get(key, 0))
        if needed > offered.get(resource, 0.0):
            raise InputError(
                f"train.learner_processes={processes} needs {needed:g} {resource} for the "
                f"learner but the Ray cluster offers {offered.get(resource, 0.0):g}; lower "
                "train.learner_processes or add nodes"
            )


def start_learner_group(
    cfg: RunConfig,
    learner: Any,
    options: dict[str, float],
    policy_state: dict[str, torch.Tensor] | None,
    learner_state: dict[str, object] | None,
) -> list[Any]:
    """Make the LearnerActor ``learner`` rank 0 of a group of ``train.learner_processes``,
    placing the other ranks with ``options`` (the learner's own resources); returns the shard
    actors (the caller kills them at shutdown)."""
    processes = cfg.train.learner_processes
    timeout = cfg.ray.call_timeout_seconds
    check_group_resources(processes, options)
    address = ray.get(learner.rendezvous.remote(), timeout=timeout)
    shards = [
        ray.remote(LearnerShard)
        .options(**options)
        .remote(cfg, rank, processes, address, policy_state, learner_state)
        for rank in range(1, processes)
    ]
    try:
        ray.get(learner.join_group.remote(address, shards), timeout=timeout)
        ray.get([shard.ready.remote() for shard in shards], timeout=timeout)
    except BaseException:
        for shard in shards:  # a half-formed group would wait on its missing ranks
            ray.kill(shard, no_restart=True)
        raise
    return shards
