"""The console's catalogue page and API: an admin picks catalogue models and a channel and
imports them with their prices in one step, in a real browser; users then see the model."""

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from switchgate.catalogue.entries import shipped_catalogue
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Gateway, _start_gateway, console_env
from tests.e2e.browser import off_loop, screenshot, sign_in
from tests.e2e.console_client import Console, verified_user
from tests.mailbox import SmtpServer
from tests.support import Process, wait_for


@pytest.fixture(scope="module")
def catalogue_gateway(
    tmp_path_factory: pytest.TempPathFactory,
    mock_upstream: Process,
    smtp_server: SmtpServer,
    fake_oauth: Process,
) -> Iterator[Gateway]:
    gw = _start_gateway(tmp_path_factory, mock_upstream, None, console_env(smtp_server, fake_oauth))
    yield gw
    gw.process.stop()


def test_catalogue_api_lists_imports_and_refuses_clearly(catalogue_gateway: Gateway) -> None:
    admin = Console(catalogue_gateway)
    assert admin.signin(ADMIN_EMAIL, ADMIN_PASSWORD).status_code == 303
    listed = admin.ok("GET", "/api/catalogue?provider=openai&kind=tts")
    assert listed["as_of"] == shipped_catalogue().as_of
    assert {m["id"] for m in listed["items"]} == {"tts-1", "tts-1-hd"}
    assert listed["items"][0]["price"]["per_1m_characters"] in ("15", "30")
    assert "mock-openai" in {c["name"] for c in listed["channels"]}

    done = admin.ok(
        "POST", "/api/catalogue/import", {"models": ["gpt-4o-mini"], "channel": "mock-openai"}
    )
    assert done["channels"] == {"mock-openai": ["gpt-4o-mini"]} and done["priced"] == [
        "gpt-4o-mini"
    ]
    after = admin.ok("GET", "/api/catalogue?models=gpt-4o-mini")["items"][0]
    assert after["price_source"] == f"catalogue:{shipped_catalogue().as_of}"

    bad = admin.api("POST", "/api/catalogue/import", {"models": ["no-such-model"]})
    assert bad.status_code == 400 and "not in the catalogue" in bad.text
    bad = admin.api("GET", "/api/catalogue?provider=nope")
    assert bad.status_code == 400 and "unknown provider" in bad.text

    user = Console(catalogue_gateway)
    user.signin(verified_user(catalogue_gateway))
    assert user.api("GET", "/api/catalogue").status_code == 403
    refused = user.api("POST", "/api/catalogue/import", {"models": ["gpt-4o"]})
    assert refused.status_code == 403


@pytest.mark.browser
def test_admin_imports_a_model_from_the_catalogue_page(
    page: Any, catalogue_gateway: Gateway
) -> None:
    gw = catalogue_gateway
    sign_in(page, gw.url, ADMIN_EMAIL, ADMIN_PASSWORD)
    page.goto(f"{gw.url}/console/catalogue")
    page.select_option("#catalogue-provider", "google")
    page.locator("td code", has_text="gemini-2.5-pro").wait_for()
    page.fill("#catalogue-search", "gemini-2.5-flash-lite")
    page.locator("tr", has_text="gemini-2.5-pro").first.wait_for(state="hidden")
    page.check("input.pick[value='gemini-2.5-flash-lite']")
    page.select_option("#catalogue-channel", "mock-gemini")
    page.click("#catalogue-import")
    result = page.locator("#import-result")
    result.wait_for()
    assert "channel mock-gemini: 1 model(s) added" in result.inner_text()
    row = page.locator("tbody tr", has_text="gemini-2.5-flash-lite")
    row.locator(".badge", has_text="imported").wait_for()
    screenshot(page, "catalogue")

    _, token = off_loop(gw.new_user)
    sdk = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0)
    assert wait_for(lambda: "gemini-2.5-flash-lite" in {m.id for m in sdk.models.list()})
