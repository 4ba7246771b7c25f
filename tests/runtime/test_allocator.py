"""The allocator: the ``distrl`` command re-executes itself once with jemalloc preloaded where it
is installed (its children inherit it), ``DISTRL_ALLOCATOR`` opts out or insists, and under glibc
freed blocks go back to the system even after glibc would have raised its mmap threshold."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap

import pytest

from distrl.runtime.allocator import (
    ALLOCATOR_ENV,
    CHOICE_ENV,
    LIBRARY_ENV,
    allocator_choice,
    find_jemalloc,
)

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
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], env=_plain_env(), capture_output=True, text=True, check=True
    ).stdout.split()
    applied, before, held, after, exported = out[0], *map(int, out[1:4]), out[4]
    assert applied == "True" and exported == ALLOCATOR_ENV["MALLOC_MMAP_THRESHOLD_"]
    assert held - before >= 150  # the blocks were really resident ...
    assert after - before <= 20  # ... and went back to the system when freed


def _plain_env(**extra: str) -> dict[str, str]:
    """This environment without any allocator setting (pytest may itself run under one)."""
    drop = ("MALLOC_", "LD_PRELOAD", "DISTRL_ALLOCATOR", LIBRARY_ENV)
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    return {**env, **extra}


#: The ``distrl`` command as a console script runs it (``main()`` reading ``sys.argv``), telling
#: its process id before and after, what serves malloc in it and in a child it starts.
_COMMAND = textwrap.dedent(
    """
    import os, subprocess, sys
    import distrl.runtime.allocator as allocator
    if os.environ.get("HIDE_JEMALLOC"):  # as on a machine without the library
        allocator.STANDARD_PLACES = ()
    print("started", os.getpid(), flush=True)
    from distrl.cli.main import main
    code = main()
    probe = "from distrl.runtime.allocator import active_allocator as a; print(a())"
    child = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    print("allocator", os.getpid(), allocator.active_allocator(), child, flush=True)
    sys.exit(code)
    """
)


def _run_command(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _COMMAND, *argv],
        env=_plain_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def _lines(out: str, word: str) -> list[list[str]]:
    return [line.split()[1:] for line in out.splitlines() if line.startswith(word + " ")]


needs_jemalloc = pytest.mark.skipif(
    find_jemalloc() is None and not os.environ.get("DISTRL_CI"),
    reason="libjemalloc.so.2 not installed (CI installs libjemalloc2)",
)


@needs_jemalloc
def test_the_command_reexecutes_once_with_jemalloc_and_its_children_inherit_it() -> None:
    done = _run_command("tasks", "list", "--json")
    assert done.returncode == 0, done.stderr
    started = _lines(done.stdout, "started")
    # Started twice in the same process (execv keeps the id): once as launched, once preloaded.
    assert len(started) == 2 and started[0] == started[1]
    assert _lines(done.stdout, "allocator") == [[started[0][0], "jemalloc", "jemalloc"]]
    assert '"name"' in done.stdout  # the command itself ran, once, with its arguments


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only"
)
def test_system_opts_out_and_a_machine_without_jemalloc_keeps_glibc() -> None:
    for env in ({CHOICE_ENV: "system"}, {"HIDE_JEMALLOC": "1"}):
        done = _run_command("tasks", "list", "--json", **env)
        assert done.returncode == 0, done.stderr
        assert len(_lines(done.stdout, "started")) == 1  # not re-executed
        assert [line[1:] for line in _lines(done.stdout, "allocator")] == [["glibc", "glibc"]]


def test_a_choice_that_cannot_be_honoured_is_one_error_line() -> None:
    missing = _run_command("tasks", "list", HIDE_JEMALLOC="1", **{CHOICE_ENV: "jemalloc"})
    unknown = _run_command("tasks", "list", **{CHOICE_ENV: "tcmalloc"})
    for done in (missing, unknown):
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("distrl: error: ")
    assert "libjemalloc.so.2 not found (install libjemalloc2" in missing.stderr
    assert "DISTRL_ALLOCATOR='tcmalloc': expected one of auto, jemalloc, system" in unknown.stderr


def test_the_library_is_found_where_named_first_then_in_the_standard_places(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if platform.system() != "Linux":
        pytest.skip("jemalloc is preloaded on Linux only")
    named, standard = tmp_path / "named.so", tmp_path / "{triplet}" / "libjemalloc.so.2"
    triplet = tmp_path / f"{platform.machine()}-linux-gnu"
    triplet.mkdir()
    (triplet / "libjemalloc.so.2").write_bytes(b"")
    monkeypatch.delenv(LIBRARY_ENV, raising=False)
    assert find_jemalloc([str(tmp_path / "absent.so")]) is None
    assert find_jemalloc([str(standard)]) == str(triplet / "libjemalloc.so.2")
    named.write_bytes(b"")
    monkeypatch.setenv(LIBRARY_ENV, str(named))
    assert find_jemalloc([str(standard)]) == str(named)
    monkeypatch.setenv(CHOICE_ENV, " System ")
    assert allocator_choice() == "system"
