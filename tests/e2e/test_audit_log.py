"""The audit log end to end: admin actions through the console API (session or admin
token) are recorded with who, what, which target, when and from where, secrets masked;
listed and exported (CSV) for admins only; the CLI's changes are there too."""

import csv
import io
import secrets

import httpx

from switchgate import jsonutil
from tests.conftest import Gateway
from tests.e2e.console_client import signed_in, verified_user
from tests.support import run_cli


def test_admin_actions_are_recorded_and_exported(gateway: Gateway) -> None:
    admin = signed_in(gateway, admin=True)
    target_email = verified_user(gateway)
    users = admin.ok("GET", f"/api/users?q={target_email}")["items"]
    user_id = next(u["id"] for u in users if u["email"] == target_email)
    admin.ok("POST", f"/api/users/{user_id}/balance", {"amount_usd": "1.25", "note": "gift"})
    name = f"audit-{secrets.token_hex(3)}"
    admin.ok(
        "POST",
        "/api/channels",
        {
            "name": name,
            "kind": "openai",
            "base_url": "http://127.0.0.1:9/v1",
            "api_key": "sk-never-in-the-log",
            "models": ["audit-model"],
        },
    )
    _, admin_token = gateway.new_user(admin=True)
    by_token = httpx.put(
        f"{gateway.url}/api/prices/audit-model",
        headers={"authorization": f"Bearer {admin_token}"},
        json={"input_per_1m": "1", "output_per_1m": "2"},
    )
    assert by_token.status_code == 200, by_token.text
    # A refused call (a user, not an admin) leaves nothing.
    plain = signed_in(gateway)
    refused = plain.api("POST", f"/api/users/{user_id}/balance", {"amount_usd": "5"})
    assert refused.status_code == 403

    items = admin.ok("GET", "/api/audit?limit=500")["items"]
    mine = [i for i in items if i["actor"] == admin.email]
    balance = next(i for i in mine if i["target"] == f"/api/users/{user_id}/balance")
    assert balance["action"] == "POST /api/users/{id:int}/balance"
    assert balance["ip"] == "127.0.0.1" and balance["created_at"] > 0
    assert jsonutil.loads(balance["detail"]) == {"amount_usd": "1.25", "note": "gift"}
    channel = next(i for i in mine if i["action"] == "POST /api/channels")
    assert name in channel["detail"] and "sk-never-in-the-log" not in channel["detail"]
    price = next(i for i in items if i["target"] == "/api/prices/audit-model")
    assert price["action"] == "PUT /api/prices/{model:path}" and price["actor"] != admin.email
    assert not any(i["actor"] == plain.email for i in items)
    assert plain.api("GET", "/api/audit").status_code == 403

    exported = admin.api("GET", "/api/audit.csv")
    assert exported.status_code == 200 and exported.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    assert any(r["target"] == f"/api/users/{user_id}/balance" for r in rows)
    assert "sk-never-in-the-log" not in exported.text
    page = admin.http.get("/console/audit")
    assert page.status_code == 200 and "audit.js" in page.text


def test_cli_changes_are_recorded_and_listed(gateway: Gateway) -> None:
    email, _ = gateway.new_user(balance_usd=0)
    run_cli(gateway.env, "balance", "add", email, "3", "--note", "by hand")
    listed = run_cli(gateway.env, "audit", "list", "--actor", "cli", "--format", "json")
    rows = [jsonutil.loads(line) for line in listed.stdout.splitlines() if line.startswith("{")]
    entry = next(r for r in rows if r["target"] == email and r["action"] == "cli balance add")
    assert jsonutil.loads(entry["detail"])["note"] == "by hand"
    table = run_cli(gateway.env, "audit", "list", "--limit", "5")
    assert "cli balance add" in table.stdout
