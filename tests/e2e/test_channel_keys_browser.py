"""The channels page's Keys dialog in a real browser (headless Chromium), against a real
gateway and fake upstream: add a second key, see it disabled by the upstream's 401 with
the reason and the time, test it (still refused), re-enable it by hand, disable it and
have a passing Test enable it again, set its caps, remove a key; every action is in the
audit log, and no whole key ever reaches the page (its HTML) or the audit log. The
dialog is axe-core clean and fits a 390 px screen."""

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Gateway
from tests.e2e.a11y import PHONE, axe_findings, axe_source, horizontal_overflow
from tests.e2e.browser import off_loop, sign_in
from tests.e2e.routing_support import Upstream, start_gateway, start_upstream
from tests.support import http_json, wait_for

pytestmark = pytest.mark.browser

GOOD = "sk-good-key-first-1111"
SECOND = "sk-second-key-abcd9999"
THIRD = "sk-third-key-wxyz5555"
MODEL = "keys-ui-gpt"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Gateway, Upstream]]:
    upstream = start_upstream(tmp_path_factory.mktemp("keys-upstream"))
    http_json("POST", f"{upstream.url}/_mock/config", {"api_key": GOOD, "record": 200})
    config = (
        f'[[channels]]\nname = "keys-ui"\nkind = "openai"\nbase_url = "{upstream.url}/v1"\n'
        f'key = "{GOOD}"\nmodels = ["{MODEL}"]\n'
        f'[prices."{MODEL}"]\ninput = "1"\noutput = "2"\n'
    )
    env = {"SWITCHGATE_ADMIN_EMAIL": ADMIN_EMAIL, "SWITCHGATE_ADMIN_PASSWORD": ADMIN_PASSWORD}
    gateway = start_gateway(tmp_path_factory.mktemp("keys-gw"), config, env)
    try:
        yield gateway, upstream
    finally:
        gateway.process.stop()
        upstream.process.stop()


def ask(gateway: Gateway, token: str) -> str:
    sdk = openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=token, max_retries=0)
    reply = sdk.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}])
    return reply.choices[0].message.content or ""


def key_item(page: Any, hint: str) -> Any:
    return page.locator(".keys-dialog .key-item", has=page.locator(".key-hint", has_text=hint))


def open_keys(page: Any) -> Any:
    row = page.locator("tbody tr", has_text="keys-ui")
    row.get_by_role("button", name="Keys of keys-ui").click()
    dialog = page.locator(".keys-dialog")
    dialog.locator(".key-item").first.wait_for()
    return dialog


