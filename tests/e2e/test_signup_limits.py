"""Sign-up and the verification / reset e-mails are rate-limited per client IP and per
address, through the real console forms: 429, Retry-After and the reason on the page.
With Redis two gateway processes share the counts; with Redis down the limits fall back
to each process and sign-in keeps working.

Each test speaks from a loopback address of its own (any 127.x.y.z reaches the gateway),
so the per-IP counters of the shared gateway, and any left in Redis, do not interfere."""

import random
import re
import secrets
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import Gateway
from tests.e2e.console_client import PASSWORD, Console, form_csrf, verified_user
from tests.mailbox import SmtpServer
from tests.support import (
    IN_CI,
    REDIS_URL,
    Process,
    dead_port,
    free_port,
    gateway_env,
    start_process,
)


def own_address() -> str:
    return f"127.{random.randint(1, 254)}.{random.randint(0, 255)}.{random.randint(1, 254)}"


def console_from(url: str, address: str) -> Console:
    """A console client whose connections come from `address`."""
    console = Console(url)
    console.http.close()
    console.http = httpx.Client(
        base_url=url,
        follow_redirects=False,
        timeout=30,
        transport=httpx.HTTPTransport(local_address=address),
    )
    return console


def new_email() -> str:
    return f"limits-{secrets.token_hex(4)}@example.com"


def sign_up(console: Console, email: str) -> httpx.Response:
    token = form_csrf(console.http.get("/console/signup").text)
    form = {"csrf": token, "email": email, "password": PASSWORD, "password2": PASSWORD}
    return console.http.post("/console/signup", data=form)


def resend(console: Console, email: str) -> httpx.Response:
    token = form_csrf(console.http.get("/console/signin").text)
    return console.http.post("/console/verify/resend", data={"csrf": token, "email": email})


def forgot(console: Console, email: str) -> httpx.Response:
    token = form_csrf(console.http.get("/console/forgot").text)
    return console.http.post("/console/forgot", data={"csrf": token, "email": email})


