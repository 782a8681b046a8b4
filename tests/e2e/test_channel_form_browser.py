"""The channels page's form in a real browser (headless Chromium) against a real gateway:
the kind picker shows each kind's key format and prefills its default base URL (from the
registry, GET /api/channels kind_details); a bedrock channel with a region option and
time limits and a vertex channel are added from the form; editing one (its models) keeps
its options and time limits, shown again in the Edit dialog. The form and the dialog are
axe-core clean and fit a 390 px screen."""

import json
from pathlib import Path
from typing import Any

import pytest

from switchgate.cli.ops import Ops
from switchgate.providers.registry import provider_kinds
from switchgate.routing.channels import Channel, load_channels
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Gateway
from tests.e2e.a11y import PHONE, axe_findings, axe_source, horizontal_overflow
from tests.e2e.browser import (
    DOCS_SCREENSHOTS,
    SCRATCH_SCREENSHOTS,
    WRITE_DOCS_SCREENSHOTS,
    off_loop,
    sign_in,
)

pytestmark = pytest.mark.browser

AWS_KEY = "AKIAFORMTEST0000:form-secret-access-key-1234"
SERVICE_ACCOUNT = json.dumps(
    {"type": "service_account", "project_id": "form-project", "client_email": "a@b.iam"}
)


def screenshot_dir() -> Path:
    target = DOCS_SCREENSHOTS if WRITE_DOCS_SCREENSHOTS else SCRATCH_SCREENSHOTS
    target.mkdir(parents=True, exist_ok=True)
    return target


def stored(gateway: Gateway, name: str) -> Channel:
    async def job(ops: Ops) -> Channel:
        async with ops.db.connect() as conn:
            return next(c for c in await load_channels(conn, ops.box) if c.name == name)

    result: Channel = off_loop(gateway.ops, job)
    return result


def option_value(scope: Any, name: str) -> Any:
    return scope.locator(f".option-row[data-option='{name}'] input[name=option_value]")


