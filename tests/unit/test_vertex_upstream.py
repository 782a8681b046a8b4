"""The vertex adapter against the fake Vertex AI and the fake Google token endpoint
(switchgate/testing/mock_upstream/vertex.py, google_token.py): a locally generated
service-account key is exchanged for access tokens by google-auth, the tokens are cached
and refreshed before they expire, and both publishers answer in their own wire formats."""

import asyncio
import datetime
import functools
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import aiohttp
import google.auth.transport.requests
import pytest

from switchgate import jsonutil
from switchgate.billing.pricing import Price
from switchgate.core.content import TextPart, ToolCallPart
from switchgate.core.events import Finish, TextDelta, ToolCallStart, UsageUpdate
from switchgate.core.request import ChatRequest, Message, Sampling, ToolSpec
from switchgate.core.response import FinishReason
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.registry import provider_kinds
from switchgate.providers.vertex import VertexProvider
from switchgate.providers.vertex_auth import TokenCache
from switchgate.relay.probe import probe_channel
from switchgate.relay.upstream import UpstreamClient
from switchgate.routing.channels import Channel
from switchgate.settings import Timeouts
from switchgate.testing import MockUpstream, start_mock_upstream
from tests.vertex_support import (
    ServiceAccountKey,
    expire_tokens,
    make_service_account,
    register,
    tokens_issued,
)


@pytest.fixture
async def mock() -> AsyncIterator[MockUpstream]:
    up = await start_mock_upstream()
    yield up
    await up.close()


async def _account(mock: MockUpstream, ttl: int = 3600, **kw: Any) -> ServiceAccountKey:
    account = make_service_account(mock.base_url, **kw)
    await asyncio.to_thread(register, mock.base_url, account, ttl)
    return account


def _target(mock: MockUpstream, account: ServiceAccountKey, model: str, **options: Any) -> Target:
    return Target(mock.base_url, account.key, model, options={"location": "us-east5", **options})


async def _send(up: UpstreamRequest) -> tuple[int, bytes]:
    async with (
        aiohttp.ClientSession() as session,
        session.request(up.method, up.url, headers=up.headers, data=up.body) as response,
    ):
        return response.status, await response.read()


def _chat(text: str, stream: bool = False, tools: bool = False) -> ChatRequest:
    spec = ToolSpec("get_weather", "Weather", {"type": "object", "properties": {}})
    return ChatRequest(
        model="client-model",
        messages=(Message("user", (TextPart(text),)),),
        sampling=Sampling(max_tokens=64),
        stream=stream,
        tools=(spec,) if tools else (),
    )


async def _issued(mock: MockUpstream, account: ServiceAccountKey) -> int:
    return await asyncio.to_thread(tokens_issued, mock.base_url, account)


@pytest.mark.parametrize("model", ["gemini-2.5-flash", "claude-sonnet-4-5@20250929"])
async def test_chat_through_both_publishers(mock: MockUpstream, model: str) -> None:
    provider = VertexProvider()
    account = await _account(mock)
    target = await provider.authorize(_target(mock, account, model))
    assert target.options["project"] == "test-project"  # from the key's project_id
    up = provider.build_chat_request(_chat("Hello [[mock:text=Hi from Vertex]]"), target)
    status, body = await _send(up)
    assert status == 200, body
    response = provider.parse_chat_response(body, _chat("x"))
    assert response.parts == (TextPart("Hi from Vertex"),)
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0
    seen = mock.requests[-1]
    publisher = "anthropic" if model.startswith("claude") else "google"
    method = "rawPredict" if publisher == "anthropic" else "generateContent"
    assert seen["path"] == (
        f"/v1/projects/test-project/locations/us-east5/publishers/{publisher}/models/"
        f"{model}:{method}"
    )
    assert seen["headers"]["authorization"] == "<redacted>"  # a bearer token was sent
    assert account.info["private_key"] not in jsonutil.dumps_str(seen)


@pytest.mark.parametrize("model", ["gemini-2.5-pro", "claude-opus-4-1@20250805"])
async def test_streamed_tool_call(mock: MockUpstream, model: str) -> None:
    provider = VertexProvider()
    account = await _account(mock)
    target = await provider.authorize(_target(mock, account, model))
    request = _chat("Weather? [[mock:tool]]", stream=True, tools=True)
    status, body = await _send(provider.build_chat_request(request, target))
    assert status == 200, body
    decoder = provider.chat_stream_decoder(request)
    events = decoder.feed(body) + decoder.finish()
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [s.name for s in starts] == ["get_weather"]
    assert Finish(FinishReason.TOOL_CALLS) in events
    assert any(isinstance(e, UsageUpdate) and e.usage.output_tokens for e in events)


