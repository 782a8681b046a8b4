"""The first start of a fresh gateway: an admin account with a generated password,
printed once to the server log, and a hint on the console's sign-in page."""

import re
from collections.abc import Iterator

import pytest

from tests.e2e.console_client import Console
from tests.support import Process, free_port, gateway_env, start_process


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    data_dir = tmp_path_factory.mktemp("fresh")
    port = free_port()
    env = gateway_env(data_dir, None)
    for name in ("SWITCHGATE_ADMIN_EMAIL", "SWITCHGATE_ADMIN_PASSWORD"):
        env.pop(name, None)
    proc = start_process(
        ["serve", "--port", str(port)],
        env,
        data_dir / "gateway.log",
        f"http://127.0.0.1:{port}/healthz",
    )
    yield proc
    proc.stop()


def test_first_admin_password_is_in_the_log_once_and_the_sign_in_page_says_so(
    fresh: Process,
) -> None:
    found = re.findall(
        r"created the first admin account: e-mail (\S+), password (\S+)", fresh.log()
    )
    assert len(found) == 1
    email, password = found[0]
    assert email == "admin@localhost"

    console = Console(fresh.base_url)
    page = console.http.get("/console/signin").text
    assert 'id="admin-hint"' in page and "admin@localhost" in page and "server log" in page
    assert console.signin(email, password).status_code == 303
    assert console.ok("GET", "/api/me")["role"] == "admin"
    console.ok(
        "POST", "/api/me/password", {"current_password": password, "new_password": "n3w-pass-1"}
    )
    assert 'id="admin-hint"' not in Console(fresh.base_url).http.get("/console/signin").text


def test_without_a_mail_server_the_reset_link_is_not_offered(fresh: Process) -> None:
    http = Console(fresh.base_url).http
    signin = http.get("/console/signin").text
    assert 'id="forgot-link"' not in signin and 'id="no-mail-note"' in signin
    forgot = http.get("/console/forgot").text
    assert 'id="no-mail"' in forgot and 'name="email"' not in forgot


def test_the_signed_out_pages_answer_head_like_get(fresh: Process) -> None:
    http = Console(fresh.base_url).http
    for path in ("/console/signin", "/console/signup", "/console/forgot", "/console/reset"):
        assert http.head(path).status_code == 200, path
        assert http.get(path).status_code == 200, path
