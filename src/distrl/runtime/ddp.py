"""Learner updates over several processes (gradients all-reduced over torch.distributed) and
gradient accumulation.

One update on a batch of replayed windows is split into ``world_size x accumulation``
micro-batches of whole windows (Retrace runs along a window, so a window is never cut). Each
process runs its micro-batches through the algorithm's loss, the gradients are averaged over the
processes in one flat all-reduce (NCCL on GPUs, gloo on CPU; what ``DistributedDataParallel``
does in buckets, without routing the loss through a wrapper module, so act/score_actions and the
loss stay as they are and a process with no windows simply contributes nothing), the gradient
norm is clipped and every process takes the same optimiser step, so the replicas stay identical
without sending weights. :func:`synchronized_step` is that step; the one-shot
:func:`ddp_update` below and the persistent learner group
(:mod:`distrl.runtime.distributed.learner_group`) both run it.

How micro-batch losses combine. A-RIDE's loss is a mean over the batch's valid steps, so micro-batch
``i`` with ``S_i`` of the batch's ``S`` steps is weighted ``S_i / S``; the all-reduce averages over
the ``W`` processes, so each process scales its losses by ``W`` as well. The summed gradient is
then exactly the full-batch gradient, with one exception: advantage standardisation
(``aride.normalize_advantages``) uses each micro-batch's own mean and spread, as in any
gradient-accumulation setup. With it off, a multi-process update equals the single-process update
on the same batch (the tests check parameters to 1e-5); with it on, it equals one process
accumulating the same micro-batches.

:func:`ddp_update` runs one such update in ``world_size`` fresh processes (each rebuilds the policy
with ``make_policy``: a tiny base from its seed, a real base from its path, so only the trainable
tensors travel) and returns the new trainable tensors, the windows' priorities and the metrics.
"""

from __future__ import annotations

import socket
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

from distrl.algos.step_window import StepWindow

__all__ = [
    "DDPResult",
    "ShardStep",
    "accumulate_gradients",
    "average_gradients",
    "ddp_update",
    "split_windows",
    "synchronized_step",
]

#: (loss, priorities, metrics) of a batch of windows.
LossOutput = tuple[torch.Tensor, torch.Tensor, dict]
LossFn = Callable[[Any, Sequence[StepWindow], torch.Tensor], LossOutput]
#: The loss of a policy already bound: (windows, importance weights) -> LossOutput.
Forward = Callable[[Sequence[StepWindow], torch.Tensor], LossOutput]


def split_windows(count: int, parts: int) -> list[slice]:
    """``count`` windows as at most ``parts`` contiguous, nearly equal, non-empty slices."""
    parts = max(1, min(parts, count))
    base, extra = divmod(count, parts)
    slices, start = [], 0
    for index in range(parts):
        size = base + (1 if index < extra else 0)
        slices.append(slice(start, start + size))
        start += size
    return slices


def window_steps(windows: Sequence[StepWindow]) -> int:
    """Steps in ``windows``: the denominator of the micro-batch weights."""
    return sum(len(w) for w in windows)


def accumulate_gradients(
    forward: Forward,
    windows: Sequence[StepWindow],
    weights: torch.Tensor,
    parts: int,
    *,
    total_steps: int | None = None,
    world_size: int = 1,
) -> tuple[torch.Tensor, torch.Tensor, dict[str, float]]:
    """Backpropagate ``windows`` as ``parts`` micro-batches, each loss weighted by its share of
    ``total_steps`` (the whole batch's, across processes) times ``world_size``.

    Returns the combined loss (detached), the windows' priorities in order, and step-weighted
    metrics (summing them over the processes gives the whole batch's)."""
    total = total_steps if total_steps is not None else window_steps(windows)
    loss_sum = torch.zeros(())
    priorities, metrics = [], {}
    for part in split_windows(len(windows), parts) if windows else []:
        micro = list(windows[part])
        share = window_steps(micro) / max(total, 1)
        loss, micro_priorities, micro_metrics = forward(micro, weights[part])
        (loss * share * world_size).backward()
        loss_sum = loss_sum + loss.detach().cpu() * share
        priorities.append(micro_priorities.detach().cpu())
        for key, value in micro_metrics.items():
            metrics[key] = metrics.get(key, 0.0) + float(value) * share
    merged = torch.cat(priorities) if priorities else torch.zeros(0)
    return loss_sum, merged, metrics


def average_gradients(parameters: Sequence[torch.Tensor], world_size: int) -> None:
    """Average the gradients of ``parameters`` over the process group in one flat all-reduce.

    A parameter no process touched keeps ``grad=None`` (Adam then leaves it alone, exactly as a
    single process would); one that only some touched counts zeros for the others. One extra
    slot per parameter carries the "has a gradient" flag through the same all-reduce."""
    if not parameters:
        return
    device = parameters[0].device
    flags = torch.tensor(
        [0.0 if p.grad is None else 1.0 for p in parameters], dtype=torch.float32, device=device
    )
    grads = [
        (torch.zeros_like(p) if p.grad is None else p.grad).reshape(-1).float() for p in parameters
    ]
    flat = torch.cat([*grads, flags])
    dist.all_reduce(flat)
    offset = 0
    touched = flat[-len(parameters) :]
    for index, parameter in enumerate(parameters):
        size = parameter.numel()
        if touched[index] > 0:
            averaged = flat[offset : offset + size] / world_size
            parameter.grad = averaged.view_as(parameter).to(parameter.dtype).clone()
        else:
            parameter.grad = None
        offset += size


@dataclass
class ShardStep:
    """One process's part of an update: its windows' loss share, priorities and metrics."""

    loss: float
    priorities: np.ndarray
    metrics: dict[str, float]
    grad_norm: float


