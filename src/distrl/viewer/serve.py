"""``distrl view --serve``: serve a report folder over HTTP on loopback only.

The report works from ``file://``; serving it is for a browser on another machine reaching it
through an SSH tunnel. The server binds 127.0.0.1 only (a report shows model output and task
data, which are nobody else's business) and serves only files under the report folder.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
from collections.abc import Callable
from pathlib import Path

from distrl.errors import InputError

HOST = "127.0.0.1"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Static files from the report folder, without a log line per image request."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (stdlib name)
        return


def make_server(folder: Path, port: int) -> http.server.ThreadingHTTPServer:
    """A server for ``folder`` on ``127.0.0.1:port`` (0 picks a free port), not yet serving."""
    if not 0 <= port <= 65535:
        raise InputError(f"--port {port}: must be in 0..65535")
    handler = functools.partial(_QuietHandler, directory=str(folder))
    try:
        return http.server.ThreadingHTTPServer((HOST, port), handler)
    except OSError as exc:
        raise InputError(
            f"cannot serve on {HOST}:{port} ({exc.strerror}); pick another port with --port"
        ) from exc


def serve(folder: Path, port: int, announce: Callable[[str], None] | None = None) -> None:
    """Serve ``folder`` until interrupted (Ctrl-C)."""
    server = make_server(folder, port)
    with server:
        if announce is not None:
            announce(f"http://{HOST}:{server.server_address[1]}/index.html")
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()
