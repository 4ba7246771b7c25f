"""The replay component: finished trajectories in, stored on disk, cut into windows, sampled out.

Data flows one way: workers hand finished trajectories to :meth:`ReplayService.add`; a flush
appends them to the run's Parquet store *before* they count (the store is the record of what was
collected, so a crash never leaves a counted trajectory unstored); the algorithm's admission rule
and reward shaping turn them into step windows in a bounded prioritized (or uniform) buffer; the
learner draws batches with :meth:`sample` and writes fresh priorities back with
:meth:`update_priorities`.

The same class runs inside the serial loop and as a Ray actor, where calls from many workers and
one learner interleave. Two consequences are handled here rather than by callers:

* a worker that retries a send (its actor was restarted, a call timed out) must not store a
  trajectory twice: trajectories are de-duplicated by id;
* a priority computed for a sampled slot can arrive after the ring has overwritten that slot with
  a new window: every slot carries a generation number and late write-backs for an older
  generation are ignored.

Staleness (learner version minus the oldest version that acted in a window) is bounded by
``max_staleness`` under every algorithm and sampler: a window too old on arrival is dropped, and
each window that grows too old as the learner moves on is withdrawn from the buffer (storage and
sampler alike, uniform included) before the next batch is drawn, so a batch holds only fresh
windows, or the learner waits for fresh data. Both are counted in ``stale_dropped``.

Demonstrations (the warm start's noisy-oracle episodes) can be kept beside the buffer with
:meth:`add_demonstrations`: with ``demo_fraction`` > 0 that share of every batch is drawn from
them uniformly. They are an offline dataset, so they are not stored, not counted as collected,
never evicted or judged stale, and get no priorities (their slots in a batch are -1). With
``demo_rewording`` > 0 a drawn demonstration window's instruction is reworded with that
probability (:meth:`~distrl.algos.phrasing_augmentation.PhrasingEdit.reword_window`).

With ``success_share`` > 0, successful trajectories are also kept in a
:class:`~distrl.runtime.success_replay.SuccessStore` beyond the staleness bound and that share of
every batch is drawn from it (docs/design.md §7.14); like demonstrations, their slots are -1.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from distrl.algos.novelty import ScreenNovelty
from distrl.algos.phrasing_augmentation import EDITS, PhrasingEdit
from distrl.algos.registry import Algorithm
from distrl.algos.step_window import StepWindow, cut_windows
from distrl.core.observation import SharedElements
from distrl.core.trajectory import LEARNER_VERSION_KEY, Trajectory
from distrl.replay import ReplayBuffer, RingStorage
from distrl.replay.samplers import PrioritizedSampler
from distrl.replay.windows import windows as window_ranges
from distrl.runtime.replay_checkpoint import restore_sampler, sampler_snapshot
from distrl.runtime.success_replay import SuccessStore
from distrl.store import TrajectoryStore

#: ``oldest_versions`` of an empty slot: larger than any version, so never judged stale.
_NO_WINDOW = np.iinfo(np.int64).max


@dataclass
class ReplayCounters:
    #: Trajectories stored and offered to the replay (equals the store's count for a run).
    trajectories: int = 0
    windows_added: int = 0
    stale_dropped: int = 0
    #: Trajectories the algorithm did not admit (filtered BC: the failures).
    not_admitted: int = 0
    #: Sends of a trajectory id already stored (a retried send), ignored.
    duplicates: int = 0
    #: Windows handed to the learner.
    windows_sampled: int = 0
    #: Learner requests turned away because it ran ahead of the data (``max_samples_per_insert``).
    learner_waits: int = 0
    #: Windows handed to the learner from the success store (success replay).
    success_windows_sampled: int = 0
    #: Demonstration windows handed to the learner, and how many of them were reworded.
    demo_windows_sampled: int = 0
    demo_windows_reworded: int = 0


@dataclass(frozen=True)
class ReplayBatch:
    """Windows for one update, where they live and their importance weights.

    Hand ``slots`` and ``generations`` back with the new priorities."""

    windows: list[StepWindow]
    slots: np.ndarray
    generations: np.ndarray
    weights: np.ndarray


class ReplayService:
    def __init__(
        self,
        algorithm: Algorithm,
        *,
        window: int,
        capacity: int,
        max_staleness: int,
        keep_screenshots: bool,
        store_dir: Path | None = None,
        flush_seconds: float = 0.0,
        max_inserts_per_sample: float | None = None,
        max_samples_per_insert: float | None = None,
        min_replay: int = 1,
        demo_fraction: float = 0.0,
        demo_rewording: float = 0.0,
        demo_rewording_edits: Sequence[str] = EDITS,
        success_share: float = 0.0,
        success_capacity: int = 200,
        seed: int = 0,
        beta_budget_seconds: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        novelty: ScreenNovelty | None = None,
    ):
        self.algorithm = algorithm
        #: The screen-novelty reward added to admitted trajectories' steps (None: off).
        self.novelty = novelty
        self.window = window
        self.max_staleness = max_staleness
        self.keep_screenshots = keep_screenshots
        #: Equal UI elements of the windows held as one object (what makes a big replay fit).
        self.shared_elements = SharedElements()
        self.store = TrajectoryStore(store_dir, save_screenshots=False) if store_dir else None
        self.flush_seconds = flush_seconds
        self.max_inserts_per_sample = max_inserts_per_sample
        self.max_samples_per_insert = max_samples_per_insert
        self.min_replay = min_replay
        if not 0.0 <= demo_fraction < 1.0:
            raise ValueError(f"demo_fraction must be in [0, 1), got {demo_fraction}")
        self.demo_fraction = demo_fraction
        #: Rewords drawn demonstration windows (built from the demonstrations; None: off).
        self.demo_rewording: PhrasingEdit | None = None
        self._demo_rewording_rate = demo_rewording
        self._demo_rewording_edits = tuple(demo_rewording_edits)
        if not 0.0 <= success_share < 1.0 or demo_fraction + success_share >= 1.0:
            raise ValueError(
                f"success_share must be in [0, 1) and leave online windows beside "
                f"demo_fraction={demo_fraction}, got {success_share}"
            )
        self.success_share = success_share
        #: Successes kept past the staleness bound (None: success replay is off).
        self.successes = SuccessStore(success_capacity) if success_share > 0 else None
        #: Windows of the demonstrations (see the module docstring); fixed for the run.
        self.demo_windows: list[StepWindow] = []
        sampler = algorithm.make_sampler(capacity)
        self.buffer: ReplayBuffer[StepWindow] = ReplayBuffer(RingStorage(capacity), sampler)
        self.generations = np.zeros(capacity, dtype=np.int64)
        #: Per slot, the oldest policy version that acted in its window (``_NO_WINDOW`` if empty):
        #: what the staleness sweep compares against the learner's version.
        self.oldest_versions = np.full(capacity, _NO_WINDOW, dtype=np.int64)
        self.rng = np.random.default_rng(seed)
        self.counters = ReplayCounters()
        #: The newest learner version seen (from ``sample`` calls); arrivals are judged by it.
        self.learner_version = 0
        self._pending: list[Trajectory] = []
        self._pending_since = 0.0
        self._seen_ids: set[str] = set()
        #: A prioritized sampler's beta anneals over this wall-clock budget (None: over its
        #: update count); the budget's clock starts with the replay and resumes with it.
        self.beta_budget_seconds = beta_budget_seconds
        self._clock = clock
        self._budget_started = clock()

    def __len__(self) -> int:
        return len(self.buffer)

    # -- in ----------------------------------------------------------------------------------------
    def add(self, trajectories: Sequence[Trajectory]) -> int:
        """Accept finished trajectories; they count once flushed (at once when ``flush_seconds``
        is 0, else batched into one store shard per period). Returns how many were new."""
        # Stamped with the learner version on arrival, so the store (and `distrl view`) can
        # show how stale each step's acting policy was when it reached the learner.
        fresh = [
            replace(t, metadata={**t.metadata, LEARNER_VERSION_KEY: str(self.learner_version)})
            for t in trajectories
            if t.trajectory_id not in self._seen_ids
        ]
        self.counters.duplicates += len(trajectories) - len(fresh)
        self._seen_ids.update(t.trajectory_id for t in fresh)
        if fresh and not self._pending:
            self._pending_since = time.monotonic()
        self._pending.extend(fresh)
        self._flush_if_due()
        return len(fresh)

    def _flush_if_due(self) -> None:
        if self._pending and time.monotonic() - self._pending_since >= self.flush_seconds:
            self.flush()

    def flush(self) -> int:
        """Store the pending trajectories (one shard), then let them count and enter the replay."""
        pending, self._pending = self._pending, []
        if not pending:
            return 0
        if self.store is not None:
            self.store.append(pending)
        self.ingest(pending)
        return len(pending)

    def ingest(self, trajectories: Sequence[Trajectory]) -> int:
        """Cut trajectories (already stored) the algorithm admits into windows and add the
        fresh-enough ones; returns the number of windows added."""
        added = 0
        for trajectory in trajectories:
            self.counters.trajectories += 1
            self._seen_ids.add(trajectory.trajectory_id)
            if not self.algorithm.admits(trajectory):
                self.counters.not_admitted += 1
                if self.successes is not None:
                    self.successes.observe(trajectory, None)
                continue
            bonuses = None if self.novelty is None else self.novelty.rewards(trajectory)
            windows = self._cut(trajectory, bonuses)
            if self.successes is not None:
                self.successes.observe(trajectory, windows)
            for window in windows:
                if self.staleness(window, self.learner_version) > self.max_staleness:
                    self.counters.stale_dropped += 1
                    continue
                slot = self.buffer.add(window)
                self.generations[slot] += 1
                self.oldest_versions[slot] = min(window.policy_versions)
                added += 1
        self.counters.windows_added += added
        return added

    def _cut(
        self, trajectory: Trajectory, bonuses: Sequence[float] | None = None
    ) -> list[StepWindow]:
        """``trajectory`` as this replay's windows (its shaping, its screenshot policy), with
        the screen-novelty ``bonuses`` added to its steps' rewards when given."""
        return cut_windows(
            trajectory,
            self.window,
            self.algorithm.shaping,
            keep_screenshots=self.keep_screenshots,
            shared_elements=self.shared_elements,
            bonuses=bonuses,
        )

    def add_demonstrations(self, trajectories: Sequence[Trajectory]) -> int:
        """Keep the algorithm-admitted demonstrations as windows for the ``demo_fraction`` share
        of each batch; returns the number of windows kept. With rewording on, its words are
        learnt from the admitted demonstrations, so they come in one call."""
        if self._demo_rewording_rate > 0 and self.demo_rewording is not None:
            raise ValueError(  # before any window is kept: a refused call changes nothing
                "demonstrations were added twice with demo_rewording on; add them in one "
                "call, so the rewording knows the words every episode needs"
            )
        admitted = [t for t in trajectories if self.algorithm.admits(t)]
        for trajectory in admitted:
            self.demo_windows.extend(self._cut(trajectory))
        if self._demo_rewording_rate > 0:
            self.demo_rewording = PhrasingEdit.from_demonstrations(
                admitted, self._demo_rewording_rate, self._demo_rewording_edits
            )
        return len(self.demo_windows)

    def can_accept(self) -> bool:
        """Backpressure: False while inserts run ahead of the learner by more than
        ``max_inserts_per_sample`` windows per sampled window (workers then hold off).

        Trajectories still waiting for their flush count too (as the windows they will cut
        into): with ``flush_seconds`` > 0 a fast collector otherwise heard "yes" for a whole
        flush period after the budget was spent."""
        if self.max_inserts_per_sample is None:
            return True  # no backpressure: nothing to count on this per-send path
        inserted = self.counters.windows_added + self._pending_windows()
        if inserted < self.min_replay:
            return True
        budget = self.min_replay + self.max_inserts_per_sample * self.counters.windows_sampled
        return inserted < budget

    def _pending_windows(self) -> int:
        """The windows the unflushed trajectories will cut into (at most: some may be refused)."""
        return sum(len(window_ranges(len(t.steps), self.window)) for t in self._pending)

    def learner_ahead(self) -> bool:
        """The other side of the rate limit: True while the learner has drawn more than
        ``max_samples_per_insert`` windows per window inserted (it should wait for data)."""
        if self.max_samples_per_insert is None:
            return False
        return self.counters.windows_sampled >= (
            self.max_samples_per_insert * self.counters.windows_added
        )

    # -- out ---------------------------------------------------------------------------------------
    @staticmethod
    def staleness(window: StepWindow, learner_version: int) -> int:
        return learner_version - min(window.policy_versions)

    def withdraw_stale(self) -> int:
        """Remove every window now too stale for the newest learner version from the buffer
        (whatever its sampler, so it can never be drawn again); returns how many."""
        oldest_allowed = self.learner_version - self.max_staleness
        stale = np.flatnonzero(self.oldest_versions < oldest_allowed)
        if stale.size:
            self.buffer.remove(stale)
            self.oldest_versions[stale] = _NO_WINDOW
            self.generations[stale] += 1  # a late priority for a withdrawn window is ignored
            self.counters.stale_dropped += int(stale.size)
        return int(stale.size)

    def sample(self, batch_size: int, learner_version: int) -> ReplayBatch | None:
        """A batch of fresh windows for a learner at ``learner_version`` (stale ones are
        withdrawn first); None until the replay holds ``min_replay`` fresh windows, and while the
        learner is ahead of the data (:meth:`learner_ahead`): the learner then waits."""
        self.learner_version = max(self.learner_version, learner_version)
        self._flush_if_due()
        self.withdraw_stale()
        if len(self.buffer) < self.min_replay:
            return None
        if self.learner_ahead():
            self.counters.learner_waits += 1
            return None
        # At least one online window per batch: demonstrations and successes only share a batch.
        demos = (
            min(round(batch_size * self.demo_fraction), batch_size - 1) if self.demo_windows else 0
        )
        successes = self.successes
        replayed = (
            min(round(batch_size * self.success_share), batch_size - demos - 1)
            if successes is not None and len(successes)
            else 0
        )
        self._report_budget_progress()
        batch = self.buffer.sample(batch_size - demos - replayed, self.rng)
        self.counters.windows_sampled += len(batch)
        slots = batch.slots
        picked = self.rng.integers(len(self.demo_windows), size=demos)
        kept = successes.sample(replayed, self.rng) if successes is not None else []
        self.counters.success_windows_sampled += len(kept)
        offline = demos + len(kept)  # no slot, no priority, importance weight 1
        drawn = [self.demo_windows[i] for i in picked]
        self.counters.demo_windows_sampled += len(drawn)
        if self.demo_rewording is not None:
            reworded = [self.demo_rewording.reword_window(w, self.rng) for w in drawn]
            self.counters.demo_windows_reworded += sum(
                after is not before for after, before in zip(reworded, drawn, strict=True)
            )
            drawn = reworded
        return ReplayBatch(
            windows=batch.items + drawn + kept,
            slots=np.concatenate([slots, np.full(offline, -1, dtype=slots.dtype)]),
            generations=np.concatenate([self.generations[slots], np.full(offline, -1)]),
            weights=np.concatenate([batch.weights, np.ones(offline)]),
        )

    def success_figures(self) -> dict[str, float]:
        """The success store's size, windows and families (empty while success replay is off)."""
        return self.successes.figures() if self.successes is not None else {}

    def budget_progress(self) -> float | None:
        """The share of the wall-clock budget beta anneals over that is spent (None: beta
        anneals over updates, or the sampler is uniform)."""
        sampler = self.buffer.sampler
        if self.beta_budget_seconds is None or not isinstance(sampler, PrioritizedSampler):
            return None
        return max((self._clock() - self._budget_started) / self.beta_budget_seconds, 0.0)

    def _report_budget_progress(self) -> None:
        progress = self.budget_progress()
        if progress is not None:
            self.buffer.sampler.set_progress(progress)  # type: ignore[attr-defined]

    def update_priorities(
        self, slots: np.ndarray, generations: np.ndarray, priorities: np.ndarray
    ) -> int:
        """Write back priorities for slots still holding the sampled window; returns how many.
        Demonstration and success-store windows (slot -1) have no priority."""
        online = slots >= 0
        slots, generations = slots[online], generations[online]
        priorities = np.asarray(priorities)[online]
        current = self.generations[slots] == generations
        if current.any():
            self.buffer.update_priorities(slots[current], priorities[current])
        return int(current.sum())

    # -- checkpoints -------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, object]:
        """Counters, the sampling RNG and the sampler's state (priorities by window, beta's
        progress); the windows themselves are rebuilt from the store."""
        return {
            "counters": vars(self.counters).copy(),
            "rng": self.rng.bit_generator.state,
            "sampler": sampler_snapshot(self.buffer),
        }

    def restore(
        self, state: dict[str, object], stored: Sequence[Trajectory], learner_version: int
    ) -> None:
        """Refill from the store's trajectories (the record of what was collected, including any
        stored after the checkpoint), then take the checkpoint's counters, with the trajectory
        count set to the distinct trajectories the store holds so that store and replay agree
        exactly, and the sampler's priorities and progress. The success store sees every stored
        trajectory again in store order, which rebuilds exactly the store the run had."""
        self.learner_version = learner_version
        distinct = list({t.trajectory_id: t for t in stored}.values())
        self._seen_ids.update(t.trajectory_id for t in distinct)
        refill = distinct[-self.buffer.capacity :]
        if self.successes is not None:
            for trajectory in distinct[: len(distinct) - len(refill)]:
                kept = trajectory.success and self.algorithm.admits(trajectory)
                self.successes.observe(trajectory, self._cut(trajectory) if kept else None)
        self.ingest(refill)
        counters = dict(state["counters"])  # type: ignore[call-overload]
        counters["trajectories"] = len(distinct)
        self.counters = ReplayCounters(**counters)
        self.rng.bit_generator.state = state["rng"]
        if "sampler" in state:  # checkpoints from before the sampler was saved have none
            restore_sampler(self.buffer, state["sampler"])  # type: ignore[arg-type]
        sampler = self.buffer.sampler
        if self.beta_budget_seconds is not None and isinstance(sampler, PrioritizedSampler):
            # The budget's clock goes on from where the checkpoint left it.
            self._budget_started = self._clock() - sampler.progress * self.beta_budget_seconds
