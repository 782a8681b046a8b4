"""The console's JSON API against the real gateway: isolation between users, CSRF,
admin-only endpoints, token limits as seen by each SDK, single-use redemption codes,
sign-in rate limiting, password reset by mail, and the OpenAPI description."""

import time
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors

from switchgate.cli.ops import Ops
from switchgate.providers.registry import kind_names
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Gateway
from tests.e2e.console_client import PASSWORD, Console, form_csrf, signed_in, verified_user
from tests.mailbox import SmtpServer
from tests.support import wait_for


def chat(gateway: Gateway, token: str) -> None:
    openai.OpenAI(
        base_url=f"{gateway.url}/v1", api_key=token, max_retries=0
    ).chat.completions.create(model="gpt-mock", messages=[{"role": "user", "content": "hi"}])


def admin(gateway: Gateway) -> Console:
    console = Console(gateway)
    assert console.signin(ADMIN_EMAIL, ADMIN_PASSWORD).status_code == 303
    return console


def test_user_a_never_sees_or_changes_user_b(gateway: Gateway) -> None:
    a, b = signed_in(gateway, balance_usd=5), signed_in(gateway, balance_usd=5)
    a_token = a.ok("POST", "/api/tokens", {"name": "a-secret"})
    chat(gateway, a_token["token"])
    assert wait_for(lambda: a.ok("GET", "/api/logs")["items"])
    a_balance = a.ok("GET", "/api/me")["balance_usd"]

    assert all(t["id"] != a_token["id"] for t in b.ok("GET", "/api/tokens")["items"])
    for method, body in (
        ("PATCH", {"status": "disabled"}),
        ("PATCH", {"name": "x"}),
        ("DELETE", None),
    ):
        response = b.api(method, f"/api/tokens/{a_token['id']}", body)
        assert response.status_code == 400 and "no token" in response.text
    assert b.ok("GET", "/api/logs")["items"] == []
    assert b.ok("GET", f"/api/logs?token_id={a_token['id']}")["items"] == []
    assert b.api("GET", "/api/logs?user_id=all").status_code == 403
    assert "a-secret" not in b.api("GET", "/api/logs.csv").text
    assert all(r["kind"] != "charge" for r in b.ok("GET", "/api/ledger")["items"])
    for path in ("/api/users", "/api/channels", "/api/redemptions", "/api/settings"):
        assert b.api("GET", path).status_code == 403
    assert b.api("POST", "/api/users/1/balance", {"amount_usd": "100"}).status_code == 403
    # A's token still works and A's data is untouched.
    chat(gateway, a_token["token"])
    assert [t["name"] for t in a.ok("GET", "/api/tokens")["items"]] == ["a-secret"]
    assert a.ok("GET", "/api/me")["balance_usd"] != "5.00" and a_balance != "5.00"


def test_api_calls_need_the_csrf_header_and_forms_the_csrf_field(gateway: Gateway) -> None:
    console = signed_in(gateway)
    assert console.api("POST", "/api/tokens", {"name": "x"}, csrf=False).status_code == 403
    assert console.api("GET", "/api/tokens", csrf=False).status_code == 403
    assert console.api("POST", "/api/tokens", {"name": "x"}).status_code == 200
    fresh = Console(gateway)
    response = fresh.http.post(
        "/console/signin", data={"email": console.email, "password": PASSWORD}
    )
    assert response.status_code == 403
    anonymous = httpx.get(f"{gateway.url}/api/tokens")
    assert anonymous.status_code == 401


def test_session_cookie_is_http_only_and_lax(gateway: Gateway) -> None:
    console = Console(gateway)
    token = form_csrf(console.http.get("/console/signin").text)
    response = console.http.post(
        "/console/signin",
        data={"csrf": token, "email": ADMIN_EMAIL, "password": ADMIN_PASSWORD},
    )
    cookie = response.headers["set-cookie"].lower()
    assert "sg_session=" in cookie and "httponly" in cookie and "samesite=lax" in cookie
    assert "secure" not in cookie  # tests run on http; https or SWITCHGATE_COOKIE_SECURE sets it


def test_admin_token_scripts_the_api_and_other_tokens_cannot(gateway: Gateway) -> None:
    async def job(ops: Ops) -> str:
        return (await ops.create_token(ADMIN_EMAIL, "script")).token

    admin_token = gateway.ops(job)
    _, user_token = gateway.new_user()
    headers = {"authorization": f"Bearer {admin_token}"}
    found = httpx.get(f"{gateway.url}/api/users?q=example.com", headers=headers)
    assert found.status_code == 200 and found.json()["total"] >= 1
    denied = httpx.get(
        f"{gateway.url}/api/tokens", headers={"authorization": f"Bearer {user_token}"}
    )
    assert denied.status_code == 403


