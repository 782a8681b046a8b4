"""Realtime over WebSocket end to end: the openai SDK's realtime client (and a bare websockets
client for the browser-style subprotocol auth) against the gateway, proxied to the fake
upstream's /v1/realtime; every `response.done` and every completed input-audio transcription
is billed as it arrives."""

import base64
from decimal import Decimal
from typing import Any

import openai
import pytest
import websockets.exceptions
from sqlalchemy import select
from websockets.sync.client import connect

from switchgate.accounts import service as accounts
from switchgate.relay.realtime import SESSION_HOLD_INPUT_TOKENS
from switchgate.settings import Settings
from switchgate.storage.tables import ledger
from tests.conftest import PRICES, Gateway
from tests.e2e.media_helpers import log_rows
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


# ---------------------------------------------------------------- input-audio transcription

TRANSCRIBED = "conversation.item.input_audio_transcription.completed"


def pcm(seconds: float) -> str:
    """Silent 24 kHz 16-bit mono PCM (the session's default input format), base64."""
    return base64.b64encode(bytes(int(seconds * 48_000))).decode()


def transcribe(connection: Any, model: str, *seconds: float) -> list[Any]:
    """Turn input transcription on with `model`, then commit one buffer of audio per entry of
    `seconds`; the transcription-completed events, in order."""
    connection.session.update(
        session={
            "type": "realtime",
            "output_modalities": ["text"],
            "audio": {"input": {"transcription": {"model": model}}},
        }
    )
    done = []
    for length in seconds:
        connection.input_audio_buffer.append(audio=pcm(length))
        connection.input_audio_buffer.commit()
        for event in connection:
            assert event.type != "error", event
            if event.type == TRANSCRIBED:
                done.append(event)
                break
    return done


def rows_of(gw: Gateway, email: str, count: int) -> list[dict[str, Any]]:
    def complete() -> list[dict[str, Any]] | None:
        rows = log_rows(gw, email)
        return rows if len(rows) == count else None

    rows = wait_for(complete)
    assert rows, f"expected {count} request-log rows, got {log_rows(gw, email)}"
    return list(rows)


def charges_of(gw: Gateway, email: str) -> list[tuple[int, str]]:
    """This user's ledger charges: (amount, note), oldest first."""

    async def job(ops: Any) -> list[tuple[int, str]]:
        async with ops.db.connect() as conn:
            user = await accounts.get_user(conn, email)
            rows = await conn.execute(
                select(ledger.c.amount, ledger.c.note)
                .where(ledger.c.user_id == user.id, ledger.c.kind == "charge")
                .order_by(ledger.c.id)
            )
            return [(int(r.amount), str(r.note)) for r in rows]

    result: list[tuple[int, str]] = gw.ops(job)
    return result


def test_token_billed_transcription_is_charged_apart_from_the_response(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    before = gateway.balance(email)
    with client(gateway, token).realtime.connect(model=MODEL) as connection:
        (done,) = transcribe(connection, "gpt-4o-transcribe", 1.5)
        response = ask(connection, "and what did I say?")
    assert done.transcript == "Mock transcript of 1.5 seconds of audio."
    usage = done.usage
    assert usage.type == "tokens" and (usage.input_tokens, usage.output_tokens) == (15, 7)
    # gpt-4o-transcribe is priced as `transcribe-mock` (the media channel's alias for it):
    # $2.50 / $10 per 1M tokens -> 2,500,000 / 10,000,000 units per token
    charge = 15 * 2_500_000 + 7 * 10_000_000
    assert charge == 107_500_000
    response_cost = cost_of(response[-1].response.usage)
    assert wait_for(lambda: gateway.balance(email) == before - charge - response_cost)
    rows = rows_of(gateway, email, 2)
    assert [r["endpoint"] for r in rows] == ["realtime.transcription", "realtime"]
    row = rows[0]
    assert (row["model"], row["upstream_model"], row["dialect"]) == (
        "transcribe-mock",
        "gpt-4o-transcribe",
        "realtime",
    )
    assert (row["input_tokens"], row["output_tokens"], row["cost"]) == (15, 7, charge)
    assert row["status"] == 200 and not row["usage_estimated"]
    assert row["channel_id"] == rows[1]["channel_id"] is not None  # the realtime channel
    assert (rows[1]["model"], rows[1]["cost"]) == (MODEL, response_cost)
    assert charges_of(gateway, email) == [
        (-charge, "realtime.transcription transcribe-mock"),
        (-response_cost, f"realtime {MODEL}"),
    ]


def test_duration_billed_transcription_is_charged_per_minute(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    before = gateway.balance(email)
    with client(gateway, token).realtime.connect(model=MODEL) as connection:
        done = transcribe(connection, "whisper-1", 1.5, 0.5)
    assert [(d.usage.type, d.usage.seconds) for d in done] == [("duration", 1.5), ("duration", 0.5)]
    # whisper-1 is priced as `whisper-mock`: $0.006 a minute; 1.5 s -> 2 s, 0.5 s -> 1 s
    per_second = 6_000_000_000 // 60
    charges = [2 * per_second, 1 * per_second]
    assert charges == [200_000_000, 100_000_000]
    assert wait_for(lambda: gateway.balance(email) == before - sum(charges))
    rows = rows_of(gateway, email, 2)
    assert [
        (r["endpoint"], r["model"], r["upstream_model"], r["input_tokens"], r["cost"]) for r in rows
    ] == [("realtime.transcription", "whisper-mock", "whisper-1", 0, c) for c in charges]
    assert [note for _, note in charges_of(gateway, email)] == [
        "realtime.transcription whisper-mock"
    ] * 2


def test_unpriced_transcription_model_is_logged_at_zero_and_warned_once(
    gateway: Gateway,
) -> None:
    email, token = gateway.new_user()
    before = gateway.balance(email)
    with client(gateway, token).realtime.connect(model=MODEL) as connection:
        done = transcribe(connection, "gpt-4o-mini-transcribe", 1.0, 2.0)
        response = ask(connection, "still answering?")  # the session goes on
    assert [d.usage.input_tokens for d in done] == [10, 20]
    assert response[-1].type == "response.done"
    rows = rows_of(gateway, email, 3)
    assert [
        (r["endpoint"], r["model"], r["upstream_model"], r["input_tokens"], r["cost"])
        for r in rows[:2]
    ] == [
        ("realtime.transcription", "gpt-4o-mini-transcribe", "gpt-4o-mini-transcribe", 10, 0),
        ("realtime.transcription", "gpt-4o-mini-transcribe", "gpt-4o-mini-transcribe", 20, 0),
    ]
    response_cost = cost_of(response[-1].response.usage)
    assert gateway.balance(email) == before - response_cost
    assert charges_of(gateway, email) == [(-response_cost, f"realtime {MODEL}")]
    user = f"user {rows[0]['user_id']},"
    warnings = [
        line
        for line in gateway.process.log().splitlines()
        if "'gpt-4o-mini-transcribe' has no price" in line and user in line
    ]
    assert len(warnings) == 1 and "WARNING" in warnings[0]
