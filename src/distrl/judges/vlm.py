"""A VLM success judge on any OpenAI-compatible chat endpoint (docs/design.md §6).

DigiRL judged real-device episodes with a hosted VLM (Gemini). A hosted judge is slow, paid,
rate-limited and sometimes down, so this one wraps every request in the same four pieces:

* **Cache**, keyed by a hash of (model, prompt text, screenshot PNG bytes): in memory, plus one
  JSON file per verdict under ``cache_dir`` when set (written atomically, so a crash never leaves
  a half-written entry that a later run would trust). Re-judging stored episodes is then free.
* **Rate limiter**: requests are spaced at least ``60 / requests_per_minute`` seconds apart across
  every thread that shares the judge (:class:`RateLimiter`), retries included, so a thread pool
  cannot burst past a provider's quota and earn a wave of 429s.
* **Retries** with exponential backoff and jitter on 408/409/429/5xx, timeouts and connection
  errors; a ``Retry-After`` (or ``retry-after-ms``) header is honoured (capped at
  :data:`MAX_RETRY_AFTER_SECONDS`). Other 4xx (bad key, unknown model, a malformed request) are
  not retried: they raise :class:`JudgeRejected`, an :class:`~distrl.errors.InputError` whose
  one line names the fix (e.g. the environment variable that holds the key).
* **Counters**: :meth:`VLMJudge.stats`.

Two decisions worth knowing:

* **Retries exhausted** raise :class:`JudgeUnavailable`, a
  :class:`~distrl.core.faults.DeviceFault`: the runtime already drops an episode whose device
  fails, and an episode nobody could judge must be dropped the same way. Scoring it 0 would
  teach the policy that a correct episode failed.
* **Unparseable answers** (refusals, empty or garbled text) count as failure, are counted in
  ``stats()["unparseable"]`` and are *not* cached, so the next judgement of the same episode asks
  again. No immediate re-ask: at temperature 0 it usually repeats the same text, and a false
  success (reward for the wrong behaviour) costs more than a missed one.

The API key comes from the environment variable ``config.api_key_env`` (or the ``api_key``
argument). A local server (vLLM, llama.cpp, ``distrl fake-vlm``) often needs none; then the
placeholder :data:`NO_KEY_PLACEHOLDER` is sent, because the ``openai`` client refuses to start
without some key. Keys are never logged or put in error messages.

>>> from distrl.config.schema import VLMJudgeConfig
>>> from distrl.judges.fake_endpoint import FakeChatEndpoint
>>> with FakeChatEndpoint(mode="scripted", answers=["Status: success"]) as fake:
...     judge = VLMJudge(VLMJudgeConfig(base_url=fake.url))
...     # judge.judge(task, screenshots, actions) -> True
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import math
import os
import random
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import openai

from distrl.config.schema import VLMJudgeConfig
from distrl.core.action import Action
from distrl.core.faults import DeviceFault
from distrl.core.task import Task
from distrl.errors import InputError
from distrl.judges.prompt import JudgePrompt, build_prompt
from distrl.judges.verdict import Verdict, parse_verdict

#: Sent as the bearer key when the key variable is unset: local servers ignore it.
NO_KEY_PLACEHOLDER = "no-key"
#: A Retry-After longer than this is cut short (an hour-long wait mid-episode helps nobody).
MAX_RETRY_AFTER_SECONDS = 120.0
#: Cap of one exponential backoff delay.
MAX_BACKOFF_SECONDS = 60.0
#: Answer tokens: enough for a few sentences of reasoning and the verdict line.
MAX_ANSWER_TOKENS = 300
_RETRYABLE_STATUS = frozenset({408, 409, 429})


class JudgeUnavailable(DeviceFault):
    """The judge could not be reached (retries exhausted): drop the episode, as for a dead
    device, rather than record a reward nobody decided."""


class JudgeRejected(InputError):
    """The endpoint refused the request for a reason retrying cannot fix (bad key, unknown model,
    malformed request); the message names the setting to change."""


class RateLimiter:
    """At most ``requests_per_minute`` acquisitions a minute, evenly spaced, across threads.

    A token bucket of depth one: each caller reserves the next free slot under a lock and sleeps
    outside it, so N callers started together leave at ``0, T, 2T, ...`` with ``T = 60 / rpm``.
    Depth one (no burst) is deliberate: providers count requests per short window, and a burst
    at start-up is exactly what earns 429s.
    """

    def __init__(
        self,
        requests_per_minute: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not requests_per_minute > 0:
            raise ValueError(f"requests_per_minute must be > 0, got {requests_per_minute}")
        self.interval = 60.0 / requests_per_minute
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._next_free = -math.inf

    def acquire(self) -> float:
        """Block until this caller's slot; returns the seconds waited."""
        with self._lock:
            now = self._clock()
            slot = max(now, self._next_free)
            self._next_free = slot + self.interval
        wait = slot - now
        if wait > 0:
            self._sleep(wait)
        return wait


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds a ``Retry-After`` / ``retry-after-ms`` header asks for, or None if absent/bad."""
    if headers is None:
        return None
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            value = float(milliseconds) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())
    return value if math.isfinite(value) and value >= 0 else None


def cache_key(model: str, prompt: JudgePrompt) -> str:
    """SHA-256 over model, prompt text and every image, each length-prefixed (no ambiguity)."""
    digest = hashlib.sha256()
    for part in (model.encode("utf-8"), prompt.text.encode("utf-8"), *prompt.screenshots_png):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


class _DiskCache:
    """One small JSON file per verdict, ``<root>/<key[:2]>/<key>.json``, written atomically."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Verdict | None:
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
            verdict = Verdict(data["verdict"])
        except (OSError, ValueError, KeyError, TypeError):
            return None  # absent or unreadable: ask again rather than trust it
        return verdict if verdict is not Verdict.UNPARSEABLE else None

    def put(self, key: str, verdict: Verdict, model: str, answer: str) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {"verdict": verdict.value, "model": model, "answer": answer, "at": time.time()}
        descriptor, temporary = tempfile.mkstemp(prefix=f".{key}.", dir=path.parent)
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump(record, handle)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


