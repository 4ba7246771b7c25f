"""A fake adb server: the adb host protocol over TCP, with PhoneSim phones as its devices.

The adb *host protocol* is what every adb client (the ``adb`` command, adbutils, ddmlib) speaks to
the adb server on port 5037. A request is four hex digits giving the length, then the request
text; the answer starts with ``OKAY``, or ``FAIL`` plus a hex length and a message. Requests
served here:

* host services, answered then closed: ``host:version`` (41, as a current adb),
  ``host:devices``, ``host:devices-l``, ``host:features``, ``host-serial:SERIAL:features`` /
  ``get-state`` / ``get-serialno`` / ``get-devpath`` (also with ``host-transport-id:N:``,
  ``host-local:``, ``host-usb:``), and ``host:emulator:PORT`` (how an emulator announces itself);
* transport switches, after which the next request goes to the device: ``host:transport:SERIAL``,
  ``host:transport-any`` / ``-local`` / ``-id:N``, and the newer ``host:tport:serial:SERIAL`` /
  ``any`` / ``local`` / ``transport-id:N``, which add the transport id (8 bytes, little endian);
* device services: ``shell:CMD`` (output, then the connection closes), ``shell,v2[,...]:CMD``
  (packets ``id, u32 length, data``: 1 stdout, 2 stderr, 3 exit status) and ``exec:CMD`` (raw
  output). :class:`~distrl.fakeadb.device_shell.FakeDevice` decides what a command line does.

Anything else is answered ``FAIL`` with adb's own wording (``unknown host service``, ``device
'X' not found``, ``closed``), never left hanging. Test hooks make a device vanish
(:meth:`FakeAdbServer.remove_device`), stop answering (:meth:`FakeAdbServer.hang`) or change state
(:meth:`FakeAdbServer.set_state`: ``offline``, ``unauthorized``). With PhoneSim's latency model
on (``phonesim_config.latency``), input commands take its modelled time, and its faults show as a
real device's would: a crash makes the device vanish and come back as a fresh phone after
:data:`FAULT_RECOVERY_SECONDS`; a hang leaves that command unanswered and the device silent as
long.

Emulators: an emulator announces itself with ``host:emulator:ADB_PORT``; the real server then
connects to that port and speaks the adb *transport* protocol with the emulator's adbd. Here the
server connects and holds the connection (its closing means the emulator died, and the device
``emulator-CONSOLE_PORT`` vanishes), but the device itself is a PhoneSim phone inside this server
that reports ``sys.boot_completed=1`` after ``emulator_boot_seconds``.
"""

from __future__ import annotations

import itertools
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field

from distrl.config.schema import PhoneSimConfig
from distrl.core.faults import DeviceCrashed, DeviceHung
from distrl.fakeadb.device_shell import FakeDevice, ShellResult

ADB_SERVER_VERSION = 41
DEVICE_FEATURES = "shell_v2,cmd,stat_v2"
HOST_FEATURES = "shell_v2,cmd,stat_v2,push_sync,track_app"
_UNAUTHORIZED = (
    "device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set\n"
    "Try 'adb kill-server' if that seems wrong.\n"
    "Otherwise check for a confirmation dialog on your device."
)
_SERIAL_COMMANDS = ("features", "get-state", "get-serialno", "get-devpath")
_SHELL_V2_STDOUT, _SHELL_V2_STDERR, _SHELL_V2_EXIT = 1, 2, 3
_READ_TIMEOUT = 60.0
#: How long a device faulted by the latency model stays silent or away.
FAULT_RECOVERY_SECONDS = 1.0


class ProtocolFailure(Exception):
    """A request the server answers with FAIL and this message."""


@dataclass
class _Slot:
    """A device as the server holds it: the phone, its adb state, its open connections."""

    device: FakeDevice
    transport_id: int
    state: str = "device"
    answering: threading.Event = field(default_factory=threading.Event)
    connections: set[socket.socket] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.answering.set()


