"""The VLM judge over real HTTP on loopback against the fake endpoint, and the fake itself.

Every test starts its own :class:`FakeChatEndpoint` on a free port; the judge talks to it through
the ``openai`` client, so requests, error statuses, headers and timeouts are the real thing.
"""

from __future__ import annotations

import base64
import io
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from distrl.config.schema import VLMJudgeConfig
from distrl.core.action import Action
from distrl.core.faults import DeviceFault
from distrl.core.task import Task
from distrl.errors import InputError
from distrl.judges.base import SuccessJudge
from distrl.judges.fake_endpoint import FakeChatEndpoint, Fault, ReceivedRequest
from distrl.judges.prompt import build_prompt, describe_action
from distrl.judges.verdict import Verdict
from distrl.judges.vlm import (
    NO_KEY_PLACEHOLDER,
    JudgeRejected,
    JudgeUnavailable,
    RateLimiter,
    VLMJudge,
    retry_after_seconds,
)

TASK = Task("general-test-0001", "Turn on airplane mode", "general", "test")
ACTIONS = [
    Action.tap(0.1, 0.5),
    Action.swipe((0.8, 0.5), (0.2, 0.5)),
    Action.type_text('say "hi"'),
    Action.press_back(),
    Action.complete(),
]
KEY_ENV = "DISTRL_TEST_VLM_KEY"


def screens(count: int = 3, height: int = 200, width: int = 100, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (height, width, 3), dtype=np.uint8) for _ in range(count)]


def config(fake: FakeChatEndpoint, **fields: Any) -> VLMJudgeConfig:
    """Fast settings: no real backoff, a limiter that never waits, a short timeout."""
    values: dict[str, Any] = {
        "base_url": fake.url,
        "model": "fake-vlm",
        "api_key_env": KEY_ENV,
        "timeout_seconds": 5.0,
        "backoff_seconds": 0.01,
        "requests_per_minute": 60_000.0,
        "max_retries": 3,
    }
    values.update(fields)
    return VLMJudgeConfig(**values)


@pytest.fixture(autouse=True)
def _no_key_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)


@pytest.fixture
def scripted() -> Iterator[FakeChatEndpoint]:
    with FakeChatEndpoint(mode="scripted", answers=[]) as fake:
        yield fake


# -- verdicts and the request ----------------------------------------------------------------------


def test_is_a_success_judge(scripted: FakeChatEndpoint) -> None:
    assert isinstance(VLMJudge(config(scripted)), SuccessJudge)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("The airplane icon is lit.\nStatus: success", True),
        ("Status: failure", False),
        ('```json\n{"success": true}\n```', True),
        ("No.", False),
        ("**Verdict:** Success", True),
    ],
)
def test_verdict_from_scripted_answer(
    scripted: FakeChatEndpoint, answer: str, expected: bool
) -> None:
    scripted.add_answers(answer)
    judge = VLMJudge(config(scripted))
    assert judge.judge(TASK, screens(), ACTIONS) is expected
    stats = judge.stats()
    assert stats["requests"] == 1 and stats["retries"] == 0 and stats["unparseable"] == 0


def test_request_carries_instruction_history_and_last_screens(scripted: FakeChatEndpoint) -> None:
    scripted.add_answers("Status: success")
    judge = VLMJudge(config(scripted, screenshots=2, max_image_side=256))
    shots = screens(count=4, height=720, width=360)  # a PhoneSim-sized screen
    judge.judge(TASK, shots, ACTIONS)

    (request,) = scripted.requests
    assert request.body["model"] == "fake-vlm"
    assert request.body["messages"][0]["role"] == "system"
    text = request.prompt_text
    assert TASK.instruction in text
    for number, action in enumerate(ACTIONS, start=1):
        assert f"{number}. {describe_action(action)}" in text
    assert "STATUS_TASK_COMPLETE" in text and 'TYPE "say \\"hi\\""' in text
    assert "Status: success" in text and "Status: failure" in text  # the answer format is asked

    assert len(request.images) == 2  # the last config.screenshots screens, PNG, downscaled
    decoded = [np.array(Image.open(io.BytesIO(png)).convert("RGB")) for png in request.images]
    assert all(image.shape == (256, 128, 3) for image in decoded)
    expected_last = np.array(
        Image.fromarray(shots[-1]).resize((128, 256), Image.Resampling.LANCZOS)
    )
    assert np.array_equal(decoded[-1], expected_last)


