"""``distrl view --serve``: serve a report folder over HTTP on loopback only.

The report works from ``file://``; serving it is for a browser on another machine reaching it
through an SSH tunnel. The server binds 127.0.0.1 only (a report shows model output and task
data, which are nobody else's business) and serves only the report's files: no directory
listings, no symbolic links.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
from collections.abc import Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any

from distrl.errors import InputError

HOST = "127.0.0.1"


class _ReportHandler(http.server.SimpleHTTPRequestHandler):
    """The report's own files and nothing else, without a log line per image request.

    No directory listings (a folder without ``index.html`` is a 404, not an index of whatever
    else lies there) and no symbolic links, whether they point out of the report folder or
    inside it: the report writer never makes links, so a link is something else's.
    """

    def list_directory(self, path: str | os.PathLike[str]) -> None:
        self.send_error(HTTPStatus.NOT_FOUND, "No such file")
        return None

    def send_head(self) -> Any:
        if not self._plain_path_inside(Path(self.translate_path(self.path))):
            self.send_error(HTTPStatus.NOT_FOUND, "No such file")
            return None
        return super().send_head()

    def _plain_path_inside(self, target: Path) -> bool:
        """Whether ``target`` lies under the served folder with no symlink on the way."""
        root = Path(self.directory)
        try:
            relative = target.relative_to(root)
        except ValueError:
            return False
        current = root
        for part in relative.parts:
            current = current / part
            if current.is_symlink():
                return False
        return target.resolve().is_relative_to(root.resolve())

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (stdlib name)
        return


def make_server(folder: Path, port: int) -> http.server.ThreadingHTTPServer:
    """A server for ``folder`` on ``127.0.0.1:port`` (0 picks a free port), not yet serving."""
    if not 0 <= port <= 65535:
        raise InputError(f"--port {port}: must be in 0..65535")
    handler = functools.partial(_ReportHandler, directory=str(folder.absolute()))
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
