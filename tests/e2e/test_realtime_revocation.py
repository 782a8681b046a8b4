"""Issue 20 #5: a Realtime session does not outlive its key. Disabling the token or the
user closes an open (even idle) session with an `error` event and code 1008 within a
couple of seconds; every `response.create` is admitted again, so the requests-per-minute
limit applies per response (a refused one is answered with an error and not forwarded,
and the session goes on)."""

import json
from typing import Any

import pytest
from sqlalchemy import select
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from switchgate.accounts.service import set_user_status
from switchgate.cli.ops import Ops
from switchgate.storage.db import bump_config_version
from switchgate.storage.tables import tokens, users
from tests.conftest import Gateway

MODEL = "gpt-mock"


def _open(gateway: Gateway, token: str) -> ClientConnection:
    url = gateway.url.replace("http://", "ws://") + f"/v1/realtime?model={MODEL}"
    ws = connect(url, additional_headers={"Authorization": f"Bearer {token}"})
    assert '"session.created"' in str(ws.recv(timeout=10))
    return ws


def _until(ws: ClientConnection, kinds: tuple[str, ...], timeout: float = 10) -> dict[str, Any]:
    while True:
        event = json.loads(ws.recv(timeout=timeout))
        if event["type"] in kinds:
            return dict(event)


def _respond(ws: ClientConnection) -> dict[str, Any]:
    ws.send(json.dumps({"type": "response.create"}))
    return _until(ws, ("response.done", "error"))


def _closed_by_gateway(ws: ClientConnection) -> tuple[list[dict[str, Any]], int | None]:
    events: list[dict[str, Any]] = []
    with pytest.raises(ConnectionClosed):
        while True:
            events.append(json.loads(ws.recv(timeout=8)))
    return events, ws.close_code


def _token_id(gateway: Gateway, email: str) -> int:
    async def job(ops: Ops) -> int:
        async with ops.db.connect() as conn:
            user_id = await conn.scalar(select(users.c.id).where(users.c.email == email))
            return int(await conn.scalar(select(tokens.c.id).where(tokens.c.user_id == user_id)))

    result: int = gateway.ops(job)
    return result


def test_disabling_the_token_closes_an_idle_session(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    ws = _open(gateway, token)
    assert _respond(ws)["type"] == "response.done"
    token_id = _token_id(gateway, email)

    async def disable(ops: Ops) -> None:
        await ops.set_token_status(token_id, "disabled")

    gateway.ops(disable)
    events, code = _closed_by_gateway(ws)
    assert code == 1008
    assert [e["type"] for e in events if e["type"] == "error"] == ["error"]


def test_disabling_the_user_closes_the_session(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    ws = _open(gateway, token)

    async def disable(ops: Ops) -> None:
        async with ops.db.begin() as conn:
            user_id = await conn.scalar(select(users.c.id).where(users.c.email == email))
            await set_user_status(conn, int(user_id), "disabled")
            await bump_config_version(conn)

    gateway.ops(disable)
    events, code = _closed_by_gateway(ws)
    assert code == 1008 and any(e["type"] == "error" for e in events)


def test_requests_per_minute_apply_to_each_response(gateway: Gateway) -> None:
    email, _ = gateway.new_user()

    async def limited(ops: Ops) -> str:
        return (await ops.create_token(email, "rpm", rpm_limit=2)).token

    token = gateway.ops(limited)
    ws = _open(gateway, token)  # the connection is one request
    assert _respond(ws)["type"] == "response.done"  # the second
    refused = _respond(ws)  # the third in a minute
    assert refused["type"] == "error" and refused["error"]["code"] == "rate_limit_exceeded"
    # Not forwarded, and the session is still open.
    ws.send(json.dumps({"type": "session.update", "session": {"instructions": "still here"}}))
    assert _until(ws, ("session.updated", "error"))["type"] == "session.updated"
    ws.close()
