"""The admin dashboard's API (/api/admin/stats) and the request detail (/api/logs/{id})
against the real gateway, with the openai SDK making the requests."""

from collections.abc import Iterator
from decimal import Decimal

import openai
import pytest

from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Gateway
from tests.e2e.console_client import Console, own_gateway, signed_in
from tests.support import Process, wait_for


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process) -> Iterator[Gateway]:
    gateway = own_gateway(tmp_path_factory, mock_upstream)
    yield gateway
    gateway.process.stop()


def admin(gateway: Gateway) -> Console:
    console = Console(gateway)
    assert console.signin(ADMIN_EMAIL, ADMIN_PASSWORD).status_code == 303
    return console


def test_admin_stats_cover_the_site_per_model_channel_and_user(site: Gateway) -> None:
    gateway = site
    boss = admin(gateway)
    fresh = boss.ok("GET", "/api/admin/stats?range=7d")
    assert fresh["totals"]["requests"] == 0
    assert {c["key"]: c["done"] for c in fresh["checklist"]} == {
        "channel": True, "prices": True, "token": False, "playground": False,
    }  # fmt: skip
    user = signed_in(gateway, balance_usd=5)
    key = user.ok("POST", "/api/tokens", {"name": "stats"})["token"]
    sdk = openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=key, max_retries=0)
    for _ in range(3):
        sdk.chat.completions.create(model="gpt-mock", messages=[{"role": "user", "content": "x"}])
    assert wait_for(lambda: len(user.ok("GET", "/api/logs")["items"]) == 3)

    assert user.api("GET", "/api/admin/stats").status_code == 403
    assert boss.api("GET", "/api/admin/stats?range=1y").status_code == 400
    stats = boss.ok("GET", "/api/admin/stats?range=24h")
    assert stats["step_ms"] == 3_600_000 and len(stats["series"]["t"]) == 24
    assert stats["totals"]["requests"] == 3 and sum(stats["series"]["requests"]) == 3
    assert stats["totals"]["errors"] == 0
    [mine] = stats["users"]
    assert mine["email"] == user.email and mine["requests"] == 3
    assert Decimal(mine["spend_usd"]) == Decimal(stats["totals"]["spend_usd"]) > 0
    model = next(m for m in stats["models"] if m["model"] == "gpt-mock")
    assert model["p50_ms"] is not None and model["p95_ms"] is not None
    assert any(c["name"] == "mock-openai" for c in stats["channels"])
    assert "gpt-mock" in stats["spend_by_model"]
    assert "mock-openai" in stats["spend_by_channel"]
    assert {c["key"]: c["done"] for c in stats["checklist"]} == {
        "channel": True, "prices": True, "token": True, "playground": True,
    }  # fmt: skip
    daily = boss.ok("GET", "/api/admin/stats?range=30d")
    assert daily["step_ms"] == 86_400_000 and len(daily["series"]["t"]) == 30

    # One model's or one channel's slice; the choices list what the period has.
    sdk.chat.completions.create(model="claude-mock", messages=[{"role": "user", "content": "y"}])
    assert wait_for(lambda: len(user.ok("GET", "/api/logs")["items"]) == 4)
    whole = boss.ok("GET", "/api/admin/stats?range=24h")
    assert whole["totals"]["requests"] == 4 and whole["filter"] == {
        "model": None,
        "channel_id": None,
    }
    assert whole["choices"]["models"] == ["claude-mock", "gpt-mock"]
    channels = {c["name"]: c["channel_id"] for c in whole["choices"]["channels"]}
    assert set(channels) == {"mock-anthropic", "mock-openai"}
    claude = boss.ok("GET", "/api/admin/stats?range=24h&model=claude-mock")
    assert claude["totals"]["requests"] == sum(claude["series"]["requests"]) == 1
    assert [m["model"] for m in claude["models"]] == ["claude-mock"]
    assert list(claude["spend_by_model"]) == ["claude-mock"]
    assert claude["choices"] == whole["choices"]  # still everything, to switch to
    by_channel = boss.ok("GET", f"/api/admin/stats?range=24h&channel={channels['mock-openai']}")
    assert by_channel["totals"]["requests"] == 3
    assert [c["name"] for c in by_channel["channels"]] == ["mock-openai"]
    assert by_channel["users"][0]["requests"] == 3
    crossed = f"/api/admin/stats?range=24h&model=claude-mock&channel={channels['mock-openai']}"
    assert boss.ok("GET", crossed)["totals"]["requests"] == 0
    assert boss.api("GET", "/api/admin/stats?channel=mock-openai").status_code == 400


def test_request_detail_is_yours_alone_and_explains_the_cost(gateway: Gateway) -> None:
    user = signed_in(gateway, balance_usd=5)
    key = user.ok("POST", "/api/tokens", {"name": "detail"})["token"]
    sdk = openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=key, max_retries=0)
    raw = sdk.chat.completions.with_raw_response.create(
        model="gpt-mock", messages=[{"role": "user", "content": "explain"}]
    )
    request_id = raw.headers["x-request-id"]
    found = wait_for(lambda: user.api("GET", f"/api/logs/{request_id}").status_code == 200)
    assert found
    detail = user.ok("GET", f"/api/logs/{request_id}")
    assert detail["dialect"] == "openai" and detail["endpoint"] and detail["status"] == 200
    assert "channel" not in detail  # channel names are the operator's business
    parts = {p["part"]: Decimal(p["usd"]) for p in detail["cost_breakdown"]}
    assert set(parts) <= {"input tokens", "output tokens"} and "output tokens" in parts
    assert sum(parts.values()) == Decimal(detail["cost_usd"])
    assert detail["input_tokens"] > 0 and detail["output_tokens"] > 0
    assert detail["attempts"] == 1

    # fallback-model: the dead channel first (priority 10), then the working one.
    raw = sdk.chat.completions.with_raw_response.create(
        model="fallback-model", messages=[{"role": "user", "content": "again"}]
    )
    failover = raw.headers["x-request-id"]
    assert wait_for(lambda: user.api("GET", f"/api/logs/{failover}").status_code == 200)
    assert user.ok("GET", f"/api/logs/{failover}")["attempts"] == 2

    other = signed_in(gateway)
    assert other.api("GET", f"/api/logs/{request_id}").status_code == 404
    seen = admin(gateway).ok("GET", f"/api/logs/{request_id}")
    assert seen["channel"]["name"] == "mock-openai"
    assert user.api("GET", "/api/logs/no-such-request").status_code == 404
