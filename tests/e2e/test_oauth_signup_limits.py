"""Accounts created through GitHub / Google sign-in count against the sign-up limit per
client IP, shared with the sign-up form: over the limit the callback answers 429 with a
Retry-After header and the reason, and creates nothing. Signing in to an account the
identity (or its verified address) already has, and linking to the signed-in account,
are neither limited nor counted.

The OAuth flow runs against the local fake provider, driven over HTTP (no browser); a
gateway of this module's own allows two sign-ups per IP, and each test speaks from
loopback addresses of its own (see test_signup_limits.py)."""

import secrets
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import select

from switchgate.cli.ops import Ops
from switchgate.storage.tables import users
from tests.conftest import Gateway, console_env
from tests.e2e.console_client import Console, verified_user
from tests.e2e.test_signup_limits import (
    assert_limited,
    console_from,
    new_email,
    own_address,
    sign_up,
)
from tests.mailbox import SmtpServer
from tests.support import Process, free_port, gateway_env, start_process

SIGNUP_LIMITED = "Too many sign-ups from your network"


@pytest.fixture(scope="module")
def limited(
    tmp_path_factory: pytest.TempPathFactory, smtp_server: SmtpServer, fake_oauth: Process
) -> Iterator[Gateway]:
    """A gateway with GitHub and Google sign-in that allows two sign-ups per client IP."""
    data_dir = tmp_path_factory.mktemp("oauth-limits")
    env = gateway_env(data_dir, None)
    env.update(console_env(smtp_server, fake_oauth))
    env["SWITCHGATE_SIGNUP_LIMIT_PER_IP"] = "2"
    port = free_port()
    process = start_process(
        ["serve", "--port", str(port)],
        env,
        data_dir / "gateway.log",
        f"http://127.0.0.1:{port}/healthz",
    )
    yield Gateway(process, "", data_dir, None)
    process.stop()


def new_login() -> str:
    return f"oauth-{secrets.token_hex(4)}"


def oauth(
    console: Console, provider: str, login: str, email: str, start: httpx.Response | None = None
) -> httpx.Response:
    """Authorize at the fake provider as `login` with the verified address `email`; the
    gateway's answer to the callback. `start`: a link flow's start (default: sign-in)."""
    if start is None:
        start = console.http.get(f"/console/oauth/{provider}/start")
    assert start.status_code == 303, start.text
    authorize = httpx.URL(start.headers["location"])
    consent = {**dict(authorize.params), "login": login, "email": email, "verified": "1"}
    back = console.http.post(authorize.copy_with(query=None), data=consent)
    assert back.status_code == 302, back.text
    return console.http.get(back.headers["location"])


def assert_signed_in(response: httpx.Response, console: Console, email: str) -> None:
    assert response.status_code == 303, response.text
    assert response.headers["location"] == "/console"
    account = console.http.get("/console/account")
    assert account.status_code == 200 and email in account.text


def assert_refused(response: httpx.Response) -> None:
    assert response.status_code == 429, response.text
    wait = int(response.headers["retry-after"])
    assert 3540 <= wait <= 3600
    reason = f"{SIGNUP_LIMITED}. Try again in {-(-wait // 60)} minutes."
    assert f'<p class="message">{reason}</p>' in response.text
    assert "Sign-in failed" in response.text


def user_exists(gateway: Gateway, email: str) -> bool:
    async def job(ops: Ops) -> bool:
        async with ops.db.connect() as conn:
            found = await conn.scalar(select(users.c.id).where(users.c.email == email))
        return found is not None

    return bool(gateway.ops(job))


def test_oauth_sign_ups_over_the_ip_limit_are_refused(limited: Gateway) -> None:
    console = console_from(limited.url, own_address())
    for provider in ("github", "google"):
        login = new_login()
        assert_signed_in(oauth(console, provider, login, f"{login}@example.com"), console, login)
    for provider in ("github", "google"):
        login = new_login()
        email = f"{login}@example.com"
        assert_refused(oauth(console, provider, login, email))
        assert not user_exists(limited, email)
    # Nothing was created or linked: from another network the same account signs up.
    elsewhere = console_from(limited.url, own_address())
    assert_signed_in(oauth(elsewhere, "github", login, email), elsewhere, email)


def test_the_form_and_oauth_share_the_count(limited: Gateway) -> None:
    console = console_from(limited.url, own_address())
    assert sign_up(console, new_email()).status_code == 200  # SMTP is set: "check your inbox"
    login = new_login()
    assert_signed_in(oauth(console, "google", login, f"{login}@example.com"), console, login)
    refused = new_login()
    assert_refused(oauth(console, "github", refused, f"{refused}@example.com"))
    assert_limited(sign_up(console, new_email()), SIGNUP_LIMITED, 3600)


def test_linked_accounts_still_sign_in_at_the_limit(limited: Gateway) -> None:
    address = own_address()
    console = console_from(limited.url, address)
    first, second = new_login(), new_login()
    assert_signed_in(oauth(console, "github", first, f"{first}@example.com"), console, first)
    assert_signed_in(oauth(console, "google", second, f"{second}@example.com"), console, second)
    late = new_login()
    assert_refused(oauth(console, "github", late, f"{late}@example.com"))
    # The linked identities sign in to their accounts (the address given now is ignored).
    assert_signed_in(oauth(console, "github", first, "other@example.com"), console, first)
    assert_signed_in(oauth(console, "google", second, "other@example.com"), console, second)
    # A new identity with an existing account's verified address joins that account.
    password_user = verified_user(limited)
    assert_signed_in(oauth(console, "google", new_login(), password_user), console, password_user)
    # A signed-in account links another identity.
    member = console_from(limited.url, address)
    assert member.signin(password_user).status_code == 303
    start = member.http.post("/console/oauth/github/link", data={"csrf": member.csrf})
    linked = oauth(member, "github", late, f"{late}@example.com", start)
    assert linked.status_code == 303 and linked.headers["location"].endswith("linked=github")
    assert_signed_in(oauth(console, "github", late, "other@example.com"), console, password_user)
    assert not user_exists(limited, f"{late}@example.com")


def test_signing_in_and_linking_are_not_counted(limited: Gateway) -> None:
    known = new_login()
    elsewhere = console_from(limited.url, own_address())
    assert_signed_in(oauth(elsewhere, "github", known, f"{known}@example.com"), elsewhere, known)
    password_user = verified_user(limited)
    address = own_address()
    console = console_from(limited.url, address)
    for _ in range(3):
        assert_signed_in(oauth(console, "github", known, f"{known}@example.com"), console, known)
    assert_signed_in(oauth(console, "google", new_login(), password_user), console, password_user)
    member = console_from(limited.url, address)
    assert member.signin(password_user).status_code == 303
    start = member.http.post("/console/oauth/github/link", data={"csrf": member.csrf})
    assert oauth(member, "github", new_login(), new_email(), start).status_code == 303
    # None of that counted: this network still has both of its sign-ups.
    for provider in ("github", "google"):
        login = new_login()
        assert_signed_in(oauth(console, provider, login, f"{login}@example.com"), console, login)
    late = new_login()
    assert_refused(oauth(console, "github", late, f"{late}@example.com"))