def test_the_form_adds_bedrock_and_vertex_channels_and_an_edit_keeps_their_settings(
    page: Any, gateway: Gateway
) -> None:
    kinds = provider_kinds()
    axe = axe_source()
    sign_in(page, gateway.url, ADMIN_EMAIL, ADMIN_PASSWORD)
    page.goto(f"{gateway.url}/console/channel")
    form = page.locator("#channel-form")
    base_url = form.locator("input[name=base_url]")
    base_url.wait_for()
    assert base_url.input_value() == kinds["openai"].default_base_url  # the first kind's

    # bedrock: the key format, the default base URL and the region option are offered
    form.locator("select[name=kind]").select_option("bedrock")
    assert base_url.input_value() == kinds["bedrock"].default_base_url
    info = form.locator(".kind-info").inner_text()
    assert "ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]" in info
    key_placeholder = form.locator("input[name=api_key]").get_attribute("placeholder")
    assert "ACCESS_KEY_ID" in (key_placeholder or "")
    assert "region" in form.locator(".option-row[data-option=region] .option-hint").inner_text()
    assert "AWS region" in form.locator(".option-row[data-option=region]").inner_text()
    assert form.locator("input[name=timeout_connect]").get_attribute("placeholder") == "10"
    assert form.locator("select[name=responses]").is_hidden()  # bedrock has no /responses
    assert axe_findings(page, axe) == []

    form.locator("input[name=name]").fill("form-bedrock")
    form.locator("input[name=api_key]").fill(AWS_KEY)
    form.locator("textarea[name=models]").fill("anthropic.claude-3-haiku")
    option_value(form, "region").fill("eu-west-1")
    form.locator("input[name=timeout_connect]").fill("4")
    form.locator("input[name=timeout_total]").fill("200")
    form.locator("button[type=submit]").click()
    page.locator("tbody tr", has_text="form-bedrock").wait_for()

    # vertex: a user-typed base URL is kept when the kind changes; an emptied one prefilled
    form = page.locator("#channel-form")
    form.locator("input[name=base_url]").fill("https://proxy.example/vertex")
    form.locator("select[name=kind]").select_option("vertex")
    assert form.locator("input[name=base_url]").input_value() == "https://proxy.example/vertex"
    form.locator("input[name=base_url]").fill("")
    form.locator("select[name=kind]").select_option("cohere")
    form.locator("select[name=kind]").select_option("vertex")
    assert form.locator("input[name=base_url]").input_value() == kinds["vertex"].default_base_url
    assert "service account" in form.locator(".kind-info").inner_text()
    declared = form.locator(".option-row input[name=option_name]").evaluate_all(
        "els => els.map(e => e.value)"
    )
    assert declared == ["project", "location", "publisher", "embedding_task_type"]
    form.locator("input[name=name]").fill("form-vertex")
    form.locator("input[name=api_key]").fill(SERVICE_ACCOUNT)
    form.locator("textarea[name=models]").fill("gemini-2.5-flash")
    option_value(form, "location").fill("us-east5")
    form.get_by_role("button", name="Add option").click()
    form.locator(".option-row").last.locator("input[name=option_name]").fill("extra_flag")
    form.locator(".option-row").last.locator("input[name=option_value]").fill("on")
    form.locator("button[type=submit]").click()
    page.locator("tbody tr", has_text="form-vertex").wait_for()

    bedrock = stored(gateway, "form-bedrock")
    assert bedrock.kind == "bedrock" and bedrock.base_url == kinds["bedrock"].default_base_url
    assert bedrock.extra["region"] == "eu-west-1"
    assert bedrock.extra["timeouts"] == {"connect": 4.0, "total": 200.0}
    assert bedrock.api_key == AWS_KEY
    vertex = stored(gateway, "form-vertex")
    assert vertex.kind == "vertex" and vertex.base_url == kinds["vertex"].default_base_url
    assert vertex.extra["location"] == "us-east5" and vertex.extra["extra_flag"] == "on"
    assert "project" not in vertex.extra and "timeouts" not in vertex.extra
    positions = [k.position for k in bedrock.key_list()]
    row = page.locator("tbody tr", has_text="form-bedrock")
    assert "region=eu-west-1" in row.locator(".channel-options-summary").inner_text()
    assert "connect 4" in row.locator(".channel-timeouts-summary").inner_text()

    # edit the bedrock channel's models: its options and time limits stay
    row.get_by_role("button", name="Edit form-bedrock").click()
    dialog = page.locator("dialog.channel-dialog")
    assert option_value(dialog, "region").input_value() == "eu-west-1"
    assert dialog.locator("input[name=timeout_connect]").input_value() == "4"
    assert dialog.locator("input[name=timeout_idle]").input_value() == ""
    assert axe_findings(page, axe) == []
    dialog.screenshot(path=str(screenshot_dir() / "channel-edit.png"))
    dialog.locator("textarea[name=models]").fill("anthropic.claude-3-haiku, amazon.titan-embed")
    dialog.get_by_role("button", name="Save").click()
    dialog.wait_for(state="detached")
    edited = stored(gateway, "form-bedrock")
    assert edited.models == ("anthropic.claude-3-haiku", "amazon.titan-embed")
    assert edited.extra["region"] == "eu-west-1"
    assert edited.extra["timeouts"] == {"connect": 4.0, "total": 200.0}
    assert [k.position for k in edited.key_list()] == positions
    assert AWS_KEY not in page.content()

    # an emptied time limit and a removed option are gone after the next edit
    page.locator("tbody tr", has_text="form-vertex").get_by_role(
        "button", name="Edit form-vertex"
    ).click()
    dialog = page.locator("dialog.channel-dialog")
    assert option_value(dialog, "location").input_value() == "us-east5"
    dialog.get_by_role("button", name="Remove option extra_flag").click()
    dialog.locator("input[name=timeout_idle]").fill("7.5")
    dialog.get_by_role("button", name="Save").click()
    dialog.wait_for(state="detached")
    vertex = stored(gateway, "form-vertex")
    assert "extra_flag" not in vertex.extra and vertex.extra["location"] == "us-east5"
    assert vertex.extra["timeouts"] == {"idle": 7.5}


def test_the_form_and_the_edit_dialog_fit_a_phone(browser: Any, gateway: Gateway) -> None:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    context.set_default_timeout(15_000)
    phone = context.new_page()
    try:
        axe = axe_source()
        sign_in(phone, gateway.url, ADMIN_EMAIL, ADMIN_PASSWORD)
        phone.goto(f"{gateway.url}/console/channel")
        form = phone.locator("#channel-form")
        form.locator("select[name=kind]").select_option("vertex")
        form.get_by_role("button", name="Add option").click()
        assert horizontal_overflow(phone) == 0
        assert axe_findings(phone, axe) == []
        form.screenshot(path=str(screenshot_dir() / "phone-channel-form.png"))
        row = phone.locator("tbody tr", has_text="mock-openai-responses")
        row.get_by_role("button", name="Edit mock-openai-responses").click()
        dialog = phone.locator("dialog.channel-dialog")
        # an openai channel that serves /responses: the setting is shown and kept
        assert dialog.locator("select[name=responses]").input_value() == "true"
        box = dialog.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
        assert axe_findings(phone, axe) == []
        dialog.get_by_role("button", name="Save").click()
        dialog.wait_for(state="detached")
        assert stored(gateway, "mock-openai-responses").extra["responses"] is True
    finally:
        context.close()
