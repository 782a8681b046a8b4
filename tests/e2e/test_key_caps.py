"""Per-key caps over real sockets (routing/key_caps.py): concurrent calls fill a channel's
keys up to their `max_concurrency`, spill to the channel's other key and then to the next
channel, and the calls beyond every cap get 429 with Retry-After in each client's own
dialect; a key's `rpm` holds within the minute. The upstreams count which key each call
carried (the fake upstream takes two keys and tells them apart)."""

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest
import websockets.exceptions

from tests.conftest import Gateway
from tests.e2e.routing_support import Upstream, start_gateway, upstream_pair
from tests.support import http_json, wait_for

K1, K2, FALLBACK_KEY = "sk-cap-key-one-0001", "sk-cap-key-two-0002", "sk-cap-fallback-0003"
LATENCY_MS = 4000  # every call on the capped lane stays in flight this long


def caps_toml(primary: str, fallback: str) -> str:
    return f"""
[[channels]]
name = "cap-primary"
kind = "openai"
base_url = "{primary}/v1"
keys = [{{ key = "{K1}", max_concurrency = 2 }}, {{ key = "{K2}", max_concurrency = 1 }}]
models = ["cap-gpt"]
priority = 10

[[channels]]
name = "cap-fallback"
kind = "openai"
base_url = "{fallback}/v1"
keys = [{{ key = "{FALLBACK_KEY}", max_concurrency = 2 }}]
models = ["cap-gpt"]

[[channels]]
name = "rpm-only"
kind = "openai"
base_url = "{fallback}/v1"
keys = [{{ key = "{FALLBACK_KEY}", rpm = 3 }}]
models = ["rpm-gpt"]

[[channels]]
name = "rt-capped"
kind = "openai"
base_url = "{fallback}/v1"
keys = [{{ key = "{FALLBACK_KEY}", max_concurrency = 1 }}]
models = ["rt-gpt"]

[prices."rt-gpt"]
input = "1"
output = "2"

[prices."cap-gpt"]
input = "1"
output = "2"

[prices."rpm-gpt"]
input = "1"
output = "2"
"""


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Gateway, Upstream, Upstream]]:
    with upstream_pair(tmp_path_factory) as (primary, fallback):
        http_json("POST", f"{primary.url}/_mock/config", {"api_key": K1, "also_accept": [K2]})
        http_json("POST", f"{fallback.url}/_mock/config", {"api_key": FALLBACK_KEY})
        gw = start_gateway(tmp_path_factory.mktemp("caps-gw"), caps_toml(primary.url, fallback.url))
        try:
            yield gw, primary, fallback
        finally:
            gw.process.stop()


def carried(upstream: Upstream, model: str) -> list[str]:
    """Which key each recorded call for `model` carried ("<redacted:valid>" is the
    upstream's api_key, "<redacted:valid:1>" the first of also_accept)."""
    _, data = http_json("GET", f"{upstream.url}/_mock/requests")
    return [
        r["headers"].get("authorization", "")
        for r in data["requests"]
        if isinstance(r.get("json"), dict) and r["json"].get("model") == model
    ]


def clear(*upstreams: Upstream) -> None:
    for upstream in upstreams:
        http_json("DELETE", f"{upstream.url}/_mock/requests")