def assert_limited(response: httpx.Response, reason: str, window: int) -> None:
    assert response.status_code == 429, response.text
    wait = int(response.headers["retry-after"])
    assert window - 60 <= wait <= window
    shown = re.search(r'<p class="alert error" role="alert">([^<]*)</p>', response.text)
    assert shown, response.text
    minutes = -(-wait // 60)
    assert shown.group(1) == f"{reason}. Try again in {minutes} minutes."


def mails_to(smtp: SmtpServer, email: str) -> int:
    return sum(email in mail.to for mail in smtp.box.messages)


def test_sign_up_over_the_ip_limit_gets_429_with_retry_after(gateway: Gateway) -> None:
    console = console_from(gateway.url, own_address())
    for _ in range(10):  # the default: ten per client IP per hour
        response = sign_up(console, new_email())
        assert response.status_code == 200 and "Check your inbox" in response.text
    refused = new_email()
    response = sign_up(console, refused)
    assert_limited(response, "Too many sign-ups from your network", 3600)
    assert f'value="{refused}"' in response.text  # the form keeps what was typed
    # No account was created: from another address the same e-mail signs up.
    elsewhere = sign_up(console_from(gateway.url, own_address()), refused)
    assert elsewhere.status_code == 200 and "Check your inbox" in elsewhere.text


def test_verification_resend_is_limited_per_address(
    gateway: Gateway, smtp_server: SmtpServer
) -> None:
    console = console_from(gateway.url, own_address())
    email = new_email()
    assert sign_up(console, email).status_code == 200
    smtp_server.box.wait_for(email, "Verify")
    for _ in range(3):  # the default: three e-mails per address per 15 minutes
        response = resend(console, email)
        assert response.status_code == 200 and "Check your inbox" in response.text
    response = resend(console_from(gateway.url, own_address()), email)  # any IP
    assert_limited(response, "Too many e-mails for this address or from your network", 900)
    assert "Send the verification link again" in response.text
    # Reset mails count against the same allowance.
    assert_limited(
        forgot(console, email), "Too many e-mails for this address or from your network", 900
    )
    assert mails_to(smtp_server, email) == 4  # the sign-up's, and three resent


def test_mail_is_limited_per_client_ip(gateway: Gateway) -> None:
    console = console_from(gateway.url, own_address())
    for _ in range(10):  # the default: ten e-mails per client IP per 15 minutes
        assert resend(console, new_email()).status_code == 200
    response = forgot(console, verified_user(gateway))
    assert_limited(response, "Too many e-mails for this address or from your network", 900)


def _redis_reachable() -> bool:
    from redis import Redis
    from redis.exceptions import RedisError

    try:
        client = Redis.from_url(REDIS_URL, socket_connect_timeout=0.5)
        client.ping()
        client.close()
        return True
    except (RedisError, OSError):
        return False


def _gateways(data_dir: Path, count: int, extra: dict[str, str]) -> list[Process]:
    env = gateway_env(data_dir, None)
    env.update(extra)
    processes = []
    for index in range(count):
        port = free_port()
        processes.append(
            start_process(
                ["serve", "--port", str(port)],
                env,
                data_dir / f"gw{index}.log",
                f"http://127.0.0.1:{port}/healthz",
            )
        )
    return processes


@pytest.fixture(scope="module")
def redis_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Process]]:
    if not _redis_reachable():
        if IN_CI:
            pytest.fail(f"Redis is required in CI but {REDIS_URL} is not reachable")
        pytest.skip(f"Redis is not reachable at {REDIS_URL}")
    extra = {"SWITCHGATE_REDIS_URL": REDIS_URL, "SWITCHGATE_SIGNUP_LIMIT_PER_IP": "3"}
    processes = _gateways(tmp_path_factory.mktemp("limits-pair"), 2, extra)
    yield processes
    for process in processes:
        process.stop()


@pytest.mark.redis
def test_two_processes_share_the_limits_through_redis(redis_pair: list[Process]) -> None:
    address = own_address()
    first, second = (console_from(p.base_url, address) for p in redis_pair)
    # No SMTP here: a sign-up signs the new account in at once (303).
    assert sign_up(first, new_email()).status_code == 303
    assert sign_up(second, new_email()).status_code == 303
    assert sign_up(first, new_email()).status_code == 303
    assert_limited(sign_up(second, new_email()), "Too many sign-ups from your network", 3600)
    assert_limited(sign_up(first, new_email()), "Too many sign-ups from your network", 3600)
    # Failed sign-ins too: five per address, wherever they were tried.
    email = new_email()
    assert sign_up(console_from(redis_pair[0].base_url, own_address()), email).status_code == 303
    signed_out = [console_from(p.base_url, address) for p in redis_pair]
    for attempt in range(5):
        console = signed_out[attempt % 2]
        assert console.signin(email, "wrong-password").status_code == 400
    for console in signed_out:
        response = console.signin(email)
        assert response.status_code == 429 and "retry-after" in response.headers


def test_sign_in_works_and_limits_hold_when_redis_is_down(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    dead = f"redis://127.0.0.1:{dead_port()}/0"
    extra = {"SWITCHGATE_REDIS_URL": dead, "SWITCHGATE_SIGNUP_LIMIT_PER_IP": "2"}
    (process,) = _gateways(tmp_path_factory.mktemp("limits-dead-redis"), 1, extra)
    try:
        console = console_from(process.base_url, own_address())
        email = new_email()
        assert sign_up(console, email).status_code == 303
        assert sign_up(console, new_email()).status_code == 303
        assert_limited(sign_up(console, new_email()), "Too many sign-ups from your network", 3600)
        assert console_from(process.base_url, own_address()).signin(email).status_code == 303
        assert "Redis unreachable" in process.log()
    finally:
        process.stop()
