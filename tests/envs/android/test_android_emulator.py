"""EmulatorPool: command line, missing binaries, and a boot/snapshot/crash/restart cycle against a
stand-in ``emulator`` that speaks the real protocols (emulator console, ``host:emulator:PORT``)."""

from __future__ import annotations

import socket
import stat
import sys
import time
from pathlib import Path

import pytest

from distrl.config.schema import AndroidConfig, EmulatorConfig
from distrl.core.faults import DeviceCrashed
from distrl.envs.android.adb_device import list_devices
from distrl.envs.android.emulator import (
    ConsoleError,
    EmulatorBootError,
    EmulatorConsole,
    EmulatorNotFound,
    EmulatorPool,
)
from distrl.envs.android.env import AndroidEnv
from distrl.envs.phonesim.tasks.suites import load_suite
from distrl.errors import InputError
from distrl.fakeadb import FakeAdbServer

# What the SDK's emulator does that the pool relies on, and nothing more: parse -avd/-port, write
# the console auth token if missing, serve the console (banner, auth, avd snapshot save/load,
# kill) on the even port, accept adb on the odd one, announce itself to the adb server named by
# ANDROID_ADB_SERVER_PORT with host:emulator:ADB_PORT. Snapshots persist in a file, like an AVD's.
FAKE_EMULATOR = """#!{python}
import os, pathlib, secrets, socket, sys, threading

args = sys.argv[1:]
console_port = int(args[args.index("-port") + 1])
avd = args[args.index("-avd") + 1]
print("argv", " ".join(args), flush=True)
token_path = pathlib.Path.home() / ".emulator_console_auth_token"
if not token_path.exists():
    token_path.write_text(secrets.token_hex(8))
token = token_path.read_text().strip()
store = pathlib.Path(__file__).with_name(avd + ".snapshots")
adb = socket.create_server(("127.0.0.1", console_port + 1))
console = socket.create_server(("127.0.0.1", console_port))
held = []

def accept_adb():
    while True:
        held.append(adb.accept()[0])

threading.Thread(target=accept_adb, daemon=True).start()
announce = ("host:emulator:%d" % (console_port + 1)).encode()
with socket.create_connection(("127.0.0.1", int(os.environ["ANDROID_ADB_SERVER_PORT"]))) as s:
    s.sendall(b"%04x" % len(announce) + announce)

def serve(conn):
    stream = conn.makefile("rwb")
    def send(*lines):
        stream.write(b"".join(line.encode() + b"\\r\\n" for line in lines))
        stream.flush()
    send("Android Console: Authentication required",
         "Android Console: type 'auth <auth_token>' to authenticate",
         "Android Console: you can find your <auth_token> in", "'%s'" % token_path, "OK")
    authed = False
    for raw in stream:
        line = raw.decode().strip()
        print("console", line, flush=True)
        snapshots = set(store.read_text().split()) if store.exists() else set()
        if line == "auth " + token:
            authed = True
            send("Android Console: type 'help' for a list of commands", "OK")
        elif line == "quit":
            break
        elif not authed:
            send("KO: unknown command, try 'help'")
        elif line.startswith("avd snapshot save "):
            store.write_text(" ".join(snapshots | {{line.split()[-1]}}))
            send("OK")
        elif line.startswith("avd snapshot load "):
            name = line.split()[-1]
            send("OK" if name in snapshots else "KO: snapshot '%s' does not exist" % name)
        elif line == "kill":
            send("OK: killing emulator, bye bye")
            os._exit(0)
        else:
            send("KO: unknown command, try 'help'")
    conn.close()

while True:
    threading.Thread(target=serve, args=(console.accept()[0],), daemon=True).start()
"""


def write_script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def free_console_port() -> int:
    """An even port in the emulator range whose odd neighbour is free too."""
    for port in range(5600, 5682, 2):
        sockets = []
        try:
            for candidate in (port, port + 1):
                sock = socket.socket()
                sockets.append(sock)
                sock.bind(("127.0.0.1", candidate))
            return port
        except OSError:
            continue
        finally:
            for sock in sockets:
                sock.close()
    pytest.skip("no free emulator console port pair")


def pool_config(binary: str, port: int = 5554, adb_port: int = 5037, **emulator: object):
    return AndroidConfig(
        adb_port=adb_port,
        reset="snapshot",
        command_timeout_seconds=5,
        emulator=EmulatorConfig(binary=binary, avd="Pixel_7", first_port=port, **emulator),
    )


def test_command_line_is_headless_on_the_console_port(tmp_path: Path) -> None:
    cfg = pool_config("/sdk/emulator/emulator", port=5556, count=2, extra_args=["-gpu", "host"])
    pool = EmulatorPool(cfg, log_dir=tmp_path)
    assert pool.serials == ["emulator-5556", "emulator-5558"]
    assert pool.command_line(1) == [
        "/sdk/emulator/emulator",
        "-avd",
        "Pixel_7",
        "-no-window",
        "-port",
        "5558",
        "-no-audio",
        "-no-boot-anim",
        "-gpu",
        "host",
    ]