def test_channel_kinds_come_from_the_provider_registry(gateway: Gateway) -> None:
    """The console's kind list is the registry's (providers/registry.py), with labels."""

    async def job(ops: Ops) -> str:
        return (await ops.create_token(ADMIN_EMAIL, "kinds")).token

    headers = {"authorization": f"Bearer {gateway.ops(job)}"}
    listed = httpx.get(f"{gateway.url}/api/channels", headers=headers).json()
    assert listed["kinds"] == list(kind_names())
    details = {d["name"]: d for d in listed["kind_details"]}
    assert details["openai"]["default_base_url"] == "https://api.openai.com/v1"
    assert "rerank" in details["jina"]["endpoints"] and details["anthropic"]["label"]
    assert all(d["needs_key"] in (True, False) for d in details.values())


def test_token_limits_give_a_clear_error_in_each_dialect(gateway: Gateway) -> None:
    console = signed_in(gateway, balance_usd=5)
    past = int(time.time() * 1000) - 60_000
    expired = console.ok("POST", "/api/tokens", {"name": "old", "expires_at": past})["token"]
    foreign = console.ok("POST", "/api/tokens", {"name": "ip", "allowed_ips": ["10.0.0.0/8"]})
    capped = console.ok("POST", "/api/tokens", {"name": "cap", "quota_limit_usd": "0.000001"})
    # No call fits that limit: a request's worst case is reserved against it, as against
    # the balance (docs/billing.md, "Token spending limits").

    cases = [
        (expired, 401, "token_expired", "authentication_error", "UNAUTHENTICATED", "expired"),
        (foreign["token"], 403, "ip_not_allowed", "permission_error", "PERMISSION_DENIED", "10."),
        (capped["token"], 402, "token_quota_exceeded", "", "RESOURCE_EXHAUSTED", "limit"),
    ]
    for token, status, code, anthropic_type, gemini_status, words in cases:
        with pytest.raises(openai.APIStatusError) as oi:
            chat(gateway, token)
        assert oi.value.status_code == status and oi.value.code == code
        message = oi.value.message
        assert words in message or (status == 403 and "may not be used from" in message)
        claude = anthropic.Anthropic(base_url=gateway.url, api_key=token, max_retries=0)
        with pytest.raises(anthropic.APIStatusError) as ai:
            claude.messages.create(
                model="claude-mock", max_tokens=8, messages=[{"role": "user", "content": "x"}]
            )
        assert ai.value.status_code == status
        if anthropic_type:
            assert ai.value.body["error"]["type"] == anthropic_type  # type: ignore[index]
        gemini = genai.Client(api_key=token, http_options={"base_url": gateway.url})
        with pytest.raises(genai_errors.APIError) as gi:
            gemini.models.generate_content(model="gemini-mock", contents="x")
        assert gi.value.status == gemini_status


def test_a_redemption_code_is_credited_once_under_concurrent_redemption(gateway: Gateway) -> None:
    boss = admin(gateway)
    batch = boss.ok("POST", "/api/redemptions", {"count": 2, "amount_usd": "3.5", "note": "t"})
    code = batch["codes"][0]
    redeemers = [signed_in(gateway) for _ in range(2)]
    attempts = [redeemers[i % 2] for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda c: c.api("POST", "/api/redeem", {"code": code}), attempts))
    assert sorted(r.status_code for r in results) == [200] + [400] * 7
    winner = next(c for c, r in zip(attempts, results, strict=True) if r.status_code == 200)
    assert winner.ok("GET", "/api/me")["balance_usd"] == "3.50"
    rows = winner.ok("GET", "/api/ledger?kind=redeem")["items"]
    assert len(rows) == 1 and rows[0]["amount_usd"] == "3.50"
    csv_text = boss.api("GET", f"/api/redemptions/{batch['batch']}/codes.csv").text
    assert code in csv_text and batch["codes"][1] in csv_text and ",used," in csv_text


def test_admin_adjusts_a_balance_with_a_note_and_can_disable_an_account(gateway: Gateway) -> None:
    boss = admin(gateway)
    user = signed_in(gateway)
    me = user.ok("GET", "/api/me")
    boss.ok("POST", f"/api/users/{me['id']}/balance", {"amount_usd": "7.25", "note": "welcome"})
    row = user.ok("GET", "/api/ledger")["items"][0]
    assert (row["kind"], row["amount_usd"], row["note"], row["actor"]) == (
        "adjust",
        "7.25",
        "welcome",
        ADMIN_EMAIL,
    )
    token = user.ok("POST", "/api/tokens", {"name": "t"})["token"]
    chat(gateway, token)
    boss.ok("PATCH", f"/api/users/{me['id']}", {"status": "disabled"})
    assert user.api("GET", "/api/me").status_code == 401
    assert wait_for(lambda: _refused(gateway, token), timeout=5)
    again = Console(gateway).signin(user.email)
    assert again.status_code == 400 and "disabled" in again.text
    boss.ok("PATCH", f"/api/users/{me['id']}", {"status": "active", "role": "admin"})
    assert Console(gateway).signin(user.email).status_code == 303


