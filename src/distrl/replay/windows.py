"""Cutting an episode into windows of consecutive steps: the unit the replay stores and samples.

Retrace targets (docs/design.md §7) need ``n`` consecutive steps, and a priority per window is
sharper than one per whole trajectory (one bad step no longer drags up a long episode), so the
learner stores windows rather than trajectories. This module only computes the step ranges; what a
window item contains is the learner's business.
"""

from __future__ import annotations


def windows(num_steps: int, length: int, stride: int | None = None) -> list[tuple[int, int]]:
    """The ``(start, stop)`` step ranges (``stop`` exclusive) of windows covering an episode.

    Windows start at ``0, stride, 2 * stride, ...`` and hold ``length`` steps, except that the
    last one is cut at ``num_steps`` and may be shorter. With ``stride < length`` windows overlap
    (each step is a window start more often, at the cost of storing steps twice); generation stops
    at the first window that reaches the end, since any later one would be a sub-range of it.
    ``stride`` defaults to ``length`` (no overlap) and may not exceed it, because then steps
    between windows would never be replayed. An empty episode has no windows.

    >>> windows(7, 3)
    [(0, 3), (3, 6), (6, 7)]
    >>> windows(7, 4, stride=2)
    [(0, 4), (2, 6), (4, 7)]
    """
    if num_steps < 0:
        raise ValueError(f"num_steps must be >= 0, got {num_steps}")
    if length < 1:
        raise ValueError(f"window length must be >= 1, got {length}")
    if stride is None:
        stride = length
    if not 1 <= stride <= length:
        raise ValueError(
            f"stride must be between 1 and the window length {length}, got {stride}; "
            "a larger stride would leave steps that no window covers"
        )
    ranges: list[tuple[int, int]] = []
    start = 0
    while start < num_steps:
        stop = min(start + length, num_steps)
        ranges.append((start, stop))
        if stop == num_steps:
            break
        start += stride
    return ranges
