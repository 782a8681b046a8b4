"""Issue 20, account takeover: links sent away are never built from a forged Host header,
and GitHub / Google sign-in never joins an account whose address was never verified.

Over real sockets against the shared gateway (no SWITCHGATE_PUBLIC_URL: the default),
its local SMTP server and the fake OAuth provider."""

import secrets
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy import select

from switchgate.cli.ops import Ops
from switchgate.storage.tables import oauth_identities, users
from tests.conftest import Gateway
from tests.e2e.console_client import PASSWORD, Console, form_csrf, verified_user
from tests.e2e.test_oauth_signup_limits import assert_signed_in, new_login, oauth
from tests.e2e.test_signup_limits import console_from, own_address
from tests.mailbox import SmtpServer

FORGED = {"host": "attacker.example"}


def test_a_forged_host_never_gets_a_reset_link(gateway: Gateway, smtp_server: SmtpServer) -> None:
    email = verified_user(gateway)
    console = Console(gateway)
    token = form_csrf(console.http.get("/console/forgot").text)
    sent = len(smtp_server.box.messages)
    answer = console.http.post(
        "/console/forgot", data={"csrf": token, "email": email}, headers=FORGED
    )
    assert answer.status_code == 400, answer.text
    assert "SWITCHGATE_PUBLIC_URL" in answer.text
    # The same answer for an address nobody uses: nothing to learn about accounts.
    unknown = console.http.post(
        "/console/forgot", data={"csrf": token, "email": "nobody@example.com"}, headers=FORGED
    )
    assert unknown.status_code == 400
    assert all("attacker.example" not in m.body for m in smtp_server.box.messages)
    assert len(smtp_server.box.messages) == sent
    # From the gateway's own address the link is sent and points there.
    assert console.http.post("/console/forgot", data={"csrf": token, "email": email}).is_success
    assert smtp_server.box.link(email, "Reset").startswith(gateway.url + "/console/reset?")


def test_a_forged_host_never_becomes_an_oauth_redirect(gateway: Gateway) -> None:
    console = Console(gateway)
    start = console.http.get("/console/oauth/github/start", headers=FORGED)
    assert start.status_code == 400 and "location" not in start.headers
    assert "SWITCHGATE_PUBLIC_URL" in start.text
    ok = console.http.get("/console/oauth/github/start")
    assert ok.status_code == 303
    assert "redirect_uri=http%3A%2F%2F127.0.0.1" in ok.headers["location"]


def test_sign_up_with_mail_refuses_a_forged_host(gateway: Gateway) -> None:
    console = Console(gateway)
    email = f"forged-{secrets.token_hex(4)}@example.com"
    token = form_csrf(console.http.get("/console/signup").text)
    form = {"csrf": token, "email": email, "password": PASSWORD, "password2": PASSWORD}
    answer = console.http.post("/console/signup", data=form, headers=FORGED)
    assert answer.status_code == 400 and "SWITCHGATE_PUBLIC_URL" in answer.text
    assert _user(gateway, email) is None


def _user(gateway: Gateway, email: str) -> tuple[int, bool, int] | None:
    """(id, email_verified, linked identities) of the account with `email`, if any."""

    async def job(ops: Ops) -> tuple[int, bool, int] | None:
        async with ops.db.connect() as conn:
            row = (
                await conn.execute(
                    select(users.c.id, users.c.email_verified).where(users.c.email == email)
                )
            ).first()
            if row is None:
                return None
            linked = (
                await conn.execute(
                    select(oauth_identities.c.id).where(oauth_identities.c.user_id == row.id)
                )
            ).all()
        return int(row.id), bool(row.email_verified), len(linked)

    result: tuple[int, bool, int] | None = gateway.ops(job)
    return result


def test_oauth_never_joins_an_unverified_account(gateway: Gateway) -> None:
    """The attacker signs up first with the victim's address and a password; the victim
    later signs in with Google, which vouches for the address: refused, nothing linked,
    the account stays unverified (the attacker's password gains nothing)."""
    victim = f"victim-{secrets.token_hex(4)}@example.com"

    async def squat(ops: Ops) -> None:
        await ops.add_user(victim, PASSWORD, False)

    gateway.ops(squat)
    for provider in ("google", "github"):
        console = Console(gateway)
        refused = oauth(console, provider, new_login(), victim)
        assert refused.status_code == 403, refused.text
        assert "never verified" in refused.text
        assert console.http.get("/console/account").status_code != 200
    assert _user(gateway, victim)[1:] == (False, 0)  # type: ignore[index]


def test_oauth_still_joins_a_verified_account(gateway: Gateway) -> None:
    email = verified_user(gateway)
    console = Console(gateway)
    assert_signed_in(oauth(console, "google", new_login(), email), console, email)
    assert _user(gateway, email)[1:] == (True, 1)  # type: ignore[index]


def test_a_burst_of_sign_ins_tries_no_more_passwords_than_the_limit(gateway: Gateway) -> None:
    """Counted before argon2 runs (in a thread, holding no connection): 29 concurrent
    wrong passwords used to try 28 (limit 5) and lock SQLite ("database is locked")."""
    email = verified_user(gateway)
    address = own_address()
    consoles = [console_from(gateway.url, address) for _ in range(29)]
    tokens = [form_csrf(c.http.get("/console/signin").text) for c in consoles]

    def attempt(i: int) -> int:
        form = {"csrf": tokens[i], "email": email, "password": f"wrong-{i}"}
        return consoles[i].http.post("/console/signin", data=form).status_code

    with ThreadPoolExecutor(max_workers=29) as pool:
        statuses = sorted(pool.map(attempt, range(29)))
    assert statuses == [400] * 5 + [429] * 24
    assert Console(gateway).signin(email).status_code == 429


def test_successful_sign_ins_do_not_use_up_the_network(gateway: Gateway) -> None:
    """The per-IP count is of failures: 35 good sign-ins from one address (limit 30)."""
    email = verified_user(gateway)
    address = own_address()
    for _ in range(35):
        assert console_from(gateway.url, address).signin(email).status_code == 303