async def test_streamed_text(mock: MockUpstream) -> None:
    provider = VertexProvider()
    account = await _account(mock)
    for model in ("gemini-2.5-flash", "claude-haiku-4-5@20251001"):
        target = await provider.authorize(_target(mock, account, model))
        request = _chat("Hi [[mock:text=one two three]]", stream=True)
        status, body = await _send(provider.build_chat_request(request, target))
        assert status == 200
        decoder = provider.chat_stream_decoder(request)
        events = decoder.feed(body) + decoder.finish()
        text = "".join(e.text for e in events if isinstance(e, TextDelta))
        assert text == "one two three", model
    assert mock.requests[-1]["path"].endswith(":streamRawPredict")
    assert mock.requests[-2]["query"] == {"alt": "sse"}


async def test_tool_call_without_stream(mock: MockUpstream) -> None:
    provider = VertexProvider()
    account = await _account(mock)
    target = await provider.authorize(_target(mock, account, "claude-sonnet-4-5@20250929"))
    request = _chat("Weather? [[mock:tool]]", tools=True)
    status, body = await _send(provider.build_chat_request(request, target))
    assert status == 200
    response = provider.parse_chat_response(body, request)
    assert [p.name for p in response.parts if isinstance(p, ToolCallPart)] == ["get_weather"]
    assert response.finish_reason is FinishReason.TOOL_CALLS


async def test_embeddings(mock: MockUpstream) -> None:
    provider = VertexProvider()
    account = await _account(mock)
    target = await provider.authorize(_target(mock, account, "gemini-embedding-001"))
    up = provider.build_embeddings_request(["some text to embed"], 64, target)
    status, body = await _send(up)
    assert status == 200, body
    result = provider.parse_embeddings_response(body)
    vectors, tokens = result.vectors, result.input_tokens
    assert len(vectors) == 1 and len(vectors[0]) == 64 and tokens == 4
    assert mock.requests[-1]["path"].endswith(
        "/publishers/google/models/gemini-embedding-001:predict"
    )
    # the fake refuses what Vertex refuses: two instances for gemini-embedding-001
    two = replace(up, body=jsonutil.dumps({"instances": [{"content": "a"}, {"content": "b"}]}))
    assert (await _send(two))[0] == 400


async def test_token_is_cached_and_shared(mock: MockUpstream) -> None:
    provider = VertexProvider()
    account = await _account(mock)
    target = _target(mock, account, "gemini-2.5-flash")
    results = await asyncio.gather(*(provider.authorize(target) for _ in range(8)))
    assert len({r.extra_headers["authorization"] for r in results}) == 1
    await provider.authorize(target)
    assert await _issued(mock, account) == 1  # one refresh for nine calls
    assert provider.tokens.refreshes(account.key) == 1


async def test_token_refreshed_before_expiry(mock: MockUpstream) -> None:
    offset = datetime.timedelta()

    def clock() -> datetime.datetime:
        return datetime.datetime.now(datetime.UTC).replace(tzinfo=None) + offset

    provider = VertexProvider(TokenCache(clock=clock))
    account = await _account(mock)
    target = _target(mock, account, "gemini-2.5-flash")
    first = await provider.authorize(target)
    offset = datetime.timedelta(minutes=54)  # the 60-minute token has 6 minutes left
    assert (await provider.authorize(target)).extra_headers == first.extra_headers
    offset = datetime.timedelta(minutes=56)  # 4 minutes left: inside the 5-minute margin
    second = await provider.authorize(target)
    assert second.extra_headers != first.extra_headers
    assert await _issued(mock, account) == 2
    # the new token works at the upstream, and so does the old one until it expires
    for t in (first, second):
        status, _ = await _send(provider.build_chat_request(_chat("hi"), t))
        assert status == 200


async def test_short_lived_tokens_are_refreshed_each_time(mock: MockUpstream) -> None:
    provider = VertexProvider()
    account = await _account(mock, ttl=120)  # shorter than the refresh margin
    target = _target(mock, account, "gemini-2.5-flash")
    await provider.authorize(target)
    await provider.authorize(target)
    assert await _issued(mock, account) == 2


async def test_revoked_token_is_a_channel_failure_then_refreshed(mock: MockUpstream) -> None:
    provider = VertexProvider()
    account = await _account(mock)
    target = _target(mock, account, "claude-sonnet-4-5@20250929")
    authorized = await provider.authorize(target)
    await asyncio.to_thread(expire_tokens, mock.base_url)
    status, body = await _send(provider.build_chat_request(_chat("hi"), authorized))
    assert status == 401
    error = provider.classify_error(status, body)
    assert error.kind is ErrorKind.UPSTREAM_ERROR and error.upstream_status is None
    assert "access token" in error.message
    again = await provider.authorize(target)  # the cached token was dropped
    assert again.extra_headers != authorized.extra_headers
    status, _ = await _send(provider.build_chat_request(_chat("hi"), again))
    assert status == 200


async def test_unknown_service_account_is_a_clear_channel_error(mock: MockUpstream) -> None:
    provider = VertexProvider()
    account = make_service_account(mock.base_url)  # never registered
    with pytest.raises(GatewayError) as info:
        await provider.authorize(_target(mock, account, "gemini-2.5-flash"))
    error = info.value
    assert error.kind is ErrorKind.UPSTREAM_ERROR and error.upstream_status is None
    assert account.email in error.message and "account not found" in error.message
    assert "PRIVATE KEY" not in error.message and "BEGIN" not in error.message


