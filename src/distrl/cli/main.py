"""The ``distrl`` command line.

Every command but ``view`` takes ``--preset`` and ``key=value`` config overrides (anywhere after
the command); flags such as ``--suite`` are shorthands for overrides (:mod:`distrl.cli.parser`),
so all input is validated in one place (the typed config) and every bad input ends in one
``distrl: error: ...`` line and exit status 2. Output into a pipe whose reader stops early
(``distrl tasks list --json | head -1``) ends quietly.

That line is the one boundary for every foreseeable failure: bad input (:class:`InputError`,
:class:`ConfigError`, raised where the input is understood and so naming it), a damaged trajectory
store (``StoreError``), devices that stay down through restarts (``DeviceFault``), and the
operating system refusing a path or a connection (``OSError``).
Anything else is a bug in distrl and keeps its traceback; ``--debug`` (anywhere on the command
line) prints the traceback of a foreseeable failure too.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import traceback
from collections.abc import Callable, Sequence

from distrl.cli.parser import EXIT_USAGE, build_parser, config_overrides, parse
from distrl.config.loader import ConfigError
from distrl.errors import InputError, describe_os_error, one_line
from distrl.logs.stderr import logging_to_stderr
from distrl.runtime.allocator import reexecute_with_jemalloc, return_freed_memory


def emit_json(payload: object) -> None:
    print(json.dumps(payload), flush=True)


#: command -> (module under distrl.cli, function taking (args, overrides)).
_HANDLERS: dict[str, tuple[str, str]] = {
    "tasks": ("tasks_cmd", "run"),
    "play": ("play_cmd", "run"),
    "bench": ("bench_cmd", "run"),
    "train": ("train_cmd", "run"),
    "eval": ("eval_cmd", "run"),
    "collect-demos": ("demos_cmd", "run"),
    "fake-adb": ("fakeadb_cmd", "run"),
    "judge-eval": ("judge_cmd", "run"),
    "fake-vlm": ("judge_cmd", "run_fake_vlm"),
    "view": ("view_cmd", "run"),
    "config": ("config_cmd", "run"),
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit status is returned (0 ok, 2 a foreseeable failure, told in one
    ``distrl: error:`` line on stderr; 130 interrupted).

    Run as the ``distrl`` command (``argv`` None), the process first re-executes itself with
    jemalloc preloaded where it is installed (:mod:`distrl.runtime.allocator`); a call from
    Python with its own ``argv`` keeps the caller's allocator."""
    if argv is None:
        refused = reexecute_with_jemalloc()  # returns only where this process goes on as it is
        if refused is not None:
            print(f"distrl: error: {refused}", file=sys.stderr)
            return EXIT_USAGE
    return_freed_memory()  # before anything large is allocated, and before Ray starts workers
    parser = build_parser()
    try:
        args = parse(parser, argv)
    except SystemExit as exit_:  # usage errors (already printed in one line) and --help
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    except BrokenPipeError:  # --help into `head`
        return _reader_went_away()
    # Imported per command: a backend's heavy dependencies load only when that command runs.
    module_name, function_name = _HANDLERS[args.command]
    handler: Callable[[argparse.Namespace, list[str]], int] = getattr(
        importlib.import_module(f"distrl.cli.{module_name}"), function_name
    )
    try:
        with logging_to_stderr(bool(getattr(args, "debug", False))):
            return handler(args, config_overrides(args))
    except KeyboardInterrupt:
        print("distrl: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _reader_went_away()
    except Exception as error:
        message = foreseeable_failure(error)
        if message is None:
            raise  # a bug in distrl: the traceback is what its report needs
        if getattr(args, "debug", False):
            traceback.print_exc()
        print(f"distrl: error: {message}", file=sys.stderr)
        return EXIT_USAGE


def _reader_went_away() -> int:
    """stdout's reader closed the pipe (``distrl tasks list --json | head -1``): that is the
    reader's choice, not a failure. What is left in stdout's buffer is dropped (pointing stdout
    at devnull), so the interpreter's exit-time flush cannot raise again; exit status 141, as a
    shell reports a command ended by SIGPIPE."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141


def foreseeable_failure(error: BaseException) -> str | None:
    """The one-line message for a failure the user can fix, or ``None`` for a bug.

    Bad input and damaged stores are told in their own words (raised where the input is
    understood); an ``OSError`` (a path that cannot be written, a file where a folder should be,
    a service that refuses connections) in words built from its errno and path."""
    from distrl.core.faults import DeviceFault
    from distrl.store.parquet_store import StoreError  # pyarrow: only when something failed

    if isinstance(error, (InputError, ConfigError, StoreError)):
        return one_line(str(error))
    if isinstance(error, DeviceFault):  # devices that would not come back even after restarts
        return one_line(f"{error}; check the devices (adb devices, emulator logs) and run again")
    if isinstance(error, OSError):
        return describe_os_error(error)
    return None


if __name__ == "__main__":
    raise SystemExit(main())
