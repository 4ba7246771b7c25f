"""``view --serve`` serves the report's files only: no listings, no symlinks, no way out."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from distrl.viewer.serve import make_server


@pytest.fixture()
def served(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    """A report-like folder beside a secret, served on a free loopback port."""
    report = tmp_path / "report"
    (report / "img").mkdir(parents=True)
    (report / "index.html").write_text("<html>report</html>", encoding="utf-8")
    (report / "img" / "plot.png").write_bytes(b"png bytes")
    (report / "empty").mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the browser", encoding="utf-8")
    (report / "link-out.txt").symlink_to(secret)
    (report / "link-in.png").symlink_to(report / "img" / "plot.png")
    (report / "linked-folder").symlink_to(tmp_path, target_is_directory=True)
    server = make_server(report, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield report, server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def fetch(port: int, path: str) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", path)
        reply = connection.getresponse()
        return reply.status, reply.read()
    finally:
        connection.close()


def test_report_files_are_served(served: tuple[Path, int]) -> None:
    _, port = served
    assert fetch(port, "/index.html") == (200, b"<html>report</html>")
    assert fetch(port, "/img/plot.png") == (200, b"png bytes")
    assert fetch(port, "/") == (200, b"<html>report</html>")  # the folder's index page


@pytest.mark.parametrize("path", ["/img/", "/empty/", "/img", "/linked-folder/"])
def test_folders_are_never_listed(served: tuple[Path, int], path: str) -> None:
    _, port = served
    status, body = fetch(port, path)
    assert status in (301, 404)  # a redirect to the slash form, then 404
    assert b"plot.png" not in body and b"Directory listing" not in body
    if status == 301:
        assert fetch(port, path + "/")[0] == 404


@pytest.mark.parametrize(
    "path",
    [
        "/link-out.txt",  # a link out of the report
        "/link-in.png",  # a link inside it
        "/linked-folder/secret.txt",  # a file reached through a linked folder
        "/../secret.txt",
        "/img/../../secret.txt",
        "/%2e%2e/secret.txt",
    ],
)
def test_links_and_traversal_are_refused(served: tuple[Path, int], path: str) -> None:
    _, port = served
    status, body = fetch(port, path)
    assert status == 404
    assert b"not for the browser" not in body and b"png bytes" not in body