def _refused(gateway: Gateway, token: str) -> bool:
    try:
        chat(gateway, token)
    except openai.AuthenticationError:
        return True
    return False


def test_sign_in_attempts_are_rate_limited(gateway: Gateway) -> None:
    email = verified_user(gateway)
    console = Console(gateway)
    statuses = [console.signin(email, "wrong-password").status_code for _ in range(6)]
    assert statuses == [400] * 5 + [429]
    assert console.signin(email).status_code == 429  # even the right password, for a while


def test_password_reset_by_mail(gateway: Gateway, smtp_server: SmtpServer) -> None:
    email = verified_user(gateway)
    console = Console(gateway)
    token = form_csrf(console.http.get("/console/forgot").text)
    assert (
        console.http.post("/console/forgot", data={"csrf": token, "email": email}).status_code
        == 200
    )
    link = smtp_server.box.link(email, "Reset")
    page = console.http.get(link.replace(gateway.url, ""))
    form = {
        "csrf": form_csrf(page.text),
        "password": "brand-new-pass",
        "password2": "brand-new-pass",
    }
    form["token"] = link.split("token=")[1]
    assert console.http.post("/console/reset", data=form).status_code == 200
    assert Console(gateway).signin(email, PASSWORD).status_code == 400
    assert Console(gateway).signin(email, "brand-new-pass").status_code == 303
    # The link works once.
    assert console.http.post("/console/reset", data=form).status_code == 400


def test_openapi_describes_the_management_api(gateway: Gateway) -> None:
    spec = httpx.get(f"{gateway.url}/api/openapi.json").json()
    assert spec["openapi"].startswith("3.")
    for path in ("/api/tokens", "/api/tokens/{id}", "/api/logs", "/api/channels", "/api/redeem"):
        assert path in spec["paths"], path
    assert "requestBody" in spec["paths"]["/api/tokens"]["post"]


def test_dashboard_and_paginated_logs_on_every_database(gateway_any: Gateway) -> None:
    console = signed_in(gateway_any, balance_usd=5)
    token = console.ok("POST", "/api/tokens", {"name": "pages"})["token"]
    for _ in range(3):
        chat(gateway_any, token)
    with pytest.raises(openai.NotFoundError):
        openai.OpenAI(
            base_url=f"{gateway_any.url}/v1", api_key=token, max_retries=0
        ).chat.completions.create(
            model="no-such-model", messages=[{"role": "user", "content": "x"}]
        )
    assert wait_for(lambda: len(console.ok("GET", "/api/logs")["items"]) == 4)
    first = console.ok("GET", "/api/logs?limit=2&status=ok")
    assert len(first["items"]) == 2 and first["next_cursor"]
    second = console.ok("GET", f"/api/logs?limit=2&status=ok&cursor={first['next_cursor']}")
    assert len(second["items"]) == 1 and second["next_cursor"] is None
    ids = [r["id"] for r in first["items"] + second["items"]]
    assert len(set(ids)) == 3 and ids == sorted(ids, reverse=True)
    errors = console.ok("GET", "/api/logs?status=error")["items"]
    assert [r["status"] for r in errors] == [404]
    board = console.ok("GET", "/api/dashboard")
    assert len(board["days"]) == 30 and board["requests_30d"] == 4 and board["errors_30d"] == 1
    spent = sum(Decimal(r["cost_usd"]) for r in first["items"] + second["items"])
    assert Decimal(board["days"][-1]["spend_usd"]) == spent == Decimal(board["spend_30d_usd"])
    assert Decimal(board["balance_usd"]) == 5 - spent
    assert board["recent_errors"][0]["status"] == 404
    csv_lines = console.api("GET", "/api/logs.csv").text.strip().splitlines()
    assert csv_lines[0].startswith("created_at,request_id,model") and len(csv_lines) == 5


def test_settings_keep_secrets_encrypted_and_write_only(gateway: Gateway) -> None:
    boss = admin(gateway)
    boss.ok("PUT", "/api/settings", {"smtp_password": "hunter2-smtp", "smtp_user": "mailer"})
    items = {s["key"]: s for s in boss.ok("GET", "/api/settings")["items"]}
    assert items["smtp_password"]["value"] == "" and items["smtp_password"]["is_set"]
    assert items["smtp_user"]["value"] == "mailer" and items["smtp_user"]["source"] == "console"
    assert "hunter2-smtp" not in boss.api("GET", "/api/settings").text
    for name in ("switchgate.db", "switchgate.db-wal"):
        path = gateway.data_dir / name
        assert not path.exists() or b"hunter2-smtp" not in path.read_bytes()
    assert boss.api("PUT", "/api/settings", {"signup": "maybe"}).status_code == 400
    boss.ok("PUT", "/api/settings", {"smtp_password": None, "smtp_user": None})
    assert boss.ok("GET", "/api/settings")["items"][0]["key"] == "signup"
