"""fake-adb speaks the adb host protocol: adbutils' own client, and the raw bytes on the wire."""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator

import adbutils
import numpy as np
import pytest
from PIL import Image

from distrl.fakeadb import FakeAdbServer, FakeDevice
from distrl.fakeadb.device_shell import android_input_text, interpreted_syntax, split_command_line


@pytest.fixture()
def server() -> Iterator[FakeAdbServer]:
    with FakeAdbServer(devices=3, seed=5) as fake:
        yield fake


@pytest.fixture()
def client(server: FakeAdbServer) -> adbutils.AdbClient:
    return adbutils.AdbClient("127.0.0.1", server.port, socket_timeout=5)


def request(port: int, *services: str) -> bytes:
    """Send host-protocol requests on one connection; everything the server sent until it
    closed the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        for service in services:
            data = service.encode()
            sock.sendall(f"{len(data):04x}".encode() + data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_adbutils_lists_devices(client: adbutils.AdbClient) -> None:
    assert client.server_version() == 41
    assert [(d.serial, d.state) for d in client.list()] == [
        ("phonesim-0", "device"),
        ("phonesim-1", "device"),
        ("phonesim-2", "device"),
    ]
    extended = client.list(extended=True)[1]
    assert extended.tags["model"] == "PhoneSim" and extended.tags["transport_id"] == "2"
    assert [d.serial for d in client.device_list()] == ["phonesim-0", "phonesim-1", "phonesim-2"]


def test_adbutils_runs_shell_commands(client: adbutils.AdbClient, server: FakeAdbServer) -> None:
    device = client.device("phonesim-1")
    assert device.shell("getprop sys.boot_completed") == "1"
    assert device.shell("wm size") == "Physical size: 360x720"
    assert device.get_state() == "device" and device.get_serialno() == "phonesim-1"
    assert "shell_v2" in device.get_features()
    result = device.shell2("input text 'hello%sworld'", v2=True)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert server.device("phonesim-1").typed == ["hello world"]
    dumped = device.shell("uiautomator dump")
    assert dumped == "UI hierchary dumped to: /sdcard/window_dump.xml"
    assert device.shell("cat /sdcard/window_dump.xml").startswith("<?xml")
    assert device.shell(["echo", "a b", "c"]) == "a b c"  # adbutils quotes list arguments


def test_screencap_png_is_the_phonesim_screenshot(
    client: adbutils.AdbClient, server: FakeAdbServer
) -> None:
    device = client.device("phonesim-0")
    png = device.shell(["screencap", "-p"], encoding=None)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    assert np.array_equal(image, server.device("phonesim-0").screenshot())
    assert np.array_equal(np.asarray(device.screenshot()), image)  # adbutils' own screenshot()
    exec_out = request(server.port, "host:transport:phonesim-0", "exec:screencap -p")
    assert exec_out[:4] == b"OKAY" and exec_out[8:] == png  # OKAY, OKAY, then raw PNG bytes


def test_unsupported_commands_fail_quickly_like_android(client: adbutils.AdbClient) -> None:
    device = client.device("phonesim-2")
    started = time.monotonic()
    result = device.shell2("frobnicate --now", v2=True)
    assert result.returncode == 127
    assert result.stderr.strip() == "/system/bin/sh: frobnicate: inaccessible or not found"
    assert device.shell2("cat /nope", v2=True).stderr.strip() == (
        "cat: /nope: No such file or directory"
    )
    assert device.shell2("input text 'unterminated", v2=True).returncode == 2
    refused = device.shell2("input text $(reboot)", v2=True)
    assert refused.returncode == 2 and "does not emulate" in refused.stderr
    assert time.monotonic() - started < 2


def test_wire_format_of_answers(server: FakeAdbServer) -> None:
    assert request(server.port, "host:version") == b"OKAY00040029"
    devices = request(server.port, "host:devices")
    body = b"phonesim-0\tdevice\nphonesim-1\tdevice\nphonesim-2\tdevice\n"
    assert devices == b"OKAY" + f"{len(body):04x}".encode() + body
    assert request(server.port, "host:frobnicate") == b"FAIL0014unknown host service"
    assert request(server.port, "host:transport:nope") == b"FAIL0017device 'nope' not found"
    assert request(server.port, "host:transport-any") == b"FAIL001dmore than one device/emulator"
    tport = request(server.port, "host:tport:serial:phonesim-2", "shell:echo hi")
    assert tport == b"OKAY" + struct.pack("<Q", 3) + b"OKAYhi\n"
    v2 = request(server.port, "host:transport:phonesim-2", "shell,v2,raw:echo hi; nope")
    stderr = b"/system/bin/sh: nope: inaccessible or not found\n"
    assert v2 == (
        b"OKAYOKAY"
        + struct.pack("<BI", 1, 3)
        + b"hi\n"
        + struct.pack("<BI", 2, len(stderr))
        + stderr
        + struct.pack("<BI", 3, 1)
        + bytes([127])
    )
    assert request(server.port, "host:transport:phonesim-2", "sync:") == b"OKAYFAIL0006closed"
    assert request(server.port, "host-serial:phonesim-1:get-state") == b"OKAY0006device"


def test_device_states_and_removal(server: FakeAdbServer, client: adbutils.AdbClient) -> None:
    server.set_state("phonesim-1", "offline")
    assert ("phonesim-1", "offline") in [(d.serial, d.state) for d in client.list()]
    with pytest.raises(adbutils.AdbError, match="device offline"):
        client.device("phonesim-1").shell("echo hi")
    server.hang("phonesim-0")
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        for service in (b"host:transport:phonesim-0", b"shell:echo never"):
            sock.sendall(b"%04x" % len(service) + service)
        assert sock.recv(4) == b"OKAY"  # the transport switch; then the device is silent
        sock.settimeout(0.3)
        with pytest.raises(TimeoutError):
            sock.recv(4)
        server.remove_device("phonesim-0")  # vanishes: the open connection drops
        sock.settimeout(5)
        assert sock.recv(4) == b""
    assert "phonesim-0" not in [d.serial for d in client.list()]
    with pytest.raises(adbutils.AdbError, match="not found"):
        client.device("phonesim-0").shell("echo hi")


def test_shell_line_is_tokenized_as_sh_would() -> None:
    assert split_command_line("input text 'a b' ; input keyevent 4") == [
        ["input", "text", "a b"],
        ["input", "keyevent", "4"],
    ]
    assert split_command_line("input text 'it'\\''s'") == [["input", "text", "it's"]]
    assert split_command_line("echo 'a;b' \"c d\" e\\ f # comment; x") == [
        ["echo", "a;b", "c d", "e f"]
    ]
    findings, _ = interpreted_syntax("echo $(id) `id` a|b c>d ~ *")
    assert len(findings) == 9  # $ ( ) ` ` | > ~ *
    assert interpreted_syntax("input text '$(id) `id` | > ~ *'") == ([], [])
    with pytest.raises(ValueError, match="unterminated"):
        interpreted_syntax("echo 'open")


def test_android_input_text_percent_rule() -> None:
    assert android_input_text("a%sb") == "a b"
    assert android_input_text("100%") == "100%"
    assert android_input_text("%%s") == "% "
    assert android_input_text("%ss") == " s"


def test_fake_device_input_drives_the_phone() -> None:
    device = FakeDevice("phonesim-0", seed=1)
    device.run("distrl-task setup general-train-0000")
    assert device.run("distrl-task status").stdout == b"running\n"
    assert device.run("input keyevent KEYCODE_HOME KEYCODE_BACK").exit_code == 0
    assert device.run("input keyevent KEYCODE_VOLUME_UP").exit_code == 1
    assert device.run("input tap 5000 5000").exit_code == 0  # off screen: nothing happens
    assert device.run("input text a b").exit_code == 1  # two words: Android types one argument
    assert device.run("distrl-task setup nope").stderr.startswith(b"distrl-task: unknown task")


def test_cli_serves_until_interrupted() -> None:
    code = (
        "import argparse, sys\n"
        "from distrl.cli.fakeadb_cmd import run\n"
        "args = argparse.Namespace(preset=None, json=True, fake_devices=2, fake_port=0,\n"
        "                          fake_host='127.0.0.1')\n"
        "sys.exit(run(args, ['seed=3']))\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        announced = json.loads(process.stdout.readline())
        assert announced["serials"] == ["phonesim-0", "phonesim-1"]
        listed = adbutils.AdbClient("127.0.0.1", announced["port"]).list()
        assert [d.serial for d in listed] == ["phonesim-0", "phonesim-1"]
        os.kill(process.pid, signal.SIGINT)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