def test_small_screens_are_sent_unscaled(scripted: FakeChatEndpoint) -> None:
    scripted.add_answers("Status: failure")
    shot = screens(count=1, height=100, width=60)
    VLMJudge(config(scripted, max_image_side=768)).judge(TASK, shot, [])
    (request,) = scripted.requests
    assert np.array_equal(np.array(Image.open(io.BytesIO(request.images[0]))), shot[0])
    assert "(no actions yet)" in request.prompt_text


def test_no_screenshot_is_an_error(scripted: FakeChatEndpoint) -> None:
    with pytest.raises(ValueError, match="at least one screenshot"):
        VLMJudge(config(scripted)).judge(TASK, [], ACTIONS)
    assert scripted.requests == []


# -- cache --------------------------------------------------------------------------------------


def test_cache_hit_makes_no_second_request(scripted: FakeChatEndpoint) -> None:
    scripted.add_answers("Status: success")
    judge = VLMJudge(config(scripted))
    shots = screens()
    assert judge.judge(TASK, shots, ACTIONS) is True
    assert judge.judge(TASK, [s.copy() for s in shots], list(ACTIONS)) is True  # equal, not same
    assert len(scripted.requests) == 1
    assert judge.stats()["cache_hits"] == 1 and judge.stats()["judgements"] == 2


def test_cache_key_covers_screens_actions_and_model(scripted: FakeChatEndpoint) -> None:
    scripted.add_answers(*["Status: failure"] * 4)
    judge = VLMJudge(config(scripted))
    judge.judge(TASK, screens(seed=1), ACTIONS)
    judge.judge(TASK, screens(seed=2), ACTIONS)  # other pixels
    judge.judge(TASK, screens(seed=1), ACTIONS[:-1])  # other history
    VLMJudge(config(scripted, model="other-vlm")).judge(TASK, screens(seed=1), ACTIONS)
    assert len(scripted.requests) == 4 and judge.stats()["cache_hits"] == 0


def test_disk_cache_survives_a_new_judge(scripted: FakeChatEndpoint, tmp_path: Path) -> None:
    scripted.add_answers("Status: success")
    cfg = config(scripted, cache_dir=str(tmp_path / "cache"))
    assert VLMJudge(cfg).judge(TASK, screens(), ACTIONS) is True
    fresh = VLMJudge(cfg)
    assert fresh.judge(TASK, screens(), ACTIONS) is True
    assert len(scripted.requests) == 1 and fresh.stats()["cache_hits"] == 1
    files = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert len(files) == 1 and files[0].suffix == ".json"  # no temporary files left behind
    record = json.loads(files[0].read_text())
    assert record["verdict"] == "success" and record["answer"] == "Status: success"


def test_corrupt_disk_entry_is_asked_again(scripted: FakeChatEndpoint, tmp_path: Path) -> None:
    scripted.add_answers("Status: success", "Status: success")
    cfg = config(scripted, cache_dir=str(tmp_path))
    VLMJudge(cfg).judge(TASK, screens(), ACTIONS)
    (entry,) = [p for p in tmp_path.rglob("*.json")]
    entry.write_text("{not json")
    assert VLMJudge(cfg).judge(TASK, screens(), ACTIONS) is True
    assert len(scripted.requests) == 2


def test_unparseable_counts_as_failure_and_is_not_cached(scripted: FakeChatEndpoint) -> None:
    scripted.add_answers("I'm sorry, I can't assess screenshots.", "Status: success")
    judge = VLMJudge(config(scripted))
    assert judge.verdict(TASK, screens(), ACTIONS) is Verdict.UNPARSEABLE
    assert judge.judge(TASK, screens(), ACTIONS) is True  # asked again, not served from cache
    stats = judge.stats()
    assert stats["unparseable"] == 1 and stats["requests"] == 2 and stats["cache_hits"] == 0


# -- retries ------------------------------------------------------------------------------------


def test_429_with_retry_after_is_retried_after_that_delay(scripted: FakeChatEndpoint) -> None:
    scripted.inject(Fault.rate_limit(retry_after=0.25), times=2)
    scripted.add_answers("Status: success")
    slept: list[float] = []
    judge = VLMJudge(config(scripted, backoff_seconds=5.0), sleep=slept.append)
    assert judge.judge(TASK, screens(), ACTIONS) is True
    assert slept == [0.25, 0.25]  # the header, not the (much longer) backoff
    assert [r.status for r in scripted.requests] == [429, 429, 200]
    stats = judge.stats()
    assert stats["retries"] == 2 and stats["requests"] == 3 and stats["errors"] == 2


