"""Failover under real faults, over real sockets: a primary fake upstream misbehaving on
purpose (server-wide fault modes, faults.py) and a healthy fallback, behind the real
gateway, with the official SDK of each dialect as the client (issue 14)."""

import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import types

from tests.conftest import Gateway
from tests.e2e.routing_support import (
    Upstream,
    keys_toml,
    lane_models,
    lanes_toml,
    start_gateway,
    upstream_pair,
)
from tests.support import wait_for

LANES = {
    lane: []
    for lane in ("a", "hang", "quiet", "stall", "retry", "long", "probe", "client", "cut", "bad")
} | {"many": [f"m{i}" for i in range(10)]}


@pytest.fixture(scope="module")
def setup(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Gateway, Upstream, Upstream, str]]:
    with upstream_pair(tmp_path_factory) as (primary, fallback):
        data_dir = tmp_path_factory.mktemp("routing-gw")
        config = lanes_toml(primary.url, fallback.url, LANES)
        config += "\n" + keys_toml(primary.url, "keys", ["bad-key-00001", "mock-key"])
        config += "\n" + fallback_toml(primary.url, fallback.url)
        gw = start_gateway(data_dir, config)
        try:
            _, token = gw.new_user(balance_usd=50)
            yield gw, primary, fallback, token
        finally:
            gw.process.stop()


@pytest.fixture
def env(setup: tuple[Gateway, Upstream, Upstream, str]) -> tuple[Gateway, Upstream, Upstream, str]:
    _, primary, fallback, _ = setup
    primary.faults()
    fallback.faults()
    return setup


def fallback_toml(primary: str, fallback: str) -> str:
    """ctx-gpt: three channels whose upstream models have 128k, 128k and 1M windows.
    fb-gpt: one failing channel, with fb-claude declared as its fallback model."""
    channels = [
        ("ctx-small", "openai", f"{primary}/v1", "ctx-gpt", "gpt-4o", 10),
        ("ctx-same", "openai", f"{fallback}/v1", "ctx-gpt", "gpt-4o-mini", 5),
        ("ctx-big", "openai", f"{fallback}/v1", "ctx-gpt", "gpt-4.1", 0),
        ("fb-primary", "openai", f"{primary}/v1", "fb-gpt", "fb-gpt", 0),
        ("fb-other", "anthropic", fallback, "fb-claude", "fb-claude", 0),
    ]
    out = [
        f'[[channels]]\nname = "{name}"\nkind = "{kind}"\nbase_url = "{url}"\n'
        f'key = "mock-key"\nmodels = ["{model}"]\nmap = {{ "{model}" = "{upstream}" }}\n'
        f"priority = {priority}\n"
        for name, kind, url, model, upstream, priority in channels
    ]
    out += [
        f'[prices."{m}"]\ninput = "1"\noutput = "2"\n' for m in ("ctx-gpt", "fb-gpt", "fb-claude")
    ]
    out.append('[fallbacks]\n"fb-gpt" = ["fb-claude"]\n')
    return "\n".join(out)


def oai(gw: Gateway, token: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0, timeout=40)


def claude(gw: Gateway, token: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=gw.url, api_key=token, max_retries=0, timeout=40)


def gemini(gw: Gateway, token: str) -> genai.Client:
    return genai.Client(
        api_key=token, http_options=types.HttpOptions(base_url=gw.url, timeout=40_000)
    )


def ask_all(gw: Gateway, token: str, lane: str, stream: bool) -> dict[str, str]:
    """One call per dialect on the lane's models; the text each answer carried."""
    out: dict[str, str] = {}
    model = f"{lane}-gpt"
    if stream:
        chunks = oai(gw, token).chat.completions.create(
            model=model, messages=[{"role": "user", "content": "hello"}], stream=True
        )
        out[model] = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    else:
        reply = oai(gw, token).chat.completions.create(
            model=model, messages=[{"role": "user", "content": "hello"}]
        )
        out[model] = reply.choices[0].message.content or ""
    model = f"{lane}-claude"
    messages: Any = [{"role": "user", "content": "hello"}]
    if stream:
        with claude(gw, token).messages.stream(model=model, max_tokens=50, messages=messages) as s:
            out[model] = s.get_final_text()
    else:
        message = claude(gw, token).messages.create(model=model, max_tokens=50, messages=messages)
        out[model] = "".join(b.text for b in message.content if b.type == "text")
    model = f"{lane}-gemini"
    google = gemini(gw, token)  # kept alive: the SDK closes its HTTP client when collected
    if stream:
        parts = google.models.generate_content_stream(model=model, contents="hello")
        out[model] = "".join(p.text or "" for p in parts)
    else:
        out[model] = google.models.generate_content(model=model, contents="hello").text or ""
    return out


