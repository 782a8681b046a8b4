"""A scripted console user: signs in through the real HTML form (double-submit CSRF),
then calls the JSON API with the session cookie and the session's CSRF header."""

import re
import secrets
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from sqlalchemy import update

from switchgate.cli.ops import Ops
from switchgate.storage.tables import users
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Gateway, _start_gateway
from tests.support import Process

PASSWORD = "correct-horse-battery"


def form_csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, html
    return found.group(1)


class Console:
    def __init__(self, gateway: Gateway | str) -> None:
        url = gateway if isinstance(gateway, str) else gateway.url
        self.http = httpx.Client(base_url=url, follow_redirects=False, timeout=30)
        self.csrf: str | None = None
        self.email = ""

    def signin(self, email: str, password: str = PASSWORD) -> httpx.Response:
        token = form_csrf(self.http.get("/console/signin").text)
        response = self.http.post(
            "/console/signin", data={"csrf": token, "email": email, "password": password}
        )
        if response.status_code == 303:
            page = self.http.get("/console")
            found = re.search(r'<meta name="csrf-token" content="([^"]+)"', page.text)
            assert found, page.text
            self.csrf, self.email = found.group(1), email
        return response

    def api(self, method: str, path: str, body: Any = None, csrf: bool = True) -> httpx.Response:
        headers = {"x-csrf-token": self.csrf or ""} if csrf else {}
        return self.http.request(method, path, json=body, headers=headers)

    def ok(self, method: str, path: str, body: Any = None) -> Any:
        response = self.api(method, path, body)
        assert response.status_code == 200, response.text
        return response.json()


def verified_user(gateway: Gateway, balance_usd: int = 0, admin: bool = False) -> str:
    """A user with a password and a verified e-mail (as if the link had been opened)."""
    email = f"console-{secrets.token_hex(4)}@example.com"

    async def job(ops: Ops) -> None:
        user = await ops.add_user(email, PASSWORD, admin)
        async with ops.db.begin() as conn:
            await conn.execute(
                update(users).where(users.c.id == user.id).values(email_verified=True)
            )
        if balance_usd:
            await ops.add_balance(email, balance_usd * 10**12, "test", "test")

    with ThreadPoolExecutor(1) as pool:  # callable while Playwright runs its event loop
        pool.submit(gateway.ops, job).result()
    return email


def signed_in(gateway: Gateway, balance_usd: int = 0, admin: bool = False) -> Console:
    console = Console(gateway)
    response = console.signin(verified_user(gateway, balance_usd, admin))
    assert response.status_code == 303, response.text
    return console


def own_gateway(tmp_path_factory: pytest.TempPathFactory, mock: Process) -> Gateway:
    """A gateway of its own (same channels and prices, the same admin), for tests that
    count site-wide totals, which the shared gateway's other tests would change."""
    env = {"SWITCHGATE_ADMIN_EMAIL": ADMIN_EMAIL, "SWITCHGATE_ADMIN_PASSWORD": ADMIN_PASSWORD}
    return _start_gateway(tmp_path_factory, mock, None, env)