def test_429_really_waits(scripted: FakeChatEndpoint) -> None:
    scripted.inject(Fault.rate_limit(retry_after=0.2))
    scripted.add_answers("Status: failure")
    started = time.monotonic()
    assert VLMJudge(config(scripted)).judge(TASK, screens(), ACTIONS) is False
    assert time.monotonic() - started >= 0.2
    first, second = scripted.requests
    assert second.received_at - first.received_at >= 0.2


def test_500s_exhausted_raise_judge_unavailable(scripted: FakeChatEndpoint) -> None:
    scripted.inject(Fault.server_error(), times=10)
    slept: list[float] = []
    judge = VLMJudge(config(scripted, max_retries=3, backoff_seconds=1.0), sleep=slept.append)
    with pytest.raises(JudgeUnavailable, match=r"after 4 attempt\(s\); last: HTTP 500") as caught:
        judge.judge(TASK, screens(), ACTIONS)
    assert isinstance(caught.value, DeviceFault)  # the runtime drops the episode
    assert len(scripted.requests) == 4 and judge.stats()["retries"] == 3
    # exponential backoff with +-25% jitter: 1, 2, 4 s
    assert len(slept) == 3
    for delay, base in zip(slept, (1.0, 2.0, 4.0), strict=True):
        assert 0.75 * base <= delay <= 1.25 * base


def test_500_then_success(scripted: FakeChatEndpoint) -> None:
    scripted.inject(Fault.server_error(), times=2)
    scripted.add_answers("Status: success")
    judge = VLMJudge(config(scripted))
    assert judge.judge(TASK, screens(), ACTIONS) is True
    assert judge.stats()["retries"] == 2


def test_timeout_is_retried(scripted: FakeChatEndpoint) -> None:
    scripted.inject(Fault.slow(delay_seconds=3.0))
    scripted.add_answers("Status: success", "Status: success")
    judge = VLMJudge(config(scripted, timeout_seconds=0.3))
    started = time.monotonic()
    assert judge.judge(TASK, screens(), ACTIONS) is True
    assert 0.3 <= time.monotonic() - started < 2.5  # gave up on the slow reply, did not wait it
    assert judge.stats()["retries"] == 1
    assert [r.fault for r in scripted.requests][-1] is None


def test_timeouts_exhausted(scripted: FakeChatEndpoint) -> None:
    scripted.inject(Fault.slow(delay_seconds=3.0), times=2)
    judge = VLMJudge(config(scripted, timeout_seconds=0.2, max_retries=1))
    with pytest.raises(JudgeUnavailable, match="no answer within 0.2 s"):
        judge.judge(TASK, screens(), ACTIONS)


def test_malformed_body_is_retried(scripted: FakeChatEndpoint) -> None:
    scripted.inject(Fault.malformed())
    scripted.add_answers("Status: failure")
    judge = VLMJudge(config(scripted))
    assert judge.judge(TASK, screens(), ACTIONS) is False
    assert judge.stats()["retries"] == 1


def test_connection_refused_is_unavailable() -> None:
    with FakeChatEndpoint(mode="scripted", answers=[]) as fake:
        cfg = config(fake, max_retries=1)
    judge = VLMJudge(cfg)  # the server is gone: nothing listens on that port now
    with pytest.raises(JudgeUnavailable, match="connection failed"):
        judge.judge(TASK, screens(), ACTIONS)
    assert judge.stats()["requests"] == 2


# -- errors that retrying cannot fix ------------------------------------------------------------


def test_wrong_key_is_a_clear_error_without_retry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-wrong-secret-value")
    with FakeChatEndpoint(mode="scripted", answers=[], api_key="sk-right") as fake:
        judge = VLMJudge(config(fake))
        with pytest.raises(JudgeRejected) as caught:
            judge.judge(TASK, screens(), ACTIONS)
        message = str(caught.value)
        assert isinstance(caught.value, InputError)
        assert "HTTP 401" in message and KEY_ENV in message
        assert "sk-wrong" not in message and "sk-right" not in message and "\n" not in message
        assert [r.status for r in fake.requests] == [401]
        assert judge.stats()["retries"] == 0