def in_threads(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run the calls at once; each result is its return value or the exception raised."""
    results: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            results[i] = calls[i]()
        except Exception as exc:  # the test inspects it
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def openai_call(gw: Gateway, token: str, model: str) -> Callable[[], Any]:
    sdk = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0, timeout=30)
    return lambda: sdk.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "hi"}]
    )


def test_concurrency_caps_spill_to_the_other_key_then_channel_then_429(
    setup: tuple[Gateway, Upstream, Upstream],
) -> None:
    gw, primary, fallback = setup
    _, token = gw.new_user(balance_usd=20)
    for upstream in (primary, fallback):
        upstream.faults()
        http_json("POST", f"{upstream.url}/_mock/config", {"latency_ms": LATENCY_MS})
    clear(primary, fallback)
    try:
        # 5 calls fill every slot: K1 two, K2 one, the fallback's key two
        started = time.monotonic()
        filling: list[Any] = []
        filler = threading.Thread(
            target=lambda: filling.extend(in_threads([openai_call(gw, token, "cap-gpt")] * 5))
        )
        filler.start()
        assert wait_for(
            lambda: len(carried(primary, "cap-gpt")) + len(carried(fallback, "cap-gpt")) == 5,
            timeout=LATENCY_MS / 1000 - 1,
        ), (carried(primary, "cap-gpt"), carried(fallback, "cap-gpt"))
        # while they are in flight, every further call is refused at once, in its dialect
        refused_at = time.monotonic()
        with pytest.raises(openai.RateLimitError) as oa:
            openai_call(gw, token, "cap-gpt")()
        assert oa.value.response.headers["retry-after"] == "1"
        assert oa.value.body["code"] == "rate_limit_exceeded"  # type: ignore[index]
        assert "cap" in oa.value.message
        client = anthropic.Anthropic(base_url=gw.url, api_key=token, max_retries=0)
        with pytest.raises(anthropic.RateLimitError) as an:
            client.messages.create(
                model="cap-gpt", max_tokens=16, messages=[{"role": "user", "content": "hi"}]
            )
        assert an.value.response.headers["retry-after"] == "1"
        assert an.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
        gemini = httpx.post(
            f"{gw.url}/v1beta/models/cap-gpt:generateContent",
            headers={"x-goog-api-key": token},
            json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
            timeout=30,
        )
        assert gemini.status_code == 429 and gemini.headers["retry-after"] == "1"
        assert gemini.json()["error"]["status"] == "RESOURCE_EXHAUSTED"
        assert time.monotonic() - refused_at < LATENCY_MS / 1000  # refused, not queued
        filler.join(60)
        assert all(not isinstance(r, Exception) for r in filling), filling
        assert time.monotonic() - started >= LATENCY_MS / 1000
        # the cap held on each key, and the spill went key -> key -> channel
        on_primary = carried(primary, "cap-gpt")
        assert Counter(on_primary) == {"<redacted:valid>": 2, "<redacted:valid:1>": 1}, on_primary
        assert carried(fallback, "cap-gpt") == ["<redacted:valid>"] * 2
        # the slots are free again once the calls ended
        http_json("POST", f"{primary.url}/_mock/config", {"latency_ms": 0})
        assert openai_call(gw, token, "cap-gpt")().choices[0].message.content
    finally:
        for upstream in (primary, fallback):
            http_json("POST", f"{upstream.url}/_mock/config", {"latency_ms": 0})


def test_an_rpm_cap_holds_for_the_minute(setup: tuple[Gateway, Upstream, Upstream]) -> None:
    gw, _, fallback = setup
    _, token = gw.new_user(balance_usd=5)
    clear(fallback)
    call = openai_call(gw, token, "rpm-gpt")
    for _ in range(3):
        assert call().choices[0].message.content
    with pytest.raises(openai.RateLimitError) as refused:
        call()
    wait = int(refused.value.response.headers["retry-after"])
    assert 50 <= wait <= 60, wait
    assert len(carried(fallback, "rpm-gpt")) == 3  # the 4th never reached the upstream


def test_a_realtime_session_holds_its_slot_until_it_ends(
    setup: tuple[Gateway, Upstream, Upstream],
) -> None:
    gw, _, _ = setup
    _, token = gw.new_user(balance_usd=5)
    sdk = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0, timeout=30)
    with sdk.realtime.connect(model="rt-gpt") as first:
        assert first.recv().type == "session.created"
        with (
            pytest.raises(websockets.exceptions.InvalidStatus) as refused,
            sdk.realtime.connect(model="rt-gpt"),
        ):
            pass
        assert refused.value.response.status_code == 429
        assert refused.value.response.headers["retry-after"] == "1"
    # the first session ended: its slot is free again
    assert wait_for(lambda: _opens(sdk), timeout=5)


def _opens(sdk: openai.OpenAI) -> bool:
    try:
        with sdk.realtime.connect(model="rt-gpt") as session:
            return session.recv().type == "session.created"
    except websockets.exceptions.InvalidStatus:
        return False