@pytest.mark.parametrize("stream", [False, True])
def test_a_failing_primary_fails_over_for_every_dialect(env: Any, stream: bool) -> None:
    gw, primary, fallback, token = env
    primary.faults(fault_status=503, fault_models=lane_models("a"))
    before = {m: fallback.count(m) for m in lane_models("a")}
    answers = ask_all(gw, token, "a", stream)
    assert all(answers.values()), answers
    for model in lane_models("a"):
        assert fallback.count(model) == before[model] + 1, model


def test_an_upstream_that_never_answers_fails_over_within_the_first_byte_limit(env: Any) -> None:
    gw, primary, fallback, token = env
    primary.faults(hang=True)
    for stream in (True, False):
        started = time.monotonic()
        answers = ask_all(gw, token, "hang", stream)
        elapsed = time.monotonic() - started
        assert all(answers.values()), answers
        # three calls, each waiting out its channel's first-byte limit (2 s streamed, 3 s not)
        assert elapsed < 3 * (2 if stream else 3) + 5, elapsed
    for model in lane_models("hang"):
        assert fallback.count(model) == 2


def test_headers_then_silence_still_fails_over(env: Any) -> None:
    """An upstream that sends its headers and then nothing has not answered yet."""
    gw, primary, fallback, token = env
    primary.faults(stall_after=0)
    answers = ask_all(gw, token, "quiet", stream=True)
    assert all(answers.values()), answers
    for model in lane_models("quiet"):
        assert primary.count(model) == 1 and fallback.count(model) == 1


def test_a_stream_that_stalls_after_bytes_went_out_ends_with_an_error_event(env: Any) -> None:
    gw, primary, _, token = env
    primary.faults(stall_after=3)
    started = time.monotonic()
    received: list[Any] = []
    with pytest.raises(openai.APIError):
        for chunk in oai(gw, token).chat.completions.create(
            model="stall-gpt", messages=[{"role": "user", "content": "hello"}], stream=True
        ):
            received.append(chunk)
    assert received and time.monotonic() - started < 2 + 3
    with (
        pytest.raises(anthropic.APIError),
        claude(gw, token).messages.stream(
            model="stall-claude", max_tokens=50, messages=[{"role": "user", "content": "hello"}]
        ) as s,
    ):
        s.get_final_text()
    assert time.monotonic() - started < 2 * (2 + 3)


def test_a_short_retry_after_retries_the_same_channel_once(env: Any) -> None:
    gw, primary, fallback, token = env
    primary.faults(fault_status=429, fault_count=1, fault_retry_after="1")
    started = time.monotonic()
    reply = oai(gw, token).chat.completions.create(
        model="retry-gpt", messages=[{"role": "user", "content": "hello"}]
    )
    assert reply.choices[0].message.content
    assert time.monotonic() - started >= 1.0
    assert primary.count("retry-gpt") == 2 and fallback.count("retry-gpt") == 0


def test_a_long_retry_after_keeps_the_channel_out_for_that_long(env: Any) -> None:
    gw, primary, fallback, token = env
    primary.faults(fault_status=429, fault_retry_after="30", fault_models=["long-gpt"])
    for _ in range(3):
        reply = oai(gw, token).chat.completions.create(
            model="long-gpt", messages=[{"role": "user", "content": "hello"}]
        )
        assert reply.choices[0].message.content
    assert primary.count("long-gpt") == 1, "the channel stays out while Retry-After lasts"
    assert fallback.count("long-gpt") == 3


def test_one_failing_model_does_not_cool_the_others(env: Any) -> None:
    gw, primary, fallback, token = env
    primary.faults(fault_status=500, fault_models=["many-m3"])
    client = oai(gw, token)
    for _ in range(6):
        reply = client.chat.completions.create(
            model="many-m3", messages=[{"role": "user", "content": "hello"}]
        )
        assert reply.choices[0].message.content
    assert primary.count("many-m3") == 3, "three failures open its breaker; then it is skipped"
    for i in (0, 1, 2, 4, 5, 6, 7, 8, 9):
        for _ in range(2):
            client.chat.completions.create(
                model=f"many-m{i}", messages=[{"role": "user", "content": "hello"}]
            )
        assert primary.count(f"many-m{i}") == 2 and fallback.count(f"many-m{i}") == 0


def test_half_open_sends_one_trial_and_closes_on_success(env: Any) -> None:
    gw, primary, fallback, token = env
    primary.faults(fault_status=500, fault_count=3)
    client = oai(gw, token)

    def ask() -> None:
        client.chat.completions.create(
            model="probe-gpt", messages=[{"role": "user", "content": "hello"}]
        )

    for _ in range(5):
        ask()
    assert primary.count("probe-gpt") == 3 and fallback.count("probe-gpt") == 5
    time.sleep(1.2)  # the cool-down (1 s in these tests) is over: half-open
    ask()  # the trial request, which succeeds and closes the breaker
    assert primary.count("probe-gpt") == 4
    ask()
    assert primary.count("probe-gpt") == 5 and fallback.count("probe-gpt") == 5


