"""Realtime over WebSocket end to end: the openai SDK's realtime client (and a bare websockets
client for the browser-style subprotocol auth) against the gateway, proxied to the fake
upstream's /v1/realtime; every `response.done` is billed as it arrives."""

from decimal import Decimal
from typing import Any

import openai
import pytest
import websockets.exceptions
from websockets.sync.client import connect

from switchgate.relay.realtime import SESSION_HOLD_INPUT_TOKENS
from switchgate.settings import Settings
from tests.conftest import PRICES, Gateway
from tests.support import mock_requests, wait_for

MODEL = "gpt-mock"


def price(kind: str) -> int:
    return int(Decimal(PRICES[MODEL][kind]) * 10**6)  # pico-USD per token


def cost_of(usage: Any) -> int:
    cached = usage.input_token_details.cached_tokens
    return (
        (usage.input_tokens - cached) * price("input")
        + cached * price("cache_read")
        + usage.output_tokens * price("output")
    )


def client(gw: Gateway, token: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0, timeout=30)


def ask(connection: Any, text: str) -> list[Any]:
    """One user message and one response; the events up to and including response.done."""
    connection.conversation.item.create(
        item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    )
    connection.response.create()
    events = []
    for event in connection:
        events.append(event)
        if event.type in ("response.done", "error"):
            break
    return events


def test_session_relays_events_and_bills_every_response(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    before = gateway.balance(email)
    with client(gateway, token).realtime.connect(model=MODEL) as connection:
        connection.session.update(
            session={"type": "realtime", "output_modalities": ["text"], "instructions": "Be kind."}
        )
        first = ask(connection, "hello realtime gateway")
        second = ask(connection, "and once more")
    kinds = [e.type for e in first]
    assert "response.output_text.delta" in kinds and kinds[-1] == "response.done"
    text = "".join(e.delta for e in first if e.type == "response.output_text.delta")
    assert text == "Hello from mock! You said: hello realtime gateway"
    usages = [first[-1].response.usage, second[-1].response.usage]
    assert all(u is not None and u.output_tokens > 0 for u in usages)
    assert usages[1].input_tokens > usages[0].input_tokens  # the conversation grew
    cost = sum(cost_of(u) for u in usages)
    assert wait_for(lambda: gateway.balance(email) == before - cost)
    upstream = [r for r in mock_requests(gateway.mock_url) if r["path"] == "/v1/realtime"]
    assert upstream and upstream[-1]["query"]["model"] == "gpt-mock"


def test_subprotocol_auth_is_accepted_with_realtime(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    url = gateway.url.replace("http://", "ws://") + f"/v1/realtime?model={MODEL}"
    with connect(url, subprotocols=["realtime", f"openai-insecure-api-key.{token}"]) as ws:  # type: ignore[list-item]
        assert ws.subprotocol == "realtime"
        assert '"session.created"' in str(ws.recv(timeout=10))


@pytest.mark.parametrize(
    ("token", "model", "status"),
    [("sk-wrong", MODEL, 401), (None, "no-such-model", 404)],
)
def test_bad_key_or_model_is_refused_before_accept(
    gateway: Gateway, token: str | None, model: str, status: int
) -> None:
    if token is None:
        _, token = gateway.new_user()
    with (
        pytest.raises(websockets.exceptions.InvalidStatus) as info,
        client(gateway, token).realtime.connect(model=model),
    ):
        pass
    assert info.value.response.status_code == status


def test_balance_for_one_response_only_ends_the_session(gateway: Gateway) -> None:
    settings = Settings()
    hold = SESSION_HOLD_INPUT_TOKENS * price("input") + settings.default_hold_output_tokens * price(
        "output"
    )
    email, token = gateway.new_user(balance_usd=0)
    with (
        pytest.raises(websockets.exceptions.InvalidStatus) as info,
        client(gateway, token).realtime.connect(model=MODEL),
    ):
        pass
    assert info.value.response.status_code == 402

    async def top_up(ops: Any) -> None:
        await ops.add_balance(email, hold, "exactly one hold", "test")

    gateway.ops(top_up)
    with client(gateway, token).realtime.connect(model=MODEL) as connection:
        events = ask(connection, "just one please")
        assert events[-1].type == "response.done"
        tail = []
        for event in connection:  # an error event, then the gateway closes the socket
            tail.append(event)
    assert [e.type for e in tail] == ["error"]
    assert tail[0].error.code == "insufficient_quota"
    cost = cost_of(events[-1].response.usage)
    assert wait_for(lambda: gateway.balance(email) == hold - cost)
