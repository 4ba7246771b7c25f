"""Learner updates over several processes with torch DDP, and gradient accumulation.

One update on a batch of replayed windows is split into ``world_size x accumulation``
micro-batches of whole windows (Retrace runs along a window, so a window is never cut). Each
process runs its micro-batches through the algorithm's loss, ``DistributedDataParallel``
all-reduces the gradients (NCCL on GPUs, gloo on CPU), the gradient norm is clipped and every
process takes the same optimiser step, so the replicas stay identical without sending weights.

How micro-batch losses combine. A-RIDE's loss is a mean over the batch's valid steps, so micro-batch
``i`` with ``S_i`` of the batch's ``S`` steps is weighted ``S_i / S``; DDP averages over the
``W`` processes, so each process scales its losses by ``W`` as well. The summed gradient is then
exactly the full-batch gradient, with one exception: advantage standardisation
(``aride.normalize_advantages``) uses each micro-batch's own mean and spread, as in any
gradient-accumulation setup. With it off, a DDP update equals the single-process update on the
same batch (the tests check parameters to 1e-5); with it on, it equals one process accumulating
the same micro-batches.

:func:`ddp_update` runs one such update in ``world_size`` fresh processes (each rebuilds the policy
with ``make_policy``: a tiny base from its seed, a real base from its path, so only the trainable
tensors travel) and returns the new trainable tensors, the windows' priorities and the metrics.
"""

from __future__ import annotations

import contextlib
import socket
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

from distrl.algos.step_window import StepWindow

__all__ = ["DDPResult", "accumulate_gradients", "ddp_update", "split_windows"]

#: (loss, priorities, metrics) of a batch of windows.
LossOutput = tuple[torch.Tensor, torch.Tensor, dict]
LossFn = Callable[[Any, Sequence[StepWindow], torch.Tensor], LossOutput]


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


def _steps(windows: Sequence[StepWindow]) -> int:
    return sum(len(w) for w in windows)


class _LossModule(nn.Module):
    """The policy with the algorithm's loss as its forward, so DDP sees the forward pass it
    needs to prepare the gradient all-reduce."""

    def __init__(self, policy: nn.Module, loss_fn: LossFn):
        super().__init__()
        self.policy = policy
        self.loss_fn = loss_fn

    def forward(self, windows: Sequence[StepWindow], weights: torch.Tensor) -> LossOutput:
        return self.loss_fn(self.policy, windows, weights)


def accumulate_gradients(
    forward: Callable[[Sequence[StepWindow], torch.Tensor], LossOutput],
    windows: Sequence[StepWindow],
    weights: torch.Tensor,
    parts: int,
    *,
    total_steps: int | None = None,
    world_size: int = 1,
    no_sync: Callable[[], contextlib.AbstractContextManager] | None = None,
) -> tuple[torch.Tensor, torch.Tensor, dict[str, float]]:
    """Backpropagate ``windows`` as ``parts`` micro-batches, each loss weighted by its share of
    ``total_steps`` (the whole batch's, across processes) times ``world_size``.

    ``no_sync`` (DDP's) skips the all-reduce for all but the last micro-batch. Returns the
    combined loss (detached), the windows' priorities in order, and step-weighted metrics."""
    total = total_steps if total_steps is not None else _steps(windows)
    slices = split_windows(len(windows), parts)
    loss_sum = torch.zeros(())
    priorities, metrics = [], {}
    for index, part in enumerate(slices):
        micro = list(windows[part])
        share = _steps(micro) / max(total, 1)
        last = index == len(slices) - 1
        context = no_sync() if (no_sync is not None and not last) else contextlib.nullcontext()
        with context:
            loss, micro_priorities, micro_metrics = forward(micro, weights[part])
            (loss * share * world_size).backward()
        loss_sum = loss_sum + loss.detach().cpu() * share
        priorities.append(micro_priorities.detach().cpu())
        for key, value in micro_metrics.items():
            metrics[key] = metrics.get(key, 0.0) + float(value) * share
    return loss_sum, torch.cat(priorities), metrics


class DDPResult:
    """What :func:`ddp_update` returns (from rank 0)."""

    def __init__(self, state: dict[str, torch.Tensor], priorities: torch.Tensor, metrics: dict):
        self.state = state
        self.priorities = priorities
        self.metrics = metrics


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
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
        module = _LossModule(policy, make_loss())
        # Unused parameters are normal here (e.g. the trajectory critic in an A-RIDE update).
        ddp = nn.parallel.DistributedDataParallel(
            module, device_ids=[rank] if cuda else None, find_unused_parameters=True
        )
        parameters = [p for p in policy.parameters() if p.requires_grad]
        optimizer = torch.optim.Adam(parameters, lr=lr)
        shards = split_windows(len(windows), world_size)
        if len(shards) < world_size:
            raise ValueError(f"{len(windows)} windows cannot feed {world_size} processes")
        mine = shards[rank]
        optimizer.zero_grad()
        loss, priorities, metrics = accumulate_gradients(
            ddp,
            windows[mine],
            weights[mine],
            accumulation,
            total_steps=_steps(windows),
            world_size=world_size,
            no_sync=ddp.no_sync,
        )
        grad_norm = torch.nn.utils.clip_grad_norm_(parameters, grad_clip)
        optimizer.step()
        gathered: list[Any] = [None] * world_size
        dist.all_gather_object(gathered, (priorities, metrics, float(loss)))
        if rank == 0:
            summed: dict[str, float] = {}
            for _, rank_metrics, _ in gathered:
                for key, value in rank_metrics.items():
                    summed[key] = summed.get(key, 0.0) + value
            summed["loss"] = sum(item[2] for item in gathered)
            summed["grad_norm"] = float(grad_norm)
            trainable = getattr(policy, "trainable_state_dict", policy.state_dict)
            torch.save(
                {
                    "state": {k: v.detach().cpu() for k, v in trainable().items()},
                    "priorities": torch.cat([item[0] for item in gathered]),
                    "metrics": summed,
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
                _free_port(),
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