def test_right_key_from_env_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-right")
    with FakeChatEndpoint(mode="scripted", answers=["Status: success"], api_key="sk-right") as fake:
        assert VLMJudge(config(fake)).judge(TASK, screens(), ACTIONS) is True


def test_missing_key_sends_the_placeholder() -> None:
    with FakeChatEndpoint(mode="scripted", answers=[], api_key=NO_KEY_PLACEHOLDER) as fake:
        fake.add_answers("Status: success")
        assert VLMJudge(config(fake)).judge(TASK, screens(), ACTIONS) is True


def test_unknown_model_is_a_clear_error(scripted: FakeChatEndpoint) -> None:
    with FakeChatEndpoint(mode="scripted", answers=[], models=["served-vlm"]) as fake:
        with pytest.raises(JudgeRejected, match=r"no model 'fake-vlm'.*judge.vlm.model"):
            VLMJudge(config(fake)).judge(TASK, screens(), ACTIONS)
        assert len(fake.requests) == 1


# -- rate limiting ------------------------------------------------------------------------------


def test_rate_limiter_spaces_threads_evenly() -> None:
    limiter = RateLimiter(requests_per_minute=1200)  # one slot every 0.05 s
    times: list[float] = []
    lock = threading.Lock()

    def take() -> None:
        limiter.acquire()
        with lock:
            times.append(time.monotonic())

    threads = [threading.Thread(target=take) for _ in range(8)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Each thread wakes no earlier than its slot and the slots are 0.05 s apart, so the k-th
    # thread to get through does so at least k * 0.05 s after the start (sleep never undershoots).
    times.sort()
    for rank, at in enumerate(times):
        assert at - started >= rank * 0.05 - 1e-3


def test_rate_limiter_reference_with_fake_clock() -> None:
    now = [100.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)

    limiter = RateLimiter(30, clock=lambda: now[0], sleep=sleep)  # one slot every 2 s
    assert [limiter.acquire() for _ in range(4)] == [0.0, 2.0, 4.0, 6.0]
    now[0] += 60.0  # idle for a minute: no saved-up burst
    assert limiter.acquire() == 0.0 and limiter.acquire() == 2.0


def test_judge_requests_are_rate_limited_across_threads(scripted: FakeChatEndpoint) -> None:
    rpm, count = 1200.0, 5  # 0.05 s apart: (count - 1) * 60 / rpm = 0.2 s at least
    scripted.add_answers(*["Status: success"] * count)
    judge = VLMJudge(config(scripted, requests_per_minute=rpm))
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=count) as pool:
        list(pool.map(lambda s: judge.judge(TASK, screens(seed=s), ACTIONS), range(count)))
    assert time.monotonic() - started >= (count - 1) * 60 / rpm
    # a request leaves only after its slot, so the k-th to arrive came >= k * 60 / rpm in
    arrivals = sorted(r.received_at for r in scripted.requests)
    for rank, at in enumerate(arrivals):
        assert at - started >= rank * 60 / rpm - 1e-3
    assert judge.stats()["requests"] == count


def test_retry_after_header_forms() -> None:
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({"retry-after": "-1"}) is None
    assert retry_after_seconds({}) is None
    date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    assert 25 <= (retry_after_seconds({"retry-after": date}) or 0) <= 31


# -- the fake endpoint speaks the protocol --------------------------------------------------------


def post(url: str, body: bytes, key: str | None = None) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def chat_body(**changes: Any) -> dict[str, Any]:
    prompt = build_prompt(TASK, screens(count=1, height=40, width=20), ACTIONS, VLMJudgeConfig())
    return {"model": "fake-vlm", "messages": prompt.messages, **changes}


