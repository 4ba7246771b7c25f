"""``distrl fake-adb``: serve PhoneSim phones over the adb host protocol until Ctrl-C.

The Android backend then runs unchanged against them: ``env.backend=android
env.android.adb_port=PORT``. Phones are seeded from the run seed (device ``i``: ``seed + i``) and
use the config's ``env.phonesim`` section (screen size, dynamics, latency model).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading

from distrl.cli.foreground import interrupt_on_signals
from distrl.config.loader import load_config
from distrl.errors import InputError
from distrl.fakeadb import FakeAdbServer

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def run(args: argparse.Namespace, overrides: list[str]) -> int:
    cfg = load_config(args.preset, overrides)
    devices, port, host = args.fake_devices, args.fake_port, args.fake_host
    if devices < 1:
        raise InputError(f"--devices {devices}: fake-adb needs at least one device")
    if not 0 <= port <= 65535:
        raise InputError(f"--port {port} is not a TCP port (0-65535; 0 picks a free one)")
    server = FakeAdbServer(
        devices=devices, port=port, host=host, seed=cfg.seed, phonesim_config=cfg.env.phonesim
    )
    try:
        server.start()
    except OSError as error:
        raise InputError(
            f"fake-adb cannot listen on {host}:{port} ({error.strerror or error}): a real adb "
            "server may hold it (`adb kill-server`), or pick another --port"
        ) from error
    interrupt_on_signals()
    try:
        _announce(server, as_json=args.json)
        threading.Event().wait()  # serve until Ctrl-C
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    if not args.json:
        print("fake-adb stopped", file=sys.stderr)
    return 0


def _announce(server: FakeAdbServer, as_json: bool) -> None:
    if as_json:
        print(json.dumps({"port": server.port, "serials": server.serials}), flush=True)
        return
    if server.host not in _LOOPBACK:
        print(
            f"fake-adb: warning: serving on {server.host}, not loopback: anyone who reaches it "
            "can drive these devices",
            file=sys.stderr,
        )
    print(f"fake-adb: adb server on {server.host}:{server.port}")
    for serial in server.serials:
        print(f"  {serial}\tdevice")
    print(
        f"use it: env.backend=android env.android.adb_host={server.host} "
        f"env.android.adb_port={server.port}   (stop: Ctrl-C)",
        flush=True,
    )
