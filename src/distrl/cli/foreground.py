"""Foreground servers (``fake-adb``, ``fake-vlm``, ``view --serve``) stop on Ctrl-C and ``kill``.

A shell without job control starts background commands with SIGINT ignored, and Python then
installs no KeyboardInterrupt handler: such a server would ignore Ctrl-C (and a harness's SIGINT)
forever. Installing the handlers explicitly makes SIGINT and SIGTERM end the serve loop the same
way wherever the command was started from.
"""

from __future__ import annotations

import signal
import threading


def interrupt_on_signals() -> None:
    """SIGINT and SIGTERM raise KeyboardInterrupt in the main thread from now on."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.default_int_handler)