def test_fake_returns_a_chat_completion() -> None:
    with FakeChatEndpoint(mode="scripted", answers=["Status: success"]) as fake:
        status, body = post(f"{fake.url}/chat/completions", json.dumps(chat_body()).encode())
    assert status == 200
    assert body["object"] == "chat.completion" and body["id"].startswith("chatcmpl-")
    assert body["model"] == "fake-vlm" and isinstance(body["created"], int)
    (choice,) = body["choices"]
    assert choice["message"] == {"role": "assistant", "content": "Status: success", "refusal": None}
    assert choice["finish_reason"] == "stop"
    usage = body["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def _image_part(url: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"{not json", "parse the JSON body"),
        (b"[1, 2]", "JSON object"),
        (json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode(), "model"),
        (json.dumps({"model": "m", "messages": []}).encode(), "messages"),
        (
            json.dumps({"model": "m", "messages": [{"role": "robot", "content": "x"}]}).encode(),
            "role",
        ),
        (
            json.dumps(
                {"model": "m", "messages": [{"role": "user", "content": [{"type": "x"}]}]}
            ).encode(),
            "content part",
        ),
        (
            json.dumps(
                {"model": "m", "messages": [_image_part("https://example.com/a.png")]}
            ).encode(),
            "data:image/png",
        ),
        (
            json.dumps(
                {"model": "m", "messages": [_image_part("data:image/png;base64,@@@")]}
            ).encode(),
            "base64",
        ),
        (
            json.dumps(
                {
                    "model": "m",
                    "messages": [
                        _image_part("data:image/png;base64," + base64.b64encode(b"GIF89a").decode())
                    ],
                }
            ).encode(),
            "not a PNG",
        ),
        (
            json.dumps(
                {
                    "model": "m",
                    "messages": [
                        _image_part(
                            "data:image/png;base64,"
                            + base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"junk" * 10).decode()
                        )
                    ],
                }
            ).encode(),
            "could not be decoded",
        ),
        (json.dumps(chat_body(stream=True)).encode(), "stream"),
    ],
)
def test_fake_rejects_malformed_requests(body: bytes, fragment: str) -> None:
    with FakeChatEndpoint(mode="scripted", answers=["Status: success"]) as fake:
        status, payload = post(f"{fake.url}/chat/completions", body)
        assert fake.requests[-1].status == 400
    assert status == 400
    error = payload["error"]
    assert fragment in error["message"] and error["type"] == "invalid_request_error"


def test_fake_checks_the_bearer_key_and_lists_models() -> None:
    body = json.dumps(chat_body()).encode()
    with FakeChatEndpoint(
        mode="scripted", answers=["yes"], api_key="k", models=["fake-vlm"]
    ) as fake:
        assert post(f"{fake.url}/chat/completions", body)[0] == 401
        status, payload = post(f"{fake.url}/chat/completions", body, key="wrong")
        assert status == 401 and payload["error"]["code"] == "invalid_api_key"
        assert post(f"{fake.url}/chat/completions", body, key="k")[0] == 200
        assert post(f"{fake.url}/completions", body, key="k")[0] == 404
        request = urllib.request.Request(
            f"{fake.url}/models", headers={"Authorization": "Bearer k"}
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            models = json.loads(response.read())
        assert models["object"] == "list" and [m["id"] for m in models["data"]] == ["fake-vlm"]
        assert all("Authorization" not in json.dumps(r.body) for r in fake.requests)


def test_fake_demo_mode_is_deterministic() -> None:
    with FakeChatEndpoint() as fake:
        judge = VLMJudge(config(fake))
        assert judge.judge(TASK, screens(), ACTIONS) is True  # ends with STATUS_TASK_COMPLETE
        verdicts = {judge.judge(TASK, screens(seed=s), ACTIONS[:-1]) for s in range(12)}
        again = VLMJudge(config(fake))
        assert again.judge(TASK, screens(seed=3), ACTIONS[:-1]) == judge.judge(
            TASK, screens(seed=3), ACTIONS[:-1]
        )
    assert verdicts == {True, False}  # the image-hash coin lands both ways


def test_fake_answer_function_sees_the_request() -> None:
    seen: list[ReceivedRequest] = []

    def answer(request: ReceivedRequest) -> str:
        seen.append(request)
        return "Status: success" if len(request.images) == 1 else "Status: failure"

    with FakeChatEndpoint(mode="scripted", answers=answer) as fake:
        assert VLMJudge(config(fake, screenshots=1)).judge(TASK, screens(), ACTIONS) is True
        assert VLMJudge(config(fake, screenshots=3)).judge(TASK, screens(), ACTIONS) is False
    assert [len(r.images) for r in seen] == [1, 3]


def test_fake_slow_reply_does_not_block_stop() -> None:
    fake = FakeChatEndpoint(mode="scripted", answers=["Status: success"]).start()
    fake.inject(Fault.slow(delay_seconds=30.0))
    judge = VLMJudge(config(fake, timeout_seconds=0.2, max_retries=0))
    with pytest.raises(JudgeUnavailable):
        judge.judge(TASK, screens(), ACTIONS)
    started = time.monotonic()
    fake.stop()
    assert time.monotonic() - started < 3.0