def test_client_errors_are_returned_not_retried(env: Any) -> None:
    gw, primary, fallback, token = env
    primary.faults(fault_status=400, fault_message="Invalid 'temperature' (mock).")
    with pytest.raises(openai.BadRequestError):
        oai(gw, token).chat.completions.create(
            model="client-gpt", messages=[{"role": "user", "content": "hello"}]
        )
    assert primary.count("client-gpt") == 1 and fallback.count("client-gpt") == 0


def test_a_key_refused_with_401_is_disabled_and_the_next_key_answers(env: Any) -> None:
    gw, primary, _, token = env
    for _ in range(2):
        answers = ask_all(gw, token, "keys", stream=False)
        assert all(answers.values()), answers
    for model in lane_models("keys"):
        # the bad key was tried once (401), then never again; the good one answered twice
        assert primary.keys_used(model) == ["invalid", "valid", "valid"], model
    _, admin_token = gw.new_user(admin=True)
    headers = {"authorization": f"Bearer {admin_token}"}

    def keys_of(name: str) -> list[dict[str, Any]]:
        listed = httpx.get(f"{gw.url}/api/channels", headers=headers).json()["items"]
        return next(c["keys"] for c in listed if c["name"] == name)

    found = wait_for(lambda: keys_of("keys-gpt")[0]["status"] == "disabled", timeout=5)
    assert found, keys_of("keys-gpt")
    bad, good = keys_of("keys-gpt")
    assert "401" in bad["disabled_reason"] and bad["disabled_at"] > 0
    assert good["status"] == "enabled"
    channel_id = next(
        c["id"]
        for c in httpx.get(f"{gw.url}/api/channels", headers=headers).json()["items"]
        if c["name"] == "keys-gpt"
    )
    # re-enabled by hand: back in turn (and refused again at once)
    response = httpx.post(
        f"{gw.url}/api/channels/{channel_id}/keys/0/status",
        json={"enabled": True},
        headers=headers,
    )
    assert response.status_code == 200, response.text
    assert keys_of("keys-gpt")[0]["status"] == "enabled"


def test_a_context_length_400_moves_to_a_candidate_with_a_larger_window(env: Any) -> None:
    gw, primary, fallback, token = env
    primary.faults(
        fault_status=400,
        fault_models=["gpt-4o"],
        fault_message="This model's maximum context length is 128000 tokens. However, your "
        "messages resulted in 190000 tokens.",
    )
    reply = oai(gw, token).chat.completions.create(
        model="ctx-gpt", messages=[{"role": "user", "content": "a very long prompt"}]
    )
    assert reply.choices[0].message.content
    assert primary.count("gpt-4o") == 1
    assert fallback.count("gpt-4o-mini") == 0, "the same window cannot take it either"
    assert fallback.count("gpt-4.1") == 1


def test_a_declared_fallback_model_answers_across_dialects(env: Any) -> None:
    gw, primary, fallback, token = env
    primary.faults(fault_status=500, fault_models=["fb-gpt"])
    reply = oai(gw, token).chat.completions.create(
        model="fb-gpt", messages=[{"role": "user", "content": "hello"}]
    )
    assert reply.choices[0].message.content
    assert primary.count("fb-gpt") == 1 and fallback.count("fb-claude") == 1
    assert reply.model == "fb-claude", "the answer names the model that answered"


@pytest.mark.parametrize("fault", [{"invalid_after": 3}, {"cut_after": 3}])
def test_a_broken_stream_ends_with_an_error_event_in_each_dialect(
    env: Any, fault: dict[str, int]
) -> None:
    gw, primary, _, token = env
    primary.faults(**fault)
    received: list[Any] = []
    with pytest.raises(openai.APIError):
        for chunk in oai(gw, token).chat.completions.create(
            model="bad-gpt", messages=[{"role": "user", "content": "hello"}], stream=True
        ):
            received.append(chunk)
    assert received, "what came before the fault was delivered"
    with (
        pytest.raises(anthropic.APIError),
        claude(gw, token).messages.stream(
            model="bad-claude", max_tokens=50, messages=[{"role": "user", "content": "hello"}]
        ) as s,
    ):
        s.get_final_text()
    # translated: an OpenAI client on an Anthropic channel
    with pytest.raises(openai.APIError):
        for _ in oai(gw, token).chat.completions.create(
            model="bad-claude", messages=[{"role": "user", "content": "hello"}], stream=True
        ):
            pass