async def test_wrong_private_key_is_refused_by_the_token_endpoint(mock: MockUpstream) -> None:
    provider = VertexProvider()
    account = await _account(mock)
    impostor = make_service_account(mock.base_url, name=account.email.split("@")[0])
    forged = {**impostor.info, "private_key_id": account.info["private_key_id"]}
    key = jsonutil.dumps_str(forged)
    with pytest.raises(GatewayError) as info:
        await provider.authorize(Target(mock.base_url, key, "gemini-2.5-flash"))
    assert "Invalid JWT Signature" in info.value.message
    assert forged["private_key"] not in info.value.message


async def test_other_project_is_permission_denied(mock: MockUpstream) -> None:
    provider = VertexProvider()
    account = await _account(mock)
    target = await provider.authorize(
        _target(mock, account, "gemini-2.5-flash", project="someone-else")
    )
    status, body = await _send(provider.build_chat_request(_chat("hi"), target))
    assert status == 403
    error = provider.classify_error(status, body)
    assert error.upstream_status == 403 and "aiplatform.endpoints.predict" in error.message


async def test_fake_refuses_a_wrong_claude_body(mock: MockUpstream) -> None:
    provider = VertexProvider()
    account = await _account(mock)
    target = await provider.authorize(_target(mock, account, "claude-sonnet-4-5@20250929"))
    up = provider.build_chat_request(_chat("hi"), target)
    body = jsonutil.loads(up.body)
    for bad in ({**body, "model": "claude"}, {**body, "anthropic_version": "2023-06-01"}):
        status, answer = await _send(replace(up, body=jsonutil.dumps(bad)))
        assert status == 400, bad
        assert provider.classify_error(status, answer).status == 400
    status, _ = await _send(replace(up, headers={"content-type": "application/json"}))
    assert status == 401


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"type": "authorized_user", "client_id": "x"}', "not a service-account key"),
        ('{"type": "service_account", "client_email": "a@b"}', "lacks private_key"),
        (
            '{"type": "service_account", "client_email": "a@b", "private_key": "-----BEGIN '
            'PRIVATE KEY-----\\nAAAA\\n-----END PRIVATE KEY-----\\n"}',
            "could not be loaded",
        ),
    ],
)
async def test_bad_keys(key: str, message: str) -> None:
    with pytest.raises(GatewayError) as info:
        await VertexProvider().authorize(Target("https://aiplatform.googleapis.com", key, "m"))
    assert message in info.value.message
    assert "AAAA" not in info.value.message


async def test_access_token_key_is_used_as_is() -> None:
    target = Target("https://aiplatform.googleapis.com", " ya29.ready ", "gemini-2.5-flash")
    authorized = await VertexProvider().authorize(target)
    assert authorized.extra_headers == {"authorization": "Bearer ya29.ready"}


async def test_channel_probe_authorizes_and_reaches_both_publishers(mock: MockUpstream) -> None:
    """`switchgate channels test` / the console's Test button on a vertex channel."""
    account = await _account(mock)
    kinds = provider_kinds()
    client = UpstreamClient(Timeouts())
    await client.start()
    try:
        for model in ("gemini-2.5-flash", "claude-haiku-4-5@20251001"):
            channel = Channel(1, "vx", "vertex", mock.base_url, account.key, (model,))
            result = await probe_channel(client, kinds, channel, prices={}, timeout=10)
            assert result.ok and result.status == 200, result
        embed = Channel(3, "vx3", "vertex", mock.base_url, account.key, ("text-embedding-005",))
        prices = {"text-embedding-005": Price("text-embedding-005", kind="embedding")}
        result = await probe_channel(client, kinds, embed, prices=prices, timeout=10)
        assert result.ok and result.call == "embedding", result
        assert mock.requests[-1]["path"].endswith("/text-embedding-005:predict")
        broken = Channel(2, "vx2", "vertex", mock.base_url, make_service_account("x").key, ("m",))
        result = await probe_channel(client, kinds, broken, prices={}, timeout=10)
        assert not result.ok and "PRIVATE KEY" not in str(result.as_dict())
    finally:
        await client.close()


async def test_silent_token_endpoint_is_a_channel_error_within_the_budget(
    mock: MockUpstream,
) -> None:
    account = await _account(mock)
    fast = functools.partial(google.auth.transport.requests.Request(), timeout=2)
    provider = VertexProvider(TokenCache(transport=lambda: fast, budget=0.3))
    mock.config.hang = True  # every non-control route accepts and never answers
    try:
        started = time.monotonic()
        with pytest.raises(GatewayError) as info:
            await provider.authorize(_target(mock, account, "gemini-2.5-flash"))
        assert time.monotonic() - started < 1.5
        assert "did not answer within 0.3 s" in info.value.message
        assert info.value.upstream_status is None
    finally:
        mock.config.hang = False