def test_keys_dialog_adds_shows_refused_reenables_and_never_shows_a_key(
    page: Any, site: tuple[Gateway, Upstream]
) -> None:
    gateway, upstream = site
    _, token = off_loop(gateway.new_user)
    _, admin_token = off_loop(lambda: gateway.new_user(0, True))
    sign_in(page, gateway.url, ADMIN_EMAIL, ADMIN_PASSWORD)
    page.goto(f"{gateway.url}/console/channel")
    row = page.locator("tbody tr", has_text="keys-ui")
    assert row.locator(".key-summary").inner_text().startswith("1 key")

    # add a second key (with caps) through the dialog
    dialog = open_keys(page)
    form = dialog.locator("form.key-add")
    form.locator("input[name=key]").fill(SECOND)
    form.locator("input[name=rpm]").fill("600")
    form.get_by_role("button", name="Add key").click()
    second = key_item(page, "…9999")
    second.wait_for()
    assert "600/min" in second.inner_text() and "#1" in second.inner_text()
    assert form.locator("input[name=key]").input_value() == ""
    dialog.get_by_role("button", name="Close").click()

    # the upstream refuses the second key: the call still answers (the first key), and
    # the second key is disabled with the reason and the time
    for _ in range(3):
        assert ask(gateway, token)
    assert upstream.keys_used(MODEL).count("invalid") == 1
    page.reload()
    row = page.locator("tbody tr", has_text="keys-ui")
    row.locator(".key-summary", has_text="1 disabled").wait_for()
    dialog = open_keys(page)
    second = key_item(page, "…9999")
    second.locator(".badge", has_text="disabled").wait_for()
    assert "HTTP 401" in second.locator(".key-reason").inner_text()
    assert "authentication failed" in second.locator(".key-reason").inner_text()
    assert "since" in second.locator(".key-when").inner_text()

    # accessible and usable on a phone, with the dialog open and a disabled key shown
    axe = axe_source()
    assert axe_findings(page, axe) == []
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(150)
    assert horizontal_overflow(page) == 0
    box = dialog.bounding_box()
    assert box is not None and box["width"] <= PHONE["width"], box
    assert axe_findings(page, axe) == []
    page.set_viewport_size({"width": 1280, "height": 800})

    # Test with the key still refused: it stays disabled, the result says why
    second.get_by_role("button", name="Test").click()
    dialog.locator(".key-test-result", has_text="HTTP 401").wait_for()
    assert key_item(page, "…9999").get_attribute("data-status") == "disabled"

    # re-enable by hand
    key_item(page, "…9999").get_by_role("button", name="Enable").click()
    key_item(page, "…9999").locator(".badge", has_text="enabled").wait_for()
    assert key_item(page, "…9999").locator(".key-reason").count() == 0

    # disable by hand (the reason names the admin), then the upstream takes this key
    # only, and Test enables it again
    key_item(page, "…9999").get_by_role("button", name="Disable").click()
    key_item(page, "…9999").locator(".key-reason", has_text=f"disabled by {ADMIN_EMAIL}").wait_for()
    http_json("POST", f"{upstream.url}/_mock/config", {"api_key": SECOND})
    try:
        key_item(page, "…9999").get_by_role("button", name="Test").click()
        dialog.locator(".key-test-result", has_text="enabled again").wait_for()
        key_item(page, "…9999").locator(".badge", has_text="enabled").wait_for()
    finally:
        http_json("POST", f"{upstream.url}/_mock/config", {"api_key": GOOD})

    # caps by hand: max in flight 2, no rpm
    key_item(page, "…9999").get_by_role("button", name="Edit").click()
    edit = key_item(page, "…9999").locator("form.key-edit")
    edit.locator("input[name=max_concurrency]").fill("2")
    edit.locator("input[name=rpm]").fill("")
    edit.get_by_role("button", name="Save").click()
    key_item(page, "…9999").locator(".key-head", has_text="2 in flight").wait_for()
    assert "/min" not in key_item(page, "…9999").locator(".key-head").inner_text()

    # add a third key and remove it again
    form.locator("input[name=key]").fill(THIRD)
    form.get_by_role("button", name="Add key").click()
    key_item(page, "…5555").wait_for()
    page.once("dialog", lambda confirm: confirm.accept())
    key_item(page, "…5555").get_by_role("button", name="Remove").click()
    page.wait_for_function("() => !document.body.textContent.includes('…5555')")
    assert page.locator(".keys-dialog .key-item").count() == 2

    # no whole key anywhere in the page
    html = page.content()
    for key in (GOOD, SECOND, THIRD):
        assert key not in html
        assert key[:-4] not in html  # not even all but the last four characters

    # every key action is in the audit log, with the key masked
    status, audit = http_json(
        "GET",
        f"{gateway.url}/api/audit?limit=100",
        headers={"authorization": f"Bearer {admin_token}"},
    )
    assert status == 200, audit
    actions = [i["action"] for i in audit["items"]]
    for action in (
        "POST /api/channels/{id:int}/keys",
        "PATCH /api/channels/{id:int}/keys/{position:int}",
        "DELETE /api/channels/{id:int}/keys/{position:int}",
        "POST /api/channels/{id:int}/keys/{position:int}/status",
        "POST /api/channels/{id:int}/keys/{position:int}/test",
    ):
        assert action in actions, (action, actions)
    dumped = str(audit)
    assert all(key not in dumped for key in (GOOD, SECOND, THIRD))
    added = [i for i in audit["items"] if i["action"] == "POST /api/channels/{id:int}/keys"]
    assert len(added) == 2 and all('"key":"***"' in i["detail"] for i in added), added
    wait_for(lambda: ask(gateway, token) != "", timeout=5)  # the channel still serves
