"""A Realtime session gives its capped key's slot back however it ends (relay/
realtime.py): even when the task is cancelled (the client gone, a shutdown) while the
upstream WebSocket is still closing."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import SimpleNamespace
from typing import Any, cast

import pytest

from switchgate.relay import realtime
from switchgate.routing.key_caps import Slot


class _Upstream:
    def __init__(self) -> None:
        self.closing = asyncio.Event()

    async def close(self) -> None:
        self.closing.set()
        await asyncio.Event().wait()  # a peer that never answers the close


class _Session:
    def __init__(self, *args: Any) -> None:
        pass

    async def run(self, upstream: Any) -> None:
        return None


class _Hold:
    def __init__(self, *args: Any) -> None:
        pass

    @asynccontextmanager
    async def reserve(self, amount: int) -> AsyncIterator[None]:
        yield


async def test_a_cancellation_while_the_upstream_closes_still_frees_the_slot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    released: list[int] = []
    upstream = _Upstream()

    async def connect(state: Any, model: str, headers: Any) -> tuple[Any, Any, str, Slot]:
        return upstream, SimpleNamespace(name="rt"), model, Slot(lambda: released.append(1))

    async def admit(state: Any, token: Any, ip: Any) -> Any:
        return SimpleNamespace(user_id=1, token_id=1)

    monkeypatch.setattr(realtime, "admit", admit)
    monkeypatch.setattr(realtime, "_connect_upstream", connect)
    monkeypatch.setattr(realtime, "RealtimeSession", _Session)
    monkeypatch.setattr(realtime, "Hold", _Hold)
    monkeypatch.setattr(realtime, "session_hold", lambda state, price: 1)
    monkeypatch.setattr(realtime.policy, "check_model", lambda *args: None)
    monkeypatch.setattr(realtime.policy, "price_of", lambda *args: None)
    state = SimpleNamespace(book=None, catalog=None, recorder=SimpleNamespace(token_spend=None))
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "websocket",
        "query_string": b"model=gpt-realtime",
        "headers": [(b"authorization", b"Bearer sk-test")],
        "client": ("127.0.0.1", 5000),
    }
    task = asyncio.create_task(realtime.serve(cast(Any, state), scope, receive, send))
    await asyncio.wait_for(upstream.closing.wait(), 5)
    assert sent and sent[0]["type"] == "websocket.accept" and not released
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert released == [1]
