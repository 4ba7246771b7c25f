"""A fake OpenAI-compatible chat endpoint on loopback, for demos and tests of the VLM judge.

It speaks the wire protocol the real API does, so the judge is exercised through the ``openai``
client, real HTTP and real error handling rather than a mocked method:

* ``POST /v1/chat/completions`` checks the request as a strict server would (JSON object body,
  ``model``, ``messages`` with text and ``image_url`` parts, image URLs that are
  ``data:image/png;base64,...`` and decode as PNG, the bearer key when one is set) and answers
  with a ``chat.completion`` object, or an OpenAI-style ``{"error": {...}}`` with 400, 401 or
  404.
* ``GET /v1/models`` lists the model names it serves.

What it answers:

* ``mode="demo"`` (``distrl fake-vlm``): "success" when the action history in the prompt ends
  with ``STATUS_TASK_COMPLETE``, otherwise a coin flip seeded by the hash of the last image.
  Deterministic, needs no model, and **looks at no pixels**: agreement figures measured against
  it show that the pipeline (store, prompt, HTTP, parsing, metrics) works, not how good any VLM
  is.
* ``mode="scripted"`` (tests): ``answers`` is a list of reply texts used in order, or a function
  from the :class:`ReceivedRequest` to a reply text.

Faults (``inject``) are served before answers, in order: N x 429 with ``Retry-After``, N x 500,
a reply slower than the client's timeout, a 200 whose body is not JSON. Every chat request is
recorded (without its Authorization header) in :attr:`FakeChatEndpoint.requests`.

>>> with FakeChatEndpoint(mode="scripted", answers=["Status: success"]) as fake:
...     fake.url.startswith("http://127.0.0.1:")
True
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import re
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from PIL import Image

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_DATA_URL_PREFIX = "data:image/png;base64,"
_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_HISTORY_LINE_RE = re.compile(r"^\s*\d+\.\s+([A-Z_]+)", re.MULTILINE)
_MAX_BODY_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Fault:
    """One injected failure; build with the class methods."""

    kind: Literal["rate_limit", "server_error", "slow", "malformed"]
    retry_after: float | None = None
    delay_seconds: float = 0.0

    @classmethod
    def rate_limit(cls, retry_after: float | None = 1.0) -> Fault:
        """HTTP 429 with ``Retry-After: <seconds>`` (no header when None)."""
        return cls("rate_limit", retry_after=retry_after)

    @classmethod
    def server_error(cls) -> Fault:
        """HTTP 500 with an OpenAI-style error body."""
        return cls("server_error")

    @classmethod
    def slow(cls, delay_seconds: float) -> Fault:
        """A normal answer, but only after ``delay_seconds`` (longer than the client timeout)."""
        return cls("slow", delay_seconds=delay_seconds)

    @classmethod
    def malformed(cls) -> Fault:
        """HTTP 200 whose body is truncated JSON."""
        return cls("malformed")


@dataclass
class ReceivedRequest:
    """A chat request as the fake saw it: body, text parts, decoded PNG images, and the outcome."""

    body: dict[str, Any]
    texts: list[str] = field(default_factory=list)
    images: list[bytes] = field(default_factory=list)
    #: HTTP status the fake answered with; "fault" names an injected fault, if one was served.
    status: int = 200
    fault: str | None = None
    answer: str | None = None
    #: ``time.monotonic()`` when the request arrived (tests measure rate limiting with it).
    received_at: float = 0.0

    @property
    def prompt_text(self) -> str:
        return "\n".join(self.texts)


class _RequestInvalid(Exception):
    """Raised inside the handler to answer with an OpenAI-style error."""

    def __init__(
        self, status: int, message: str, code: str | None = None, param: str | None = None
    ):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.param = param


Answerer = Callable[[ReceivedRequest], str]


def demo_answer(request: ReceivedRequest) -> str:
    """The demo verdict: trust a declared completion, else a coin seeded by the last image.

    Honest by construction: it reads the action history and hashes bytes; it does not look at the
    screen, so it measures the plumbing, not a model.
    """
    history = _HISTORY_LINE_RE.findall(request.prompt_text)
    if history and history[-1] == "STATUS_TASK_COMPLETE":
        return "The agent's last action declares the task complete.\nStatus: success"
    seed = hashlib.sha256(request.images[-1] if request.images else b"").digest()[0]
    if seed % 2 == 0:
        return "Demo coin (hash of the last screenshot) came up heads.\nStatus: success"
    return "Demo coin (hash of the last screenshot) came up tails.\nStatus: failure"


def _validate_png(url: object, where: str) -> bytes:
    if not isinstance(url, str) or not url.startswith(_DATA_URL_PREFIX):
        raise _RequestInvalid(
            400,
            f"Invalid image URL at {where}: this server accepts only '{_DATA_URL_PREFIX}...' URLs.",
            "invalid_image_url",
            where,
        )
    try:
        data = base64.b64decode(url[len(_DATA_URL_PREFIX) :], validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _RequestInvalid(
            400, f"Invalid base64 image data at {where}.", "invalid_image_format", where
        ) from exc
    if not data.startswith(PNG_SIGNATURE):
        raise _RequestInvalid(400, f"Image at {where} is not a PNG.", "invalid_image_format", where)
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.verify()
    except Exception as exc:  # PIL raises many types for corrupt files; all mean "bad image"
        raise _RequestInvalid(
            400, f"Image at {where} could not be decoded.", "invalid_image_format", where
        ) from exc
    return data


def parse_chat_request(body: object, models: Sequence[str] | None) -> ReceivedRequest:
    """Validate a chat-completions body like a strict server; raises :class:`_RequestInvalid`."""
    if not isinstance(body, dict):
        raise _RequestInvalid(400, "The request body must be a JSON object.")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _RequestInvalid(400, "you must provide a model parameter", param="model")
    if models is not None and model not in models:
        raise _RequestInvalid(
            404, f"The model `{model}` does not exist.", "model_not_found", "model"
        )
    if body.get("stream"):
        raise _RequestInvalid(400, "This server does not support streaming.", param="stream")
    if body.get("n", 1) != 1:
        raise _RequestInvalid(400, "This server supports only n=1.", param="n")
    temperature = body.get("temperature", 1.0)
    if not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2:
        raise _RequestInvalid(400, "temperature must be a number in [0, 2].", param="temperature")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _RequestInvalid(400, "'messages' must be a non-empty array.", param="messages")
    request = ReceivedRequest(body=body)
    for m, message in enumerate(messages):
        where = f"messages[{m}]"
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            raise _RequestInvalid(400, f"Invalid 'role' in {where}.", param=f"{where}.role")
        content = message.get("content")
        if isinstance(content, str):
            request.texts.append(content)
            continue
        if not isinstance(content, list) or not content:
            raise _RequestInvalid(
                400,
                f"{where}.content must be a string or a non-empty array of parts.",
                param=f"{where}.content",
            )
        for p, part in enumerate(content):
            part_where = f"{where}.content[{p}]"
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part.get("text"), str):
                request.texts.append(part["text"])
            elif kind == "image_url" and isinstance(part.get("image_url"), dict):
                if message["role"] not in ("user",):
                    raise _RequestInvalid(
                        400,
                        f"Image parts are only allowed in user messages ({part_where}).",
                        param=part_where,
                    )
                request.images.append(_validate_png(part["image_url"].get("url"), part_where))
            else:
                raise _RequestInvalid(
                    400, f"Invalid content part at {part_where}.", param=part_where
                )
    return request


def completion_body(model: str, content: str, prompt_text: str, images: int) -> dict[str, Any]:
    """A ``chat.completion`` object as the real API returns it (token counts are estimates)."""
    prompt_tokens = len(prompt_text.split()) + 85 * images
    completion_tokens = len(content.split())
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_distrl_fake",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def error_body(message: str, status: int, code: str | None, param: str | None) -> dict[str, Any]:
    kind = {
        401: "invalid_request_error",
        404: "invalid_request_error",
        429: "requests",
        500: "server_error",
    }.get(status, "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


class FakeChatEndpoint:
    """A threaded HTTP server on ``host:port`` (0: a free port) speaking the chat API.

    ``api_key``: when set, requests must carry ``Authorization: Bearer <api_key>`` (else 401).
    ``models``: the model names served (None: any name is accepted; ``/v1/models`` then lists
    ``fake-vlm``). ``on_request`` is called with each chat request after it is answered (the CLI
    prints a line per request with it).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        api_key: str | None = None,
        mode: Literal["demo", "scripted"] = "demo",
        answers: Sequence[str] | Answerer | None = None,
        faults: Sequence[Fault] = (),
        models: Sequence[str] | None = None,
        on_request: Callable[[ReceivedRequest], None] | None = None,
    ) -> None:
        if mode == "scripted" and answers is None:
            raise ValueError("mode='scripted' needs answers (a list of texts or a function)")
        if mode == "demo" and answers is not None:
            raise ValueError("answers are only used with mode='scripted'")
        self.host = host
        self._requested_port = port
        self._api_key = api_key
        self.mode = mode
        self._answerer: Answerer | None = answers if callable(answers) else None
        self._scripted: deque[str] = deque(
            [] if answers is None or callable(answers) else list(answers)
        )
        self._faults: deque[Fault] = deque(faults)
        self.models = list(models) if models is not None else None
        self._on_request = on_request
        self._lock = threading.Lock()
        self._requests: list[ReceivedRequest] = []
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._bound_port: int | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> FakeChatEndpoint:
        """Bind and serve in a background thread; returns self."""
        if self._server is not None:
            return self
        self._stopping.clear()
        server = ThreadingHTTPServer((self.host, self._requested_port), _handler_for(self))
        server.daemon_threads = True
        self._server = server
        self._bound_port = int(server.server_address[1])
        self._thread = threading.Thread(
            # a short poll keeps stop() quick (shutdown waits for the loop to look again)
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-chat-endpoint",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket; wakes any deliberately slow reply."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeChatEndpoint:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port (still known after stop(): tests use it to reach a closed port)."""
        if self._bound_port is None:
            raise RuntimeError("the fake endpoint was never started")
        return self._bound_port

    @property
    def url(self) -> str:
        """The base URL a client uses (ends in ``/v1``)."""
        return f"http://{self.host}:{self.port}/v1"

    # -- scripting -------------------------------------------------------------------------------
    def inject(self, fault: Fault, times: int = 1) -> None:
        """Serve ``fault`` to the next ``times`` chat requests (after already queued faults)."""
        with self._lock:
            self._faults.extend([fault] * times)

    def add_answers(self, *answers: str) -> None:
        with self._lock:
            self._scripted.extend(answers)

    @property
    def requests(self) -> list[ReceivedRequest]:
        """Every chat request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    # -- used by the handler ---------------------------------------------------------------------
    def _check_key(self, authorization: str | None) -> None:
        if self._api_key is None:
            return
        expected = f"Bearer {self._api_key}"
        if authorization != expected:
            raise _RequestInvalid(
                401,
                "Incorrect API key provided. You can find your API key in your account settings.",
                "invalid_api_key",
            )

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    def _answer(self, request: ReceivedRequest) -> str:
        if self.mode == "demo":
            return demo_answer(request)
        if self._answerer is not None:
            return self._answerer(request)
        with self._lock:
            if not self._scripted:
                raise _RequestInvalid(500, "The fake endpoint's scripted answers ran out.")
            return self._scripted.popleft()

    def _record(self, request: ReceivedRequest) -> None:
        with self._lock:
            self._requests.append(request)
        if self._on_request is not None:
            self._on_request(request)


def _handler_for(endpoint: FakeChatEndpoint) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to ``endpoint`` (http.server instantiates it per request)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out as two writes; with Nagle on, the body waits ~40 ms for the
        # client's delayed ACK of the headers on every request.
        disable_nagle_algorithm = True
        server_version = "distrl-fake-vlm/1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib signature)
            """Silent: the CLI reports requests through ``on_request``, never headers or keys."""

        # -- responses ---------------------------------------------------------------------------
        def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (e.g. a slow-reply fault past its timeout)

        def _send_json(
            self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
        ) -> None:
            self._send(status, json.dumps(body).encode("utf-8"), headers)

        def _send_error(self, error: _RequestInvalid) -> None:
            body = error_body(error.message, error.status, error.code, error.param)
            self._send_json(error.status, body)

        # -- routes ------------------------------------------------------------------------------
        def do_GET(self) -> None:  # noqa: N802 (http.server naming)
            try:
                endpoint._check_key(self.headers.get("Authorization"))
                if self.path.rstrip("/") != "/v1/models":
                    raise _RequestInvalid(404, f"Unknown request URL: GET {self.path}.")
            except _RequestInvalid as error:
                self._send_error(error)
                return
            names = endpoint.models if endpoint.models is not None else ["fake-vlm"]
            data = [
                {"id": name, "object": "model", "created": 0, "owned_by": "distrl"}
                for name in names
            ]
            self._send_json(200, {"object": "list", "data": data})

        def do_POST(self) -> None:  # noqa: N802 (http.server naming)
            """Answer one chat request; it is recorded *before* the reply is sent, so a client
            that has its answer always finds its request in ``endpoint.requests``."""
            length = int(self.headers.get("Content-Length") or 0)
            if length > _MAX_BODY_BYTES:
                self.close_connection = True
                self._send_error(_RequestInvalid(413, "Request body too large."))
                return
            raw = self.rfile.read(length) if length > 0 else b""
            arrived = time.monotonic()
            request = ReceivedRequest(body={}, received_at=arrived)
            try:
                endpoint._check_key(self.headers.get("Authorization"))
                if self.path.rstrip("/") != "/v1/chat/completions":
                    raise _RequestInvalid(404, f"Unknown request URL: POST {self.path}.")
                fault = endpoint._next_fault()
                if fault is not None and fault.kind != "slow":
                    request.fault = fault.kind
                    self._serve_fault(fault, request)
                    return
                try:
                    body = json.loads(raw.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                    raise _RequestInvalid(
                        400, f"We could not parse the JSON body of your request: {exc}."
                    ) from exc
                request = parse_chat_request(body, endpoint.models)
                request.received_at = arrived
                if fault is not None:  # slow: answered properly, but late
                    request.fault = fault.kind
                    endpoint._record(request)
                    if endpoint._stopping.wait(fault.delay_seconds):
                        return
                request.answer = endpoint._answer(request)
                payload = completion_body(
                    body["model"], request.answer, request.prompt_text, len(request.images)
                )
                if fault is None:
                    endpoint._record(request)
                self._send_json(200, payload)
            except _RequestInvalid as error:
                request.status = error.status
                endpoint._record(request)
                self._send_error(error)

        def _serve_fault(self, fault: Fault, request: ReceivedRequest) -> None:
            if fault.kind == "rate_limit":
                request.status = 429
                headers = {}
                if fault.retry_after is not None:
                    headers["Retry-After"] = f"{fault.retry_after:g}"
                endpoint._record(request)
                body = error_body(
                    "Rate limit reached for requests.", 429, "rate_limit_exceeded", None
                )
                self._send_json(429, body, headers)
            elif fault.kind == "server_error":
                request.status = 500
                endpoint._record(request)
                body = error_body(
                    "The server had an error processing your request.", 500, None, None
                )
                self._send_json(500, body)
            else:  # malformed
                request.status = 200
                endpoint._record(request)
                self._send(200, b'{"id": "chatcmpl-broken", "object": "chat.completion", "cho')

    return Handler
