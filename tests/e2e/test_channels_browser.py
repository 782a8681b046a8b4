"""The console's channel list in a real browser: the Test button on a broken channel shows
the diagnosis, a rejected key can be disabled from there, and the last error is listed."""

from typing import Any

import pytest

from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Gateway
from tests.e2e.browser import sign_in

pytestmark = pytest.mark.browser


def test_the_test_button_diagnoses_broken_channels(page: Any, gateway: Gateway) -> None:
    sign_in(page, gateway.url, ADMIN_EMAIL, ADMIN_PASSWORD)
    page.goto(f"{gateway.url}/console/channel")
    dead = page.locator("tbody tr", has_text="dead-primary")
    dead.get_by_role("button", name="Test").click()
    dead.locator(".test-diagnosis", has_text="unreachable").wait_for()
    # the list refreshes its health and last-error cells by itself (every 5 s)
    dead.locator(".last-error", has_text="unreachable").wait_for(timeout=12_000)
    assert dead.locator(".live-health").count() == 1

    form = page.locator("#channel-form")
    form.locator("input[name=name]").fill("wrong-key-channel")
    form.locator("input[name=base_url]").fill(f"{gateway.mock_url}/v1")
    form.locator("input[name=api_key]").fill("sk-this-is-not-the-key")
    form.locator("textarea[name=models]").fill("gpt-mock")
    form.locator("button[type=submit]").click()
    row = page.locator("tbody tr", has_text="wrong-key-channel")
    row.get_by_role("button", name="Test").click()
    row.locator(".test-diagnosis", has_text="rejected the API key").wait_for()
    assert "HTTP 401" in row.locator(".test-result").inner_text()
    assert "sk-this-is-not-the-key" not in page.content()
    row.get_by_role("button", name="Disable this key").click()
    row = page.locator("tbody tr", has_text="wrong-key-channel")
    row.get_by_role("button", name="Enable").wait_for()  # the list was reloaded: disabled
    assert "rejected the API key" in row.locator(".last-error").inner_text()