class VLMJudge:
    """:class:`~distrl.judges.base.SuccessJudge` backed by an OpenAI-compatible chat model.

    Thread-safe: share one instance across threads so they share the cache, the rate limiter and
    the counters. ``rate_limiter`` may be passed to share one limiter across several judges of the
    same endpoint; ``sleep`` is the backoff sleep (tests pass a recorder).

    ``judge()`` returns True only on a parsed success verdict; it raises :class:`JudgeRejected`
    (no retry would help) or :class:`JudgeUnavailable` (retries exhausted).
    """

    def __init__(
        self,
        config: VLMJudgeConfig,
        api_key: str | None = None,
        *,
        rate_limiter: RateLimiter | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.config = config
        key = api_key if api_key is not None else os.environ.get(config.api_key_env)
        self._key_from_env = api_key is None
        self._client = openai.OpenAI(
            base_url=config.base_url,
            api_key=key or NO_KEY_PLACEHOLDER,
            timeout=config.timeout_seconds,
            max_retries=0,  # retries are ours: they must pass the rate limiter and be counted
        )
        self._limiter = rate_limiter or RateLimiter(config.requests_per_minute)
        self._sleep = sleep
        self._random = random.Random()
        self._disk = _DiskCache(Path(config.cache_dir)) if config.cache_dir else None
        self._memory: dict[str, Verdict] = {}
        self._lock = threading.Lock()
        self._counters: dict[str, int] = dict.fromkeys(
            (
                "judgements",
                "requests",
                "cache_hits",
                "retries",
                "unparseable",
                "successes",
                "errors",
            ),
            0,
        )
        self._latency_seconds = 0.0

    # -- SuccessJudge ----------------------------------------------------------------------------
    def judge(
        self, task: Task, screenshots: Sequence[np.ndarray], actions: Sequence[Action]
    ) -> bool:
        """True when the model's verdict on the episode so far is success."""
        return self.verdict(task, screenshots, actions) is Verdict.SUCCESS

    def verdict(
        self, task: Task, screenshots: Sequence[np.ndarray], actions: Sequence[Action]
    ) -> Verdict:
        """The parsed verdict, keeping ``UNPARSEABLE`` distinct (``judge`` maps it to False)."""
        prompt = build_prompt(task, screenshots, actions, self.config)
        key = cache_key(self.config.model, prompt)
        self._count("judgements")
        cached = self._cached(key)
        if cached is not None:
            self._count("cache_hits")
            self._count("successes", cached is Verdict.SUCCESS)
            return cached
        answer = self._complete(prompt)
        verdict = parse_verdict(answer)
        if verdict is Verdict.UNPARSEABLE:
            self._count("unparseable")
            return verdict
        self._count("successes", verdict is Verdict.SUCCESS)
        with self._lock:
            self._memory[key] = verdict
        if self._disk is not None:
            self._disk.put(key, verdict, self.config.model, answer)
        return verdict

    def stats(self) -> dict[str, float]:
        """Counters since construction: judgements, requests (HTTP attempts), cache_hits, retries,
        unparseable, successes, errors (attempts that failed), latency_seconds (summed over
        attempts) and mean_latency_seconds."""
        with self._lock:
            stats: dict[str, float] = dict(self._counters)
            latency = self._latency_seconds
        stats["latency_seconds"] = latency
        stats["mean_latency_seconds"] = latency / stats["requests"] if stats["requests"] else 0.0
        return stats

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    # -- internals -------------------------------------------------------------------------------
    def _count(self, name: str, amount: int | bool = 1) -> None:
        with self._lock:
            self._counters[name] += int(amount)

    def _add_latency(self, seconds: float) -> None:
        with self._lock:
            self._latency_seconds += seconds

    def _cached(self, key: str) -> Verdict | None:
        with self._lock:
            verdict = self._memory.get(key)
        if verdict is None and self._disk is not None:
            verdict = self._disk.get(key)
            if verdict is not None:
                with self._lock:
                    self._memory[key] = verdict
        return verdict

    def _backoff(self, retry: int) -> float:
        """Exponential backoff with +-25% jitter, so retrying threads do not move in lockstep."""
        base = min(MAX_BACKOFF_SECONDS, self.config.backoff_seconds * (2.0**retry))
        return base * self._random.uniform(0.75, 1.25)

    def _complete(self, prompt: JudgePrompt) -> str:
        """The answer text of one chat completion, retrying what retrying can fix."""
        attempts = self.config.max_retries + 1
        last_problem = ""
        for attempt in range(attempts):
            if attempt:
                self._count("retries")
            self._limiter.acquire()
            self._count("requests")
            started = time.monotonic()
            delay: float | None = None
            try:
                completion = self._client.chat.completions.create(
                    model=self.config.model,
                    messages=prompt.messages,  # type: ignore[arg-type]
                    temperature=0,
                    max_tokens=MAX_ANSWER_TOKENS,
                )
                return _answer_text(completion)
            except openai.APIStatusError as error:
                status = error.status_code
                if status not in _RETRYABLE_STATUS and status < 500:
                    self._count("errors")
                    raise self._rejected(error) from None
                last_problem = f"HTTP {status}: {_error_message(error)}"
                delay = retry_after_seconds(error.response.headers)
            except openai.APITimeoutError:
                last_problem = f"no answer within {self.config.timeout_seconds:g} s"
            except openai.APIConnectionError as error:
                last_problem = f"connection failed ({error.__cause__ or error})"
            except (openai.APIResponseValidationError, ValueError) as error:
                # a body that is not JSON (JSONDecodeError) or has no choices: a glitch, retry
                last_problem = f"malformed response ({type(error).__name__})"
            finally:
                self._add_latency(time.monotonic() - started)
            self._count("errors")
            if attempt + 1 < attempts:
                if delay is None:
                    delay = self._backoff(attempt)
                self._sleep(min(delay, MAX_RETRY_AFTER_SECONDS))
        raise JudgeUnavailable(
            f"VLM judge at {self.config.base_url} (model {self.config.model}) unavailable after "
            f"{attempts} attempt(s); last: {last_problem}"
        )

    def _rejected(self, error: openai.APIStatusError) -> JudgeRejected:
        status, where = error.status_code, f"VLM judge at {self.config.base_url}"
        detail = _error_message(error)
        if status == 401:
            source = (
                f"the environment variable {self.config.api_key_env}"
                if self._key_from_env
                else "the api_key passed to VLMJudge"
            )
            # The server's detail is left out: some servers echo part of the key in it.
            return JudgeRejected(
                f"{where} rejected the API key (HTTP 401); put a valid key in {source} "
                f"(judge.vlm.api_key_env names the variable)"
            )
        if status == 403:
            return JudgeRejected(
                f"{where} denied access (HTTP 403: {detail}); check the key's permissions for "
                f"model {self.config.model}"
            )
        if status == 404:
            return JudgeRejected(
                f"{where} has no model {self.config.model!r} or no such URL (HTTP 404: {detail}); "
                f"check judge.vlm.model and judge.vlm.base_url (it ends in /v1)"
            )
        return JudgeRejected(
            f"{where} refused the request (HTTP {status}: {detail}); check that model "
            f"{self.config.model!r} accepts images (judge.vlm.model)"
        )


def _error_message(error: openai.APIStatusError) -> str:
    """The server's own one-line error message, shortened."""
    body = error.body
    message = body.get("message") if isinstance(body, dict) else None
    text = str(message or error.message or "no detail")
    return " ".join(text.split())[:200]


def _answer_text(completion: Any) -> str:
    """The first choice's text; an empty string when the server sent none (-> unparseable)."""
    choices = getattr(completion, "choices", None)
    if not choices:
        raise ValueError("completion without choices")
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    return content if isinstance(content, str) else ""
