"""The allocator settings: freed blocks go back to the system even after glibc would have raised
its mmap threshold, and child processes inherit the settings."""

from __future__ import annotations

import platform
import subprocess
import sys
import textwrap

import pytest

from distrl.runtime.allocator import ALLOCATOR_ENV

_PROBE = textwrap.dedent(
    """
    import os, sys
    from distrl.runtime.allocator import return_freed_memory

    def rss_mb():
        with open("/proc/self/status") as status:
            return next(int(l.split()[1]) // 1024 for l in status if l.startswith("VmRSS"))

    applied = return_freed_memory()
    big = bytearray(8 * 2**20); del big  # glibc would now lift its mmap threshold to 8 MB
    before = rss_mb()
    # 200 MB of 256 KB blocks, each followed by a small object that outlives it (as in a real
    # heap), so that freeing the blocks leaves holes a heap could not trim from its top.
    blocks, keepers = [], []
    for _ in range(800):
        blocks.append(bytearray(256 * 2**10))
        keepers.append(bytearray(1024))
    held = rss_mb()
    del blocks
    after = rss_mb()
    print(applied, before, held, after, os.environ["MALLOC_MMAP_THRESHOLD_"])
    """
)


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only"
)
def test_freed_blocks_return_to_the_system_and_children_inherit_the_settings() -> None:
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("MALLOC_")}
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    applied, before, held, after, exported = out[0], *map(int, out[1:4]), out[4]
    assert applied == "True" and exported == ALLOCATOR_ENV["MALLOC_MMAP_THRESHOLD_"]
    assert held - before >= 150  # the blocks were really resident ...
    assert after - before <= 20  # ... and went back to the system when freed
