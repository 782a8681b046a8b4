"""The console in a real browser (headless Chromium): sign-up with e-mail verification,
tokens and the SDK, the request log with costs, the streaming playground, an admin adding
a channel and a price, and GitHub / Google sign-in against the local fake provider.
The screenshots in docs/screenshots come from these tests (run with
SWITCHGATE_WRITE_SCREENSHOTS=1 to refresh them; otherwise they go to a scratch directory)."""

import re
from decimal import Decimal
from typing import Any

import httpx
import openai
import pytest

from switchgate.cli.ops import Ops
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Gateway
from tests.e2e.browser import off_loop, screenshot, sign_in
from tests.e2e.console_client import PASSWORD, verified_user
from tests.mailbox import SmtpServer
from tests.support import clear_mock_requests, mock_requests

pytestmark = pytest.mark.browser


def add_balance(gateway: Gateway, email: str, usd: int) -> None:
    async def job(ops: Ops) -> None:
        await ops.add_balance(email, usd * 10**12, "test", "test")

    off_loop(gateway.ops, job)


def test_sign_up_verify_create_token_call_and_see_the_cost(
    page: Any, gateway: Gateway, smtp_server: SmtpServer
) -> None:
    email = "new-person@example.com"
    page.goto(f"{gateway.url}/console/signup")
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    page.click("button[type=submit]")
    page.get_by_text("Check your inbox").wait_for()
    page.goto(f"{gateway.url}/console/signin")  # not verified yet: refused
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.get_by_text("Verify your e-mail address first").wait_for()

    page.goto(smtp_server.box.link(email, "Verify"))
    page.get_by_text("E-mail verified").wait_for()
    sign_in(page, gateway.url, email, PASSWORD)
    add_balance(gateway, email, 5)

    page.goto(f"{gateway.url}/console/token")
    page.fill("#create-token input[name=name]", "laptop")
    page.click("#create-token button[type=submit]")
    key = page.inner_text("#new-key").strip()
    assert key.startswith("sk-") and len(key) > 40
    assert gateway.url in page.inner_text("#example-code")
    screenshot(page, "token")

    sdk = openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=key, max_retries=0)
    reply = sdk.chat.completions.create(
        model="gpt-mock", messages=[{"role": "user", "content": "hello from the browser test"}]
    )
    assert reply.usage is not None
    cost = Decimal(reply.usage.prompt_tokens * 1 + reply.usage.completion_tokens * 2) / 10**6
    expected = f"${cost:.6f}"

    page.goto(f"{gateway.url}/console/log")
    row = page.locator("#results tbody tr", has_text="gpt-mock").first
    row.wait_for()
    assert row.locator("td.cost").inner_text() == expected
    assert "laptop" in row.inner_text()
    assert "null" not in page.inner_text("#results")
    screenshot(page, "log")
    page.goto(f"{gateway.url}/console")
    page.locator("#card-requests .value", has_text="1").wait_for()
    screenshot(page, "dashboard")


def test_playground_streams_the_reply_and_keeps_the_conversation(
    page: Any, gateway: Gateway
) -> None:
    email = verified_user(gateway, balance_usd=5)
    sign_in(page, gateway.url, email, PASSWORD)
    page.goto(f"{gateway.url}/console/playground")
    page.select_option("#model", "gpt-mock")
    page.fill("#system", "You are terse.")
    page.fill("#temperature", "0.3")
    page.fill("#max_tokens", "200")
    clear_mock_requests(gateway.mock_url)
    page.fill("#prompt", "Tell me a story [[mock:chunks=12]] [[mock:interval=150]]")
    page.click("#send")
    # Partial text shows up while the reply is still being generated.
    page.wait_for_function(
        "() => { const r = document.getElementById('reply-live');"
        " return r && r.textContent.length > 0; }"
    )
    partial = page.evaluate("document.getElementById('reply-live').textContent")
    page.locator(".reply-meta").wait_for()
    final = page.evaluate(
        "[...document.querySelectorAll('.msg.assistant')].pop().firstChild.textContent"
    )
    assert partial and len(partial) < len(final) and final.startswith(partial)
    meta = page.inner_text(".reply-meta")
    assert re.search(r"\d+ in · \d+ out tokens · \$0\.\d{6}", meta), meta
    screenshot(page, "playground")

    page.fill("#prompt", "And another? [[mock:chunks=40]] [[mock:interval=200]]")
    page.click("#send")
    page.wait_for_function("() => document.getElementById('reply-live')?.textContent")
    page.click("#stop")
    page.get_by_text("stopped").wait_for()
    sent = [r for r in mock_requests(gateway.mock_url) if r["path"].endswith("/chat/completions")]
    body = sent[-1]["json"]
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user"]
    assert body["stream"] is True and body["temperature"] == 0.3 and body["max_tokens"] == 200


