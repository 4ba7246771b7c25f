"""Which memory allocator a run uses, and how freed memory goes back to the operating system.

A training process frees large blocks all the time: a learner update's activations, a round of
collected episodes, a batch of features. Two allocators are used, in this order of preference:

* **jemalloc**, where its shared library is installed (Debian/Ubuntu: ``libjemalloc2``). The
  ``distrl`` command re-executes itself once with the library in ``LD_PRELOAD`` (the only way to
  replace ``malloc`` in a running interpreter's children too); Ray's processes inherit it. It
  keeps freed memory in per-size pools and returns idle pages on a timer, so a learner that
  frees and re-allocates the same activations every update neither faults pages in again nor
  holds the peak. Measured on the README's 3-minute run (``docs/results/results.md``): 1.78x
  the learner's updates of glibc with the settings below, at 5% more resident memory.
* **glibc's malloc** otherwise, with its *mmap threshold* fixed at 64 KB and the heap trimmed
  above 128 KB free. Unfixed, glibc raises the threshold each time a large block is freed (up to
  32 MB), after which those blocks come from the heap, whose freed pages mostly stay with the
  process (measured: a 30-minute Ray run held 6-7 GB). Fixed, resident memory stays close to
  what is live, but every block above 64 KB is a fresh ``mmap`` faulted in page by page: a third
  of the learner's CPU time went to the kernel.

``DISTRL_ALLOCATOR`` chooses: ``auto`` (default: jemalloc where found, else glibc as above),
``jemalloc`` (an error where the library is not found), ``system`` (the C library's malloc,
untouched but for glibc's settings above). ``DISTRL_JEMALLOC`` names the library's path where it
is not in a standard place. The choice a run got is recorded in its ``summary.json``.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys
from collections.abc import Iterable
from pathlib import Path

#: glibc's environment variables for the same settings, read by a process when it starts.
ALLOCATOR_ENV = {"MALLOC_MMAP_THRESHOLD_": "65536", "MALLOC_TRIM_THRESHOLD_": "131072"}

#: The environment variable that chooses the allocator, and its values.
CHOICE_ENV = "DISTRL_ALLOCATOR"
CHOICES = ("auto", "jemalloc", "system")
#: An explicit path to ``libjemalloc.so.2``, tried before the standard places.
LIBRARY_ENV = "DISTRL_JEMALLOC"
#: Set on the re-executed process, so that a preload that did not take cannot loop.
_REEXECUTED_ENV = "DISTRL_ALLOCATOR_REEXECUTED"

#: Where distributions install jemalloc's shared library (Debian/Ubuntu multiarch, Fedora/RHEL,
#: Arch/Alpine, a source build).
STANDARD_PLACES = (
    "/usr/lib/{triplet}/libjemalloc.so.2",
    "/usr/lib64/libjemalloc.so.2",
    "/usr/lib/libjemalloc.so.2",
    "/usr/local/lib/libjemalloc.so.2",
)

_M_TRIM_THRESHOLD = -1  # mallopt parameter numbers from glibc's malloc.h
_M_MMAP_THRESHOLD = -3


def allocator_choice() -> str:
    """``DISTRL_ALLOCATOR``'s value, checked (``auto`` when unset)."""
    choice = os.environ.get(CHOICE_ENV, "auto").strip().lower() or "auto"
    if choice not in CHOICES:
        raise ValueError(
            f"{CHOICE_ENV}={os.environ[CHOICE_ENV]!r}: expected one of {', '.join(CHOICES)}"
        )
    return choice


def find_jemalloc(places: Iterable[str] | None = None) -> str | None:
    """The path of jemalloc's shared library, or ``None`` where it is not installed.

    ``DISTRL_JEMALLOC`` is tried first, then ``places`` (the standard ones by default, with
    ``{triplet}`` the Debian multiarch name of this machine, e.g. ``x86_64-linux-gnu``)."""
    if platform.system() != "Linux":
        return None
    triplet = f"{platform.machine()}-linux-gnu"
    explicit = os.environ.get(LIBRARY_ENV)
    candidates = [explicit] if explicit else []
    candidates += [place.format(triplet=triplet) for place in (places or STANDARD_PLACES)]
    return next((path for path in candidates if Path(path).is_file()), None)


def active_allocator() -> str:
    """What serves ``malloc`` in this process: ``jemalloc``, ``glibc`` or ``system``."""
    if jemalloc_loaded():
        return "jemalloc"
    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        return "glibc"
    return "system"


def jemalloc_loaded() -> bool:
    """Whether jemalloc is mapped into this process (preloaded, so serving ``malloc``)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            return any("libjemalloc" in line for line in maps)
    except OSError:  # no /proc (macOS)
        return False


def reexecute_with_jemalloc() -> str | None:
    """Replace this process by the same command with jemalloc preloaded, where the choice allows
    it and the library is found; returns (without replacing anything) otherwise.

    Returns an error message for a choice that cannot be honoured (``jemalloc`` without the
    library, an unknown value); ``None`` when the process goes on as it is. Called by the
    ``distrl`` command before anything is allocated; the re-executed process sees jemalloc
    already loaded and goes on. The replacement keeps the process id, the open terminal and
    every argument; it costs one interpreter start (about 0.1 s)."""
    try:
        choice = allocator_choice()
    except ValueError as error:
        return str(error)
    if choice == "system" or jemalloc_loaded():
        return None
    if os.environ.get(_REEXECUTED_ENV):  # preloaded once and still not loaded: do not loop
        if choice == "jemalloc":
            return f"{CHOICE_ENV}=jemalloc: the library was preloaded but did not load"
        return None
    library = find_jemalloc()
    if library is None:
        if choice == "jemalloc":
            return (
                f"{CHOICE_ENV}=jemalloc: libjemalloc.so.2 not found (install libjemalloc2, or "
                f"name its path in {LIBRARY_ENV})"
            )
        return None
    preload = os.environ.get("LD_PRELOAD", "")
    os.environ["LD_PRELOAD"] = f"{library}:{preload}" if preload else library
    os.environ[_REEXECUTED_ENV] = "1"
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])  # does not return


def return_freed_memory() -> bool:
    """Apply glibc's settings to this process and export them to its children; returns whether
    this process's allocator took them (False under jemalloc and where the C library is not
    glibc)."""
    for name, value in ALLOCATOR_ENV.items():
        os.environ.setdefault(name, value)
    if active_allocator() != "glibc":
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    mmap_threshold = int(os.environ["MALLOC_MMAP_THRESHOLD_"])
    trim_threshold = int(os.environ["MALLOC_TRIM_THRESHOLD_"])
    # mallopt returns 1 on success, 0 on error.
    return bool(
        libc.mallopt(_M_MMAP_THRESHOLD, mmap_threshold)
        and libc.mallopt(_M_TRIM_THRESHOLD, trim_threshold)
    )
