"""Editing a channel through the console API keeps what the edit does not name: its time
limits (`timeouts`), its Responses setting and its options (merge semantics), and the
positions of its keys, which key each key's health (`k:<channel>:<position>`).

The channels these tests add to the shared gateway serve models of their own (MODEL) and
are disabled at the end, so other tests' traffic never reaches their made-up keys."""

from typing import Any

from switchgate.cli.ops import Ops
from switchgate.routing.channels import Channel, load_channels
from switchgate.routing.keys import KeySpec
from tests.conftest import Gateway
from tests.e2e.console_client import signed_in

MODEL, ALIAS = "edit-test-model", "edit-test-alias"


def stored(gateway: Gateway, name: str) -> Channel:
    async def job(ops: Ops) -> Channel:
        async with ops.db.connect() as conn:
            return next(c for c in await load_channels(conn, ops.box) if c.name == name)

    result: Channel = gateway.ops(job)
    return result


def add(gateway: Gateway, name: str, extra: dict[str, Any], keys: list[str]) -> int:
    async def job(ops: Ops) -> int:
        channel_id, _ = await ops.add_channel(
            name=name,
            kind="openai",
            base_url=f"{gateway.mock_url}/v1",
            api_key="",
            keys=[KeySpec(k) for k in keys],
            models=[MODEL],
            extra=extra,
        )
        return int(channel_id)

    result: int = gateway.ops(job)
    return result


def test_an_edit_keeps_the_time_limits_the_responses_setting_and_the_options(
    gateway: Gateway,
) -> None:
    extra = {"timeouts": {"connect": 3.0, "total": 120.0}, "responses": True, "x_title": "t"}
    channel_id = add(gateway, "edit-keeps-limits", extra, ["sk-edit-keeps-1111"])
    console = signed_in(gateway, admin=True)

    # an edit of the models alone (as the console's Edit dialog sends it, no timeouts)
    console.ok("PATCH", f"/api/channels/{channel_id}", {"models": [MODEL, ALIAS]})
    channel = stored(gateway, "edit-keeps-limits")
    assert channel.models == (MODEL, ALIAS)
    assert channel.extra["timeouts"] == {"connect": 3.0, "total": 120.0}
    assert channel.extra["responses"] is True
    assert channel.extra["x_title"] == "t"
    listed = console.ok("GET", "/api/channels")
    item = next(c for c in listed["items"] if c["id"] == channel_id)
    assert item["timeouts"] == {"connect": 3.0, "total": 120.0} and item["responses"] is True
    assert listed["timeout_defaults"]["connect"] > 0

    # named: replaced; {} and "auto" remove them
    console.ok(
        "PATCH", f"/api/channels/{channel_id}", {"timeouts": {"idle": 5}, "responses": False}
    )
    channel = stored(gateway, "edit-keeps-limits")
    assert channel.extra["timeouts"] == {"idle": 5.0} and channel.extra["responses"] is False
    console.ok("PATCH", f"/api/channels/{channel_id}", {"timeouts": {}, "responses": "auto"})
    channel = stored(gateway, "edit-keeps-limits")
    assert "timeouts" not in channel.extra and "responses" not in channel.extra
    assert channel.extra["x_title"] == "t"

    bad = console.api("PATCH", f"/api/channels/{channel_id}", {"timeouts": {"connect": -1}})
    assert bad.status_code == 400 and "connect" in bad.text
    bad = console.api("PATCH", f"/api/channels/{channel_id}", {"timeouts": {"soon": 1}})
    assert bad.status_code == 400 and "unknown time limit" in bad.text
    console.ok("POST", f"/api/channels/{channel_id}/status", {"enabled": False})


def test_an_edit_that_does_not_touch_keys_keeps_their_positions(gateway: Gateway) -> None:
    keys = ["sk-pos-zero-0000", "sk-pos-one-1111", "sk-pos-two-2222"]
    channel_id = add(gateway, "edit-keeps-positions", {}, keys)
    console = signed_in(gateway, admin=True)
    console.ok("DELETE", f"/api/channels/{channel_id}/keys/1")
    console.ok("POST", f"/api/channels/{channel_id}/keys/2/status", {"enabled": False})
    before = {k.key: (k.position, k.status) for k in stored(gateway, "edit-keeps-positions").keys}
    assert before == {keys[0]: (0, "enabled"), keys[2]: (2, "disabled")}

    console.ok("PATCH", f"/api/channels/{channel_id}", {"priority": 4})
    after = stored(gateway, "edit-keeps-positions")
    assert after.priority == 4
    assert {k.key: (k.position, k.status) for k in after.keys} == before

    # a key added afterwards never takes a removed key's position (nor its health)
    added = console.ok("POST", f"/api/channels/{channel_id}/keys", {"key": "sk-pos-new-3333"})
    assert added["position"] == 3

    # keys given again keep their positions (and state); a new one comes after the highest
    listed = [keys[2], "sk-pos-fresh-4444", keys[0]]
    console.ok("PATCH", f"/api/channels/{channel_id}", {"api_keys": listed})
    again = {k.key: (k.position, k.status) for k in stored(gateway, "edit-keeps-positions").keys}
    assert again == {
        keys[0]: (0, "enabled"),
        keys[2]: (2, "disabled"),
        "sk-pos-fresh-4444": (4, "enabled"),
    }
    console.ok("POST", f"/api/channels/{channel_id}/status", {"enabled": False})