def test_playground_shows_images_and_plays_speech_or_says_why_not(
    page: Any, gateway: Gateway
) -> None:
    email = verified_user(gateway, balance_usd=5)
    sign_in(page, gateway.url, email, PASSWORD)
    page.goto(f"{gateway.url}/console/playground")
    options = page.eval_on_selector_all("#model option", "els => els.map(e => e.value)")
    for model, path, element in (
        ("dall-mock", "/v1/images/generations", "img"),
        ("tts-mock", "/v1/audio/speech", "audio"),
    ):
        if model not in options:
            pytest.skip(f"{model} is not in this gateway's catalogue")
        probe = httpx.post(f"{gateway.url}{path}", json={}, headers={"authorization": "Bearer x"})
        page.select_option("#model", model)
        page.fill("#prompt", "a red square")
        page.click("#send")
        if probe.status_code == 404 and "nknown endpoint" in probe.text:
            page.locator(".msg.error", has_text="not available on this gateway yet").last.wait_for()
        else:
            page.locator(f".msg.assistant {element}").last.wait_for(state="attached")


def test_admin_adds_a_channel_and_a_price_and_users_see_the_model(
    page: Any, gateway: Gateway
) -> None:
    sign_in(page, gateway.url, ADMIN_EMAIL, ADMIN_PASSWORD)
    page.goto(f"{gateway.url}/console/channel")
    form = page.locator("#channel-form")
    form.locator("input[name=name]").fill("console-added")
    form.locator("select[name=kind]").select_option("openai")
    form.locator("input[name=base_url]").fill(f"{gateway.mock_url}/v1")
    form.locator("input[name=api_key]").fill("mock-key")
    form.locator("textarea[name=models]").fill("console-model")
    form.locator("button[type=submit]").click()
    row = page.locator("tbody tr", has_text="console-added")
    row.wait_for()
    assert "mock-key" not in page.content()
    row.get_by_role("button", name="Test").click()
    result = row.locator(".test-result")
    result.wait_for()
    assert "Hello from mock" in result.inner_text()
    screenshot(page, "channel")

    page.goto(f"{gateway.url}/console/models")
    price = page.locator("#price-form")
    price.locator("input[name=model]").fill("console-model")
    price.locator("input[name=input_per_1m]").fill("0.25")
    price.locator("input[name=output_per_1m]").fill("1.25")
    price.locator("button[type=submit]").click()
    page.locator("tbody tr", has_text="console-model").wait_for()

    _, token = off_loop(gateway.new_user)
    sdk = openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=token, max_retries=0)
    assert "console-model" in {m.id for m in sdk.models.list()}
    page.context.clear_cookies()
    user_email = verified_user(gateway)
    sign_in(page, gateway.url, user_email, PASSWORD)
    page.goto(f"{gateway.url}/console/models")
    row = page.locator("tbody tr", has_text="console-model")
    row.wait_for()
    assert "$0.25" in row.inner_text() and "$1.25" in row.inner_text()
    screenshot(page, "models")


@pytest.mark.parametrize("provider", ["github", "google"])
def test_sign_in_with_an_oauth_provider(page: Any, gateway: Gateway, provider: str) -> None:
    login = f"{provider}-person"
    page.goto(f"{gateway.url}/console/signin")
    if provider == "github":
        screenshot(page, "signin")
    page.click(f"#signin-{provider}")
    page.fill("#login", login)
    page.fill("#email", f"{login}@example.com")
    page.click("#authorize")
    page.wait_for_url(f"{gateway.url}/console")
    page.goto(f"{gateway.url}/console/account")
    page.locator("td", has_text=provider).first.wait_for()
    page.locator("#content", has_text=f"{login}@example.com").wait_for()
    # Signing in again with the same provider account lands in the same account.
    page.context.clear_cookies()
    page.goto(f"{gateway.url}/console/oauth/{provider}/start")
    page.fill("#login", login)
    page.fill("#email", "changed@example.com")
    page.click("#authorize")
    page.wait_for_url(f"{gateway.url}/console")
    page.goto(f"{gateway.url}/console/account")
    page.locator("#content", has_text=f"{login}@example.com").wait_for()
    assert "changed@example.com" not in page.inner_text("#content")


def test_link_github_to_a_password_account(page: Any, gateway: Gateway) -> None:
    email = verified_user(gateway)
    sign_in(page, gateway.url, email, PASSWORD)
    page.goto(f"{gateway.url}/console/account")
    page.click("#link-github")
    page.fill("#login", "linker")
    page.fill("#email", "linker-elsewhere@example.com")
    page.click("#authorize")
    page.wait_for_url(re.compile(r".*/console/account\?linked=github"))
    page.locator("td", has_text="github").first.wait_for()
    screenshot(page, "account")
    page.context.clear_cookies()
    page.goto(f"{gateway.url}/console/oauth/github/start")
    page.fill("#login", "linker")
    page.click("#authorize")
    page.wait_for_url(f"{gateway.url}/console")
    page.goto(f"{gateway.url}/console/account")
    page.locator("#content", has_text=email).wait_for()


def test_admin_pages_render(page: Any, gateway: Gateway) -> None:
    sign_in(page, gateway.url, ADMIN_EMAIL, ADMIN_PASSWORD)
    for slug, text in (
        ("user", ADMIN_EMAIL),
        ("redemption", "Generate codes"),
        ("setting", "SMTP host"),
        ("topup", "Redeem a code"),
    ):
        page.goto(f"{gateway.url}/console/{slug}")
        page.locator("#content", has_text=text).wait_for()
        if slug != "user":
            screenshot(page, slug)
    page.goto(f"{gateway.url}/console/redemption")
    page.fill("#generate-form input[name=amount_usd]", "2")
    page.click("#generate-form button[type=submit]")
    page.locator("#new-codes").wait_for()
    screenshot(page, "redemption")
