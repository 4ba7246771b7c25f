"""windows(): step ranges that cut an episode into replay items."""

from __future__ import annotations

import pytest

from distrl.replay import windows


def test_non_overlapping_windows_partition_the_episode() -> None:
    assert windows(10, 5) == [(0, 5), (5, 10)]
    assert windows(11, 5) == [(0, 5), (5, 10), (10, 11)]
    assert windows(3, 5) == [(0, 3)]
    assert windows(0, 5) == []
    assert windows(4, 1) == [(0, 1), (1, 2), (2, 3), (3, 4)]


def test_overlapping_windows_stop_at_the_first_that_reaches_the_end() -> None:
    assert windows(10, 4, stride=2) == [(0, 4), (2, 6), (4, 8), (6, 10)]
    assert windows(9, 4, stride=3) == [(0, 4), (3, 7), (6, 9)]
    assert windows(2, 4, stride=1) == [(0, 2)]


@pytest.mark.parametrize("num_steps", range(0, 30))
@pytest.mark.parametrize(("length", "stride"), [(1, None), (3, None), (4, 1), (5, 3), (7, 7)])
def test_every_step_is_covered_by_full_length_windows_but_the_last(
    num_steps: int, length: int, stride: int | None
) -> None:
    ranges = windows(num_steps, length, stride)
    covered = {step for start, stop in ranges for step in range(start, stop)}
    assert covered == set(range(num_steps))
    assert all(stop - start == length for start, stop in ranges[:-1])
    assert all(0 < stop - start <= length for start, stop in ranges)
    starts = [start for start, _ in ranges]
    assert starts == sorted(set(starts))


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(ValueError, match="num_steps must be >= 0"):
        windows(-1, 3)
    with pytest.raises(ValueError, match="window length must be >= 1"):
        windows(5, 0)
    with pytest.raises(ValueError, match="leave steps that no window covers"):
        windows(5, 2, stride=3)
    with pytest.raises(ValueError, match="stride must be between 1"):
        windows(5, 2, stride=0)
