"""A learner batch cut into groups of similar length, each padded only to its own longest.

Why: a batch of token sequences is padded to its longest row, and a replay batch's longest row is
about twice its mean on PhoneSim (the small policy's encoder: 109 against 53 tokens; the tiny
VLM's prompts: a batch of 52 steps padded to 566 tokens held 12,462 real ones, 42%). Padding
costs the linear layers in proportion and attention in the square. Sorted by length and cut into
a few groups, each group pads to its own longest; the rows' results do not change (padded keys
get zero attention weight), so the groups' results, put back in the caller's order, are those of
the one batch (to float rounding) at a fraction of its work. Both policies score learner batches
this way (``policy.small.score_groups``, ``policy.vlm.score_groups``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import torch

__all__ = ["LengthGroups", "length_groups"]


class LengthGroups(NamedTuple):
    """Groups of the caller's row indices, each of similar length, and how to undo the cut."""

    #: Each group: the caller's row indices, shortest rows in the first group.
    rows: list[list[int]]
    #: ``restore[b]`` is where the caller's row ``b`` sits in the groups' concatenated rows.
    restore: torch.Tensor

    def join(self, parts: Sequence[torch.Tensor]) -> torch.Tensor:
        """The groups' ``[B_g, ...]`` results as one ``[B, ...]`` tensor in the caller's order
        (differentiable: the gather passes gradients)."""
        return torch.cat(list(parts))[self.restore]


def length_groups(
    lengths: Sequence[int], groups: int, min_rows: int, device: torch.device | None = None
) -> LengthGroups:
    """Rows sorted by ``lengths`` and cut into up to ``groups`` groups of at least ``min_rows``
    rows each (one group when there are fewer than ``2 * min_rows`` rows).

    >>> cut = length_groups([5, 1, 4, 2], groups=2, min_rows=2)
    >>> cut.rows, cut.join([torch.tensor([10, 20]), torch.tensor([40, 50])]).tolist()
    ([[1, 3], [2, 0]], [50, 10, 40, 20])
    """
    if not lengths:
        raise ValueError("length_groups needs at least one row")
    order = sorted(range(len(lengths)), key=lambda row: lengths[row])
    count = min(groups, max(1, len(order) // max(1, min_rows)))
    rows = [[int(row) for row in part] for part in np.array_split(order, count)]
    restore = torch.empty(len(order), dtype=torch.long)
    restore[torch.as_tensor(order)] = torch.arange(len(order))
    return LengthGroups(rows, restore.to(device) if device is not None else restore)