def test_missing_or_unusable_binary_is_a_clear_error(tmp_path: Path) -> None:
    missing = EmulatorPool(pool_config(str(tmp_path / "emulator")), log_dir=tmp_path)
    with pytest.raises(EmulatorNotFound, match="does not exist.*ANDROID_HOME"):
        missing.start()
    plain = tmp_path / "not-executable"
    plain.write_text("")
    with pytest.raises(EmulatorNotFound, match="not executable"):
        EmulatorPool(pool_config(str(plain)), log_dir=tmp_path).start()
    with pytest.raises(InputError, match="emulator.avd"):
        EmulatorPool(AndroidConfig(emulator=EmulatorConfig(binary="emulator")))
    with pytest.raises(InputError, match="must be even"):
        EmulatorPool(pool_config("emulator", port=5555))
    with pytest.raises(InputError, match="reset=home"):
        EmulatorConsole.for_serial("phonesim-0")


def test_boot_failures_carry_the_log(tmp_path: Path) -> None:
    port = free_console_port()
    crashing = write_script(
        tmp_path / "crashing", "#!/bin/sh\necho 'PANIC: Missing emulator engine program'\nexit 1\n"
    )
    silent = write_script(tmp_path / "silent", "#!/bin/sh\nexec sleep 30\n")
    with FakeAdbServer(devices=0) as server:
        with pytest.raises(EmulatorBootError, match="exited with status 1.*PANIC"):
            cfg = pool_config(str(crashing), port=port, adb_port=server.port)
            EmulatorPool(cfg, log_dir=tmp_path).start()
        cfg = pool_config(str(silent), port=port, adb_port=server.port, boot_timeout_seconds=0.5)
        pool = EmulatorPool(cfg, log_dir=tmp_path)
        started = time.monotonic()
        with pytest.raises(EmulatorBootError, match="did not boot within"):
            pool.start()
        assert time.monotonic() - started < 5
        assert pool.emulators[0].process is None  # terminated, not left behind


def wait_until(condition, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def test_boot_snapshot_crash_and_restart(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # the console auth token lives in $HOME
    script = write_script(tmp_path / "emulator", FAKE_EMULATOR.format(python=sys.executable))
    port = free_console_port()
    serial = f"emulator-{port}"
    with FakeAdbServer(devices=0, emulator_boot_seconds=0.3) as server:
        cfg = pool_config(str(script), port=port, adb_port=server.port, boot_timeout_seconds=20)
        pool = EmulatorPool(cfg, log_dir=tmp_path / "logs")
        try:
            assert pool.start() == [serial]
            log = (tmp_path / "logs" / f"{serial}.log").read_text()
            assert f"-avd Pixel_7 -no-window -port {port} -no-audio -no-boot-anim" in log
            assert "console avd snapshot save distrl" in log
            assert pool.healthy(0)

            env = AndroidEnv(cfg, serial)
            task = load_suite("general", "train")[0]
            env.reset(task)  # loads the snapshot through the console
            assert "console avd snapshot load distrl" in pool.emulators[0].log_tail()
            with pytest.raises(ConsoleError, match="does not exist"):
                pool.console(0).command("avd snapshot load other")

            pool.emulators[0].process.kill()  # the emulator dies
            pool.emulators[0].process.wait()
            wait_until(lambda: serial not in dict(list_devices("127.0.0.1", server.port)))
            assert not pool.healthy(0)
            with pytest.raises(DeviceCrashed):
                env.step(env.expert_action())

            assert pool.restart(0) == serial
            assert pool.healthy(0)
            env.reset(task)  # the reset after a fault reconnects
            env.step(env.expert_action())
        finally:
            pool.stop()
        assert pool.emulators[0].process is None


def test_backend_boots_the_pool_once_and_rebuilds_a_dead_emulator(
    tmp_path: Path, monkeypatch
) -> None:
    from distrl.config.schema import RunConfig
    from distrl.envs import emulator_pool
    from distrl.envs.devices import Purpose, make_device

    monkeypatch.setenv("HOME", str(tmp_path))
    script = write_script(tmp_path / "emulator", FAKE_EMULATOR.format(python=sys.executable))
    port = free_console_port()
    with FakeAdbServer(devices=0, emulator_boot_seconds=0.3) as server:
        android = pool_config(str(script), port=port, adb_port=server.port, boot_timeout_seconds=20)
        cfg = RunConfig(env={"backend": "android", "android": android.model_dump()})
        try:
            # Screenshots are bounded at the source (envs/bounded.py): the wrapper holds the
            # backend's device.
            device = make_device(cfg, Purpose.TRAIN, 0)
            assert isinstance(device.device, AndroidEnv)
            assert device.serial == f"emulator-{port}"
            (pool,) = emulator_pool._POOLS.values()
            assert make_device(cfg, Purpose.TRAIN, 0).serial == device.serial  # booted once
            first = pool.emulators[0].process
            first.kill()
            first.wait()
            rebuilt = make_device(cfg, Purpose.TRAIN, 0)  # what a worker does after a crash
            assert pool.emulators[0].process is not first and pool.healthy(0)
            rebuilt.reset(load_suite("general", "train")[0])
            with pytest.raises(InputError, match="needs 2 devices"):
                make_device(cfg, Purpose.TRAIN, 1)
        finally:
            for pool in emulator_pool._POOLS.values():
                pool.stop()
            emulator_pool._POOLS.clear()