def synchronized_step(
    forward: Forward,
    parameters: Sequence[torch.Tensor],
    optimizer: torch.optim.Optimizer,
    windows: Sequence[StepWindow],
    weights: torch.Tensor,
    *,
    accumulation: int,
    grad_clip: float,
    total_steps: int | None = None,
    world_size: int = 1,
) -> ShardStep:
    """One optimiser step of this process on its ``windows`` of a batch of ``total_steps``
    steps: accumulate, average the gradients over the group (``world_size > 1``), clip, step.

    Every process clips the same averaged gradient and steps the same optimiser state, so the
    replicas stay identical."""
    optimizer.zero_grad()
    loss, priorities, metrics = accumulate_gradients(
        forward, windows, weights, accumulation, total_steps=total_steps, world_size=world_size
    )
    if world_size > 1:
        average_gradients(parameters, world_size)
    grad_norm = torch.nn.utils.clip_grad_norm_(parameters, grad_clip)
    optimizer.step()
    return ShardStep(float(loss), priorities.numpy(), metrics, float(grad_norm))


def merge_steps(steps: Sequence[ShardStep]) -> tuple[np.ndarray, dict[str, float]]:
    """The whole batch's priorities (in window order when ``steps`` are in rank order) and
    metrics from every process's part."""
    metrics: dict[str, float] = {}
    for step in steps:
        for key, value in step.metrics.items():
            metrics[key] = metrics.get(key, 0.0) + value
    metrics["loss"] = sum(step.loss for step in steps)
    metrics["grad_norm"] = steps[0].grad_norm  # the same on every process
    return np.concatenate([step.priorities for step in steps]), metrics


def shard_of(count: int, rank: int, world_size: int) -> slice:
    """Rank ``rank``'s contiguous share of ``count`` windows (empty when there are fewer windows
    than processes: that rank still joins the all-reduce)."""
    slices = split_windows(count, world_size)
    return slices[rank] if rank < len(slices) else slice(count, count)


class DDPResult:
    """What :func:`ddp_update` returns (from rank 0)."""

    def __init__(self, state: dict[str, torch.Tensor], priorities: torch.Tensor, metrics: dict):
        self.state = state
        self.priorities = priorities
        self.metrics = metrics


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now (for a process group's rendezvous)."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def _rank_main(
    rank: int,
    world_size: int,
    port: int,
    make_policy: Callable[[], nn.Module],
    state: dict[str, torch.Tensor],
    windows: list[StepWindow],
    weights: torch.Tensor,
    make_loss: Callable[[], LossFn],
    accumulation: int,
    lr: float,
    grad_clip: float,
    out_file: str,
) -> None:
    """One process of :func:`ddp_update`."""
    torch.set_num_threads(1)  # the processes share the machine's cores
    cuda = torch.cuda.is_available() and torch.cuda.device_count() >= world_size
    if cuda:
        torch.cuda.set_device(rank)
    dist.init_process_group(
        "nccl" if cuda else "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=world_size,
    )
    try:
        policy = make_policy()
        policy.load_state_dict(state)
        loss_fn = make_loss()
        parameters = [p for p in policy.parameters() if p.requires_grad]
        optimizer = torch.optim.Adam(parameters, lr=lr)
        if len(windows) < world_size:
            raise ValueError(f"{len(windows)} windows cannot feed {world_size} processes")
        mine = shard_of(len(windows), rank, world_size)
        step = synchronized_step(
            lambda micro, w: loss_fn(policy, micro, w),
            parameters,
            optimizer,
            windows[mine],
            weights[mine],
            accumulation=accumulation,
            grad_clip=grad_clip,
            total_steps=window_steps(windows),
            world_size=world_size,
        )
        gathered: list[Any] = [None] * world_size
        dist.all_gather_object(gathered, step)
        if rank == 0:
            priorities, metrics = merge_steps(gathered)
            trainable = getattr(policy, "trainable_state_dict", policy.state_dict)
            torch.save(
                {
                    "state": {k: v.detach().cpu() for k, v in trainable().items()},
                    "priorities": torch.from_numpy(priorities),
                    "metrics": metrics,
                },
                out_file,
            )
    finally:
        dist.destroy_process_group()


def ddp_update(
    make_policy: Callable[[], nn.Module],
    state: dict[str, torch.Tensor],
    windows: Sequence[StepWindow],
    weights: torch.Tensor,
    make_loss: Callable[[], LossFn],
    *,
    world_size: int,
    accumulation: int = 1,
    lr: float,
    grad_clip: float,
) -> DDPResult:
    """One learner update of the policy ``make_policy()`` (loaded with ``state``) on ``windows``
    by ``world_size`` DDP processes, each accumulating ``accumulation`` micro-batches.

    ``make_policy`` and ``make_loss`` must be picklable (module-level functions or
    ``functools.partial`` of them): each process builds its own replica. Every process starts a
    fresh Adam, so this is one step from ``state``, as a learner's first update would be."""
    with tempfile.TemporaryDirectory(prefix="distrl-ddp-") as folder:
        out_file = str(Path(folder) / "rank0.pt")
        mp.start_processes(
            _rank_main,
            args=(
                world_size,
                free_port(),
                make_policy,
                state,
                list(windows),
                weights,
                make_loss,
                accumulation,
                lr,
                grad_clip,
                out_file,
            ),
            nprocs=world_size,
            join=True,
            start_method="spawn",
        )
        result = torch.load(out_file, weights_only=True)
    return DDPResult(result["state"], result["priorities"], result["metrics"])
