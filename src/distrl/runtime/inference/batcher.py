"""Dynamic batching of act requests: many callers, one policy batch (docs/design.md §2.1).

An inference service answers many workers, each asking for actions for the few devices it drives.
One forward pass over all of their observations costs little more than one over a single
worker's, so requests wait briefly and run together: a batch starts as soon as
``max_batch_size`` observations wait or the oldest request has waited ``max_wait_ms``. Each
caller gets back exactly its own rows, with the weights version that acted.

Sampling stays per-caller reproducible: a sampled request carries one seed per observation, drawn
from the caller's own generator, and the batch samples each row from a generator seeded from it
(:class:`~distrl.policies.base.Choice`), so a row's action does not depend on who else shared
its batch. Greedy and sampled requests never share a batch (a policy batch chooses one way).

Nothing here knows about Ray: the service (:mod:`distrl.runtime.inference.service`) puts a
batcher in an actor; tests drive one from threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

import torch

from distrl.core.observation import Observation
from distrl.policies.base import PolicyOutput

__all__ = ["ActRequest", "BatchRunner", "DynamicBatcher", "split_output"]

#: Runs one batch: observations, greedy?, one seed per row (sampled batches) -> the output.
BatchRunner = Callable[[Sequence[Observation], bool, Sequence[int] | None], PolicyOutput]


@dataclass
class ActRequest:
    """One caller's observations and how to choose their actions."""

    observations: Sequence[Observation]
    greedy: bool
    #: One seed per observation (required when not greedy).
    seeds: Sequence[int] | None
    arrived: float = field(default_factory=time.monotonic)
    reply: Future[PolicyOutput] = field(default_factory=Future)

    def __post_init__(self) -> None:
        if not self.observations:
            raise ValueError("an act request needs at least one observation")
        if not self.greedy and (self.seeds is None or len(self.seeds) != len(self.observations)):
            raise ValueError("a sampled act request needs one seed per observation")


def split_output(output: PolicyOutput, sizes: Sequence[int]) -> list[PolicyOutput]:
    """``output`` cut into consecutive parts of ``sizes`` rows, each with the same version."""
    parts, start = [], 0
    for size in sizes:
        end = start + size
        parts.append(
            PolicyOutput(
                output.actions[start:end],
                output.logprobs[start:end],
                output.entropies[start:end],
                output.values[start:end],
                output.version,
            )
        )
        start = end
    if start != len(output.actions):
        raise ValueError(f"a batch of {start} rows answered with {len(output.actions)}")
    return parts


class DynamicBatcher:
    """Collects :class:`ActRequest` objects from any number of threads and runs them in batches
    on one thread (the one that owns the model)."""

    def __init__(self, run_batch: BatchRunner, *, max_batch_size: int, max_wait_ms: float):
        if max_batch_size < 1:
            raise ValueError("max_batch_size must be at least 1")
        self.run_batch = run_batch
        self.max_batch_size = max_batch_size
        self.max_wait_seconds = max_wait_ms / 1000.0
        self._queue: list[ActRequest] = []
        self._ready = threading.Condition()
        self._closed = False
        #: Batches run and observations acted for (the mean batch size is their ratio).
        self.batches = 0
        self.rows = 0
        self._thread = threading.Thread(target=self._loop, name="act-batcher", daemon=True)
        self._thread.start()

    def act(
        self,
        observations: Sequence[Observation],
        *,
        greedy: bool,
        seeds: Sequence[int] | None,
        timeout: float | None = None,
    ) -> PolicyOutput:
        """The actions for ``observations`` (blocks until their batch ran)."""
        return self.submit(ActRequest(observations, greedy, seeds)).reply.result(timeout)

    def submit(self, request: ActRequest) -> ActRequest:
        """Queue ``request``; its ``reply`` future completes when its batch ran."""
        with self._ready:
            if self._closed:
                raise RuntimeError("the batcher is closed")
            self._queue.append(request)
            self._ready.notify()
        return request

    def close(self) -> None:
        """Stop taking requests; queued ones fail, the running batch finishes."""
        with self._ready:
            self._closed = True
            pending, self._queue = self._queue, []
            self._ready.notify()
        for request in pending:
            request.reply.set_exception(RuntimeError("the batcher closed before acting"))
        self._thread.join(timeout=5.0)

    # -- the batching thread -------------------------------------------------------------------
    def _waiting_rows(self) -> int:
        return sum(len(r.observations) for r in self._queue)

    def _next_batch(self) -> list[ActRequest] | None:
        """Wait for a full batch or the oldest request's deadline; None once closed."""
        with self._ready:
            while not self._queue and not self._closed:
                self._ready.wait()
            while not self._closed:
                left = self._queue[0].arrived + self.max_wait_seconds - time.monotonic()
                if self._waiting_rows() >= self.max_batch_size or left <= 0:
                    break
                self._ready.wait(timeout=left)
            if self._closed:
                return None
            return self._take()

    def _take(self) -> list[ActRequest]:
        """The oldest request and every later one of the same kind (greedy or sampled) that fits
        within ``max_batch_size`` rows (a bigger request runs alone)."""
        first = self._queue[0]
        batch, rows, rest = [first], len(first.observations), []
        for request in self._queue[1:]:
            size = len(request.observations)
            if request.greedy == first.greedy and rows + size <= self.max_batch_size:
                batch.append(request)
                rows += size
            else:
                rest.append(request)
        self._queue = rest
        return batch

    def _loop(self) -> None:
        while (batch := self._next_batch()) is not None:
            self._run(batch)

    def _run(self, batch: list[ActRequest]) -> None:
        observations = [o for r in batch for o in r.observations]
        greedy = batch[0].greedy
        seeds = None if greedy else [int(s) for r in batch for s in r.seeds or ()]
        try:
            with torch.no_grad():
                output = self.run_batch(observations, greedy, seeds)
            parts = split_output(output, [len(r.observations) for r in batch])
        except Exception as error:  # every caller of the batch hears why, none hangs
            for request in batch:
                request.reply.set_exception(error)
            return
        self.batches += 1
        self.rows += len(observations)
        for request, part in zip(batch, parts, strict=True):
            request.reply.set_result(part)
