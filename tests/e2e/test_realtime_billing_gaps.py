"""Issue 20 #6: Realtime responses are billed even when the upstream does not say what
they cost or the client leaves early, and each response is held for the conversation it
answers, not a fixed 16k tokens."""

import json
import time
from typing import Any

from websockets.sync.client import ClientConnection

from switchgate.cli.ops import Ops
from tests.conftest import Gateway
from tests.e2e.media_helpers import log_rows
from tests.e2e.test_realtime_revocation import _open, _until
from tests.support import wait_for


def _say(ws: ClientConnection, text: str) -> None:
    item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    ws.send(json.dumps({"type": "conversation.item.create", "item": item}))


def _realtime_rows(gateway: Gateway, email: str) -> list[dict[str, Any]]:
    return [r for r in log_rows(gateway, email) if r["endpoint"] == "realtime"]


def test_a_response_without_usage_is_billed_from_what_was_relayed(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    before = gateway.balance(email)
    ws = _open(gateway, token)
    _say(ws, "count my words please [[mock:no_usage]]")
    ws.send(json.dumps({"type": "response.create"}))
    done = _until(ws, ("response.done",))
    assert done["response"]["usage"] is None
    ws.close()
    assert wait_for(lambda: len(_realtime_rows(gateway, email)) == 1)
    row = _realtime_rows(gateway, email)[0]
    assert row["usage_estimated"] and row["output_tokens"] > 0 and row["input_tokens"] > 0
    assert row["cost"] > 0 and gateway.balance(email) == before - row["cost"]


def test_a_client_that_leaves_before_response_done_is_billed(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    before = gateway.balance(email)
    ws = _open(gateway, token)
    _say(ws, "a long and slow answer [[mock:chunks=30]] [[mock:interval=300]]")
    ws.send(json.dumps({"type": "response.create"}))
    _until(ws, ("response.output_text.delta",))  # the answer has started ...
    ws.close()  # ... and the client is gone before response.done
    assert wait_for(lambda: len(_realtime_rows(gateway, email)) == 1)
    row = _realtime_rows(gateway, email)[0]
    assert row["usage_estimated"] and row["output_tokens"] >= 1 and row["cost"] > 0
    assert wait_for(lambda: gateway.balance(email) == before - row["cost"])


def test_each_response_is_held_for_the_whole_conversation(gateway: Gateway) -> None:
    """0.05 USD covers the fixed minimum hold (16k input + 4k output tokens of gpt-mock,
    0.0246 USD), not a 200k-token conversation: that response is refused, not served."""
    email, _ = gateway.new_user(balance_usd=0)

    async def setup(ops: Ops) -> str:
        await ops.add_balance(email, 5 * 10**10, "five cents", "test")
        return (await ops.create_token(email, "rt")).token

    token = gateway.ops(setup)
    ws = _open(gateway, token)
    _say(ws, "x " * 300_000)  # ~600 KB: about 200k tokens
    ws.send(json.dumps({"type": "response.create"}))
    refused = _until(ws, ("error", "response.done"))
    assert refused["type"] == "error" and refused["error"]["code"] == "insufficient_quota"
    time.sleep(0.5)
    ws.close()
    assert _realtime_rows(gateway, email) == []  # nothing was served
    assert gateway.balance(email) == 5 * 10**10