def _recv_exact(sock: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _block(payload: bytes) -> bytes:
    return f"{len(payload):04x}".encode() + payload


class FakeAdbServer:
    """An adb server on ``host:port`` whose ``devices`` are PhoneSim phones.

    >>> import adbutils
    >>> with FakeAdbServer(devices=1) as server:
    ...     client = adbutils.AdbClient("127.0.0.1", server.port)
    ...     [info.serial for info in client.list()]
    ['phonesim-0']
    """

    def __init__(
        self,
        devices: int,
        port: int = 0,
        host: str = "127.0.0.1",
        seed: int = 0,
        phonesim_config: PhoneSimConfig | None = None,
        emulator_boot_seconds: float = 0.5,
    ):
        self.host = host
        self.seed = seed
        self.phonesim_config = phonesim_config
        self.emulator_boot_seconds = emulator_boot_seconds
        self._requested_port = port
        self._listener: socket.socket | None = None
        self._accept_thread: threading.Thread | None = None
        self._threads: set[threading.Thread] = set()
        self._clients: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._transport_ids = itertools.count(1)
        self._slots: dict[str, _Slot] = {}
        self._timers: list[threading.Timer] = []
        for index in range(devices):
            self.add_device(f"phonesim-{index}", seed=seed + index)

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> FakeAdbServer:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((self.host, self._requested_port))
        except OSError:
            listener.close()
            raise
        listener.listen(64)
        self._listener = listener
        self._accept_thread = threading.Thread(
            target=self._accept_loop, name=f"fakeadb-accept-{self.port}", daemon=True
        )
        self._accept_thread.start()
        return self

    def stop(self) -> None:
        """Close every connection and the listening socket; release hung commands."""
        self._stopping.set()
        with self._lock:
            timers = list(self._timers)
        for timer in timers:
            timer.cancel()
        if self._listener is not None:
            with suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
        with self._lock:
            slots = list(self._slots.values())
            clients = list(self._clients)
        for slot in slots:
            slot.answering.set()
        for client in clients:
            _close(client)
        if self._accept_thread is not None:
            self._accept_thread.join(timeout=5)
        for thread in list(self._threads):
            thread.join(timeout=5)

    def __enter__(self) -> FakeAdbServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._listener is None:
            raise RuntimeError("the server is not started; call start()")
        return int(self._listener.getsockname()[1])

    # -- devices and test hooks -----------------------------------------------------------------
    @property
    def serials(self) -> list[str]:
        with self._lock:
            return list(self._slots)

    def device(self, serial: str) -> FakeDevice:
        with self._lock:
            return self._slots[serial].device

    def add_device(
        self,
        serial: str,
        seed: int | None = None,
        boot_seconds: float = 0.0,
        harness: bool = True,
    ) -> FakeDevice:
        """Plug in a device (``harness=False``: without ``distrl-task``, like a real phone)."""
        seed = self.seed + len(self._slots) if seed is None else seed
        device = FakeDevice(serial, seed, self.phonesim_config, boot_seconds, harness)
        with self._lock:
            self._slots[serial] = _Slot(device, next(self._transport_ids))
        return device

    def remove_device(self, serial: str, device: FakeDevice | None = None) -> None:
        """The device vanishes: gone from ``host:devices``, its open connections dropped.

        With ``device``, only while ``serial`` still names that device (not a successor)."""
        with self._lock:
            slot = self._slots.get(serial)
            if slot is None or (device is not None and slot.device is not device):
                return
            del self._slots[serial]
        slot.answering.set()
        for connection in list(slot.connections):
            _close(connection)

    def hang(self, serial: str, hung: bool = True) -> None:
        """Make the device stop answering commands (``hung=False`` wakes it up)."""
        with self._lock:
            slot = self._slots[serial]
        (slot.answering.clear if hung else slot.answering.set)()

    def set_state(self, serial: str, state: str) -> None:
        """Set the state ``host:devices`` reports: ``device``, ``offline``, ``unauthorized``."""
        with self._lock:
            self._slots[serial].state = state

    # -- connections ----------------------------------------------------------------------------
    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stopping.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(client,), daemon=True)
            with self._lock:
                self._clients.add(client)
                self._threads.add(thread)
            thread.start()

    def _serve(self, client: socket.socket) -> None:
        client.settimeout(_READ_TIMEOUT)
        slot: _Slot | None = None
        try:
            while not self._stopping.is_set():
                request = self._read_request(client)
                if request is None:
                    return
                try:
                    if slot is None:
                        slot = self._host_request(client, request)
                        if slot is None:
                            return  # a one-shot host service: answered, connection done
                    else:
                        self._device_request(client, slot, request)
                        return
                except ProtocolFailure as failure:
                    client.sendall(b"FAIL" + _block(str(failure).encode()))
                    return
        except OSError:
            return  # the client went away, or the device was removed under us
        finally:
            if slot is not None:
                slot.connections.discard(client)
            with self._lock:
                self._clients.discard(client)
                self._threads.discard(threading.current_thread())
            _close(client)

    @staticmethod
    def _read_request(client: socket.socket) -> str | None:
        header = _recv_exact(client, 4)
        if header is None:
            return None
        try:
            size = int(header, 16)
        except ValueError:
            return None
        payload = _recv_exact(client, size)
        return None if payload is None else payload.decode("utf-8", errors="replace")

    # -- host services --------------------------------------------------------------------------
    def _host_request(self, client: socket.socket, request: str) -> _Slot | None:
        """Answer a host service; return the device slot when the request switched transport."""
        if request == "host:version":
            client.sendall(b"OKAY" + _block(f"{ADB_SERVER_VERSION:04x}".encode()))
        elif request in ("host:devices", "host:devices-l"):
            client.sendall(b"OKAY" + _block(self._device_list(request.endswith("-l")).encode()))
        elif request == "host:features":
            client.sendall(b"OKAY" + _block(HOST_FEATURES.encode()))
        elif request.startswith("host:emulator:"):
            self._register_emulator(request.removeprefix("host:emulator:"))
        elif request.startswith(("host:transport", "host:tport:")):
            slot = self._switch_transport(request)
            with self._lock:
                slot.connections.add(client)
            client.sendall(b"OKAY")
            if request.startswith("host:tport:"):
                client.sendall(struct.pack("<Q", slot.transport_id))
            return slot
        elif request.startswith(("host-serial:", "host-transport-id:", "host-local:", "host-usb:")):
            client.sendall(b"OKAY" + _block(self._serial_command(request).encode()))
        else:
            raise ProtocolFailure("unknown host service")
        return None

    def _device_list(self, long: bool) -> str:
        with self._lock:
            slots = list(self._slots.items())
        lines = []
        for serial, slot in slots:
            if long:
                lines.append(
                    f"{serial:<22} {slot.state} product:phonesim model:PhoneSim device:phonesim "
                    f"transport_id:{slot.transport_id}"
                )
            else:
                lines.append(f"{serial}\t{slot.state}")
        return "".join(line + "\n" for line in lines)

    def _find(self, selector: str) -> _Slot:
        """The device a transport selector names (a serial, ``any``, ``local``, ``id:N``)."""
        with self._lock:
            slots = dict(self._slots)
        if selector in ("any", "local", "usb"):
            candidates = [] if selector == "usb" else list(slots.values())
            if not candidates:
                raise ProtocolFailure("no devices/emulators found")
            if len(candidates) > 1:
                raise ProtocolFailure("more than one device/emulator")
            return candidates[0]
        if selector.startswith("id:"):
            for slot in slots.values():
                if str(slot.transport_id) == selector[3:]:
                    return slot
            raise ProtocolFailure(f"no device with transport id '{selector[3:]}'")
        if selector not in slots:
            raise ProtocolFailure(f"device '{selector}' not found")
        return slots[selector]

    def _switch_transport(self, request: str) -> _Slot:
        selectors = {
            "host:transport-any": "any",
            "host:transport-local": "local",
            "host:transport-usb": "usb",
            "host:tport:any": "any",
            "host:tport:local": "local",
            "host:tport:usb": "usb",
        }
        if request in selectors:
            selector = selectors[request]
        elif request.startswith("host:transport-id:"):
            selector = "id:" + request.removeprefix("host:transport-id:")
        elif request.startswith("host:tport:transport-id:"):
            selector = "id:" + request.removeprefix("host:tport:transport-id:")
        elif request.startswith("host:tport:serial:"):
            selector = request.removeprefix("host:tport:serial:")
        elif request.startswith("host:transport:"):
            selector = request.removeprefix("host:transport:")
        else:
            raise ProtocolFailure("unknown host service")
        slot = self._find(selector)
        if slot.state == "offline":
            raise ProtocolFailure("device offline")
        if slot.state == "unauthorized":
            raise ProtocolFailure(_UNAUTHORIZED)
        return slot

    def _serial_command(self, request: str) -> str:
        prefix, _, rest = request.partition(":")
        command = next((c for c in _SERIAL_COMMANDS if rest.endswith(c)), None)
        if command is None:
            raise ProtocolFailure("unknown host service")
        target = rest[: -len(command)].rstrip(":")
        selector = {"host-local": "local", "host-usb": "usb"}.get(prefix, target)
        if prefix == "host-transport-id":
            selector = "id:" + target
        slot = self._find(selector)
        answers = {
            "features": DEVICE_FEATURES,
            "get-state": slot.state,
            "get-serialno": slot.device.serial,
            "get-devpath": "unknown",
        }
        return answers[command]

    # -- device services ------------------------------------------------------------------------
    def _device_request(self, client: socket.socket, slot: _Slot, request: str) -> None:
        service, colon, command = request.partition(":")
        options = service.split(",")
        if not colon or options[0] not in ("shell", "exec"):
            raise ProtocolFailure("closed")
        if not command:
            raise ProtocolFailure("fake-adb: an interactive shell is not emulated")
        result = self._run_on_device(slot, command)
        if result is None:
            return  # the device vanished or the server stopped while the command was waiting
        client.sendall(b"OKAY")
        if options[0] == "shell" and "v2" in options[1:]:
            client.sendall(b"".join(_shell_v2_packets(result)))
        else:
            client.sendall(result.stdout + result.stderr)
        with suppress(OSError):
            client.shutdown(socket.SHUT_WR)

    def _run_on_device(self, slot: _Slot, command: str) -> ShellResult | None:
        while not slot.answering.wait(timeout=0.2):
            if self._stopping.is_set():
                return None
        with self._lock:
            current = self._slots.get(slot.device.serial) is slot
        if not current or self._stopping.is_set():
            return None
        try:
            return slot.device.run(command)
        except DeviceCrashed:
            self._crash(slot)
        except DeviceHung:
            slot.answering.clear()
            self._later(slot.answering.set)
        return None

    def _crash(self, slot: _Slot) -> None:
        """A crash drawn by the PhoneSim latency model: the device vanishes, and a fresh phone
        comes back under the same serial a moment later, as a supervised emulator would."""
        device = slot.device
        self.remove_device(device.serial, device)
        self._later(
            lambda: self.add_device(device.serial, seed=device.seed + 7919, harness=device.harness)
        )

    def _later(self, action: Callable[[], object]) -> None:
        timer = threading.Timer(FAULT_RECOVERY_SECONDS, action)
        timer.daemon = True
        with self._lock:
            self._timers = [t for t in self._timers if t.is_alive()] + [timer]
        timer.start()

    def _register_emulator(self, port_text: str) -> None:
        """An emulator announced its adb port: hold a connection to it, as adb would, and show
        ``emulator-CONSOLE`` while that connection lives."""
        try:
            adb_port = int(port_text)
        except ValueError:
            return
        serial = f"emulator-{adb_port - 1}"
        try:
            link = socket.create_connection(("127.0.0.1", adb_port), timeout=5)
        except OSError:
            return
        link.settimeout(None)
        device = self.add_device(
            serial, seed=self.seed + adb_port, boot_seconds=self.emulator_boot_seconds
        )
        thread = threading.Thread(
            target=self._watch_emulator,
            args=(serial, device, link),
            name=f"fakeadb-{serial}",
            daemon=True,
        )
        with self._lock:
            self._clients.add(link)
            self._threads.add(thread)
        thread.start()

    def _watch_emulator(self, serial: str, device: FakeDevice, link: socket.socket) -> None:
        try:
            while link.recv(4096):
                pass
        except OSError:
            pass
        finally:
            with self._lock:
                self._clients.discard(link)
                self._threads.discard(threading.current_thread())
            _close(link)
            self.remove_device(serial, device)


def _shell_v2_packets(result: ShellResult) -> Iterator[bytes]:
    for packet_id, data in ((_SHELL_V2_STDOUT, result.stdout), (_SHELL_V2_STDERR, result.stderr)):
        if data:
            yield struct.pack("<BI", packet_id, len(data)) + data
    yield struct.pack("<BI", _SHELL_V2_EXIT, 1) + bytes([result.exit_code & 0xFF])


def _close(sock: socket.socket) -> None:
    with suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with suppress(OSError):
        sock.close()
