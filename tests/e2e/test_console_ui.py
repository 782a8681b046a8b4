"""The console as people meet it (headless Chromium): every page at phone width (390 px)
without sideways scrolling and free of serious / moderate axe-core findings; the admin
dashboard's charts, checklist and per-user ranking; Markdown replies that never run HTML;
the cost of image, speech and stopped replies; a stopped request that reads "stopped",
not an error; request details in the log; and an image model's price surviving an edit
in the Models page, then billed."""

import re
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from switchgate.console.pages import PAGES
from switchgate.money import UNITS_PER_USD
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Gateway
from tests.e2e.a11y import PHONE, axe_findings, axe_source, horizontal_overflow
from tests.e2e.browser import off_loop, screenshot, sign_in
from tests.e2e.console_client import PASSWORD, own_gateway, verified_user
from tests.e2e.dashboard_support import (
    CHARTS,
    REQUESTS_TOTAL,
    SPEND_UNITS,
    TTFT,
    chart_totals,
    check_charts,
    check_percentiles,
    check_range,
    exact_text,
    panel_rows,
    parse_ms,
    units,
)
from tests.e2e.media_helpers import log_rows, usd
from tests.e2e.mixed_load import BALANCE_USD, REQUESTS, TOTAL, mixed_load, scrape, value
from tests.support import Process, wait_for

pytestmark = pytest.mark.browser

USER_PAGES = tuple(p.slug for p in PAGES if not p.admin)
ADMIN_PAGES = tuple(p.slug for p in PAGES if p.admin)


def settle(page: Any, url: str) -> None:
    page.goto(url, wait_until="networkidle")
    page.wait_for_function(
        "() => !document.querySelector('#content') ||"
        " !document.querySelector('#content').textContent.includes('Loading…')"
    )
    page.wait_for_timeout(150)


def check_page(page: Any, url: str, axe: str, problems: list[str]) -> None:
    settle(page, url)
    wider = horizontal_overflow(page)
    if wider > 0:
        problems.append(f"{url}: {wider} px wider than the screen")
    problems.extend(f"{url}: {finding}" for finding in axe_findings(page, axe))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process) -> Iterator[Gateway]:
    gateway = own_gateway(tmp_path_factory, mock_upstream)
    yield gateway
    gateway.process.stop()


@pytest.fixture
def phone(browser: Any) -> Any:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


def test_every_page_fits_a_phone_and_passes_axe(phone: Any, gateway: Gateway) -> None:
    axe = axe_source()
    problems: list[str] = []
    for path in ("signin", "signup", "forgot", "pricing"):
        check_page(phone, f"{gateway.url}/console/{path}", axe, problems)
    email = verified_user(gateway, balance_usd=5)
    sign_in(phone, gateway.url, email, PASSWORD)
    for slug in USER_PAGES:
        check_page(phone, f"{gateway.url}/console/{slug}".rstrip("/"), axe, problems)
        if slug == "playground":  # the composer is on the first screen
            box = phone.locator("#prompt").bounding_box()
            assert box is not None and box["y"] + box["height"] <= PHONE["height"], box
        if slug in ("", "log", "models", "playground"):
            screenshot(phone, f"phone-{slug or 'dashboard'}")
    phone.context.clear_cookies()
    sign_in(phone, gateway.url, ADMIN_EMAIL, ADMIN_PASSWORD)
    for slug in ("", *ADMIN_PAGES):
        check_page(phone, f"{gateway.url}/console/{slug}".rstrip("/"), axe, problems)
    assert problems == [], "\n".join(problems)


def test_every_page_passes_axe_at_desktop_width(page: Any, gateway: Gateway) -> None:
    axe = axe_source()
    problems: list[str] = []
    check_page(page, f"{gateway.url}/console/pricing", axe, problems)
    sign_in(page, gateway.url, ADMIN_EMAIL, ADMIN_PASSWORD)
    for slug in (*USER_PAGES, *ADMIN_PAGES):
        check_page(page, f"{gateway.url}/console/{slug}".rstrip("/"), axe, problems)
    assert problems == [], "\n".join(problems)
    # The skip link is the first keyboard stop and moves the focus to the content.
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.className") == "skip"
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.id") == "content"


def test_admin_dashboard_shows_the_whole_site(page: Any, site: Gateway) -> None:
    """After the mixed load of tests/e2e/mixed_load.py (failovers, upstream and gateway 429s,
    an unknown key, streams and whole answers) the admin dashboard draws its charts, and
    what it shows equals the load's composition and a /metrics scrape: requests, errors
    and spend overall, per model, per channel and per user (the ranking), the charts'
    totals, and p50 / p95 consistent with the scraped histograms."""
    gateway = site
    load = off_loop(mixed_load, gateway)
    url = f"{gateway.url}/metrics"
    scraped = wait_for(lambda: (s := scrape(url)) and value(s, REQUESTS_TOTAL) == TOTAL and s)
    assert scraped, "the scrape never showed the whole load"
    # The dashboard counts what the request log has: requests of known keys. The three
    # refused before that (unknown key, the gateway's rpm limit) are only in /metrics.
    admitted = {k: n for k, n in REQUESTS.items() if k[0] != "none"}
    refused = TOTAL - sum(admitted.values())
    assert value(scraped, REQUESTS_TOTAL, model="none", channel="none") == refused == 3
    spent = {e: BALANCE_USD * UNITS_PER_USD - off_loop(gateway.balance, e) for e in load.emails}

    sign_in(page, gateway.url, ADMIN_EMAIL, ADMIN_PASSWORD)
    expected_requests = str(sum(admitted.values()))

    def shown() -> bool:  # the batch writer may still be writing the last rows
        settle(page, f"{gateway.url}/console")
        page.locator("#site-requests .value").wait_for()
        return page.inner_text("#site-requests .value") == expected_requests

    assert wait_for(shown, timeout=15, interval=0.5), page.inner_text("#site-requests")
    errors = sum(n for (_m, _c, _d, code), n in admitted.items() if int(code) >= 400)
    assert page.inner_text("#site-errors .value") == str(errors) == "2"
    total_spend = units(exact_text(page.locator("#site-spend .value")))
    assert total_spend == value(scraped, SPEND_UNITS) == sum(spent.values()) > 0

    # Per model and per channel: requests, errors and spend as composed and as scraped.
    for panel_title, key, label in (("Per model", 0, "model"), ("Per channel", 1, "channel")):
        rows = panel_rows(page, panel_title)
        names = {k[key] for k in admitted}
        assert sorted(rows) == sorted(names), (panel_title, rows)
        for name in names:
            row = rows[name]
            sent = {k: n for k, n in admitted.items() if k[key] == name}
            assert int(row[1]) == sum(sent.values()), (name, row)
            assert int(row[1]) == value(scraped, REQUESTS_TOTAL, **{label: name})
            assert int(row[2]) == sum(n for k, n in sent.items() if int(k[3]) >= 400)
            assert units(row[3]) == value(scraped, SPEND_UNITS, **{label: name}) > 0
            check_percentiles(scraped, row, label, name)

    # The per-user spend ranking: both users of the load, biggest spender first.
    ranking = panel_rows(page, "Top users by spend", ordered=True)
    assert [r[0] for r in ranking.values()] == [load.email, load.limited_email]
    assert [units(r[4]) for r in ranking.values()] == [spent[load.email], spent[load.limited_email]]
    assert [int(r[1]) for r in ranking.values()] == [13, 1]
    assert [int(r[2]) for r in ranking.values()] == [2, 0]
    tokens_in = sum(int(r[3].split(" / ")[0].replace(",", "")) for r in ranking.values())
    tokens_out = sum(int(r[3].split(" / ")[1].replace(",", "")) for r in ranking.values())
    scraped_in = value(scraped, "switchgate_tokens_total", kind="input")
    assert tokens_in == scraped_in + value(scraped, "switchgate_tokens_total", kind="cached")
    assert tokens_out == value(scraped, "switchgate_tokens_total", kind="output") > 0
    # Time to first token: the three streams, as /metrics counts them.
    ttft = page.inner_text("#site-ttft .value")
    assert "—" not in ttft and "—" not in page.inner_text("#site-latency .value")
    check_range(scraped, TTFT, 0.5, parse_ms(ttft.split(" / ")[0]))
    check_range(scraped, TTFT, 0.95, parse_ms(ttft.split(" / ")[1]))

    # The charts are drawn (uPlot canvases, the lines in their colours) with those totals.
    check_charts(page, scraped, int(expected_requests), errors, total_spend)
    assert axe_findings(page, axe_source()) == []  # with every chart, caption and table drawn
    assert horizontal_overflow(page) == 0
    screenshot(page, "dashboard-admin")

    # One model's, then one channel's slice: the cards and charts show only its requests.
    for picker, key, label in (("#filter-model", 0, "model"), ("#filter-channel", 1, "channel")):
        for name in sorted({k[key] for k in admitted}):
            page.select_option("#filter-model", "")
            page.select_option("#filter-channel", "")
            page.select_option(picker, label=name)
            page.locator("#site-title", has_text=f"{label} {name}").wait_for()
            requests = value(scraped, REQUESTS_TOTAL, **{label: name})
            assert page.inner_text("#site-requests .value") == str(int(requests)), name
            sent = sum(n for k, n in admitted.items() if k[key] == name and int(k[3]) >= 400)
            assert page.inner_text("#site-errors .value") == str(sent), name
            shown = units(exact_text(page.locator("#site-spend .value")))
            assert shown == value(scraped, SPEND_UNITS, **{label: name}), name
            caption = chart_totals(page.locator("#site figure.chart").first)
            assert caption == {"Requests": requests, "Errors": sent, "Stopped": 0}, name
    page.select_option("#filter-channel", "")
    page.select_option("#filter-model", "")
    page.locator("#site-title", has_text=re.compile("^Whole site$")).wait_for()
    page.select_option("#range", "90d")
    page.locator("#site-requests .value").wait_for()
    assert page.inner_text("#site-requests .value") == expected_requests
    assert page.locator("#site .chart canvas").count() == len(CHARTS)
    assert page.locator("#site-scope").count() == 1
    page.set_viewport_size(PHONE)  # charts, captions, pickers and tables at phone width
    page.wait_for_timeout(300)
    assert horizontal_overflow(page) == 0


def test_playground_renders_markdown_safely_and_shows_costs(page: Any, gateway: Gateway) -> None:
    email = verified_user(gateway, balance_usd=5)
    sign_in(page, gateway.url, email, PASSWORD)
    settle(page, f"{gateway.url}/console/playground")
    first = page.eval_on_selector("#model", "s => s.value")
    kinds = {m["model"]: m["kind"] for m in page.evaluate(
        "() => fetch('/api/models', {headers: {'x-csrf-token': document.querySelector("
        "'meta[name=csrf-token]').content}}).then(r => r.json()).then(d => d.items)"
    )}  # fmt: skip
    assert kinds[first] == "chat", first
    page.select_option("#model", "gpt-mock")
    reply = (
        "# Title\n\nSome **bold** and `code` <img src=x onerror=window.pwned=1>\n\n"
        "```python\nprint(1 < 2)\n```\n\n- one\n- two\n\n[ok](https://example.com) "
        "[bad](javascript:window.pwned=2)"
    )
    page.fill("#prompt", f"[[mock:text={reply}]]")
    page.click("#send")
    page.locator(".reply-meta .charge").wait_for()
    answer = page.locator(".msg.assistant .md").last
    assert answer.locator("strong", has_text="bold").count() == 1
    assert answer.locator("pre code.language-python", has_text="print(1 < 2)").count() == 1
    assert answer.locator("li").count() == 2
    assert answer.locator("a[href='https://example.com']").count() == 1
    assert answer.locator("img").count() == 0 and answer.locator("a[href^=javascript]").count() == 0
    assert "<img src=x" in answer.inner_text()
    assert page.evaluate("() => window.pwned") is None
    meta = page.inner_text(".reply-meta")
    assert re.search(r"\d+ in · \d+ out tokens · \$0\.\d{2,6} · ", meta), meta

    page.fill("#prompt", "Long one [[mock:chunks=40]] [[mock:interval=200]]")
    page.click("#send")
    page.wait_for_function("() => document.getElementById('reply-live')?.textContent")
    page.click("#stop")
    stopped = page.locator(".msg.assistant .meta", has_text="stopped").last
    stopped.locator(".charge").wait_for()
    assert re.fullmatch(r"stopped · \$\d+\.\d{2,6}", stopped.inner_text()), stopped.inner_text()

    options = page.eval_on_selector_all("#model option", "els => els.map(e => e.value)")
    for model, element in (("dall-mock", "img"), ("tts-mock", "audio")):
        assert model in options
        page.select_option("#model", model)
        page.fill("#prompt", "a red square")
        page.click("#send")
        page.locator(f".msg.assistant {element}").last.wait_for(state="attached")
        page.locator(".msg.assistant", has=page.locator(element)).last.locator(
            ".reply-meta .charge"
        ).wait_for()
    image_cost = page.locator(".msg.assistant", has=page.locator("img")).last
    assert "$0.04" in image_cost.locator(".charge").inner_text()


def test_a_stopped_request_reads_stopped_and_the_log_shows_details(
    page: Any, gateway: Gateway
) -> None:
    email = verified_user(gateway, balance_usd=5)
    sign_in(page, gateway.url, email, PASSWORD)
    settle(page, f"{gateway.url}/console/playground")
    page.select_option("#model", "gpt-mock")
    page.fill("#prompt", "Story [[mock:chunks=40]] [[mock:interval=200]]")
    page.click("#send")
    page.wait_for_function("() => document.getElementById('reply-live')?.textContent")
    page.click("#stop")
    page.locator(".msg.assistant .meta", has_text="stopped").wait_for()
    assert wait_for(lambda: any(r["status"] == 499 for r in off_loop(log_rows, gateway, email)))

    settle(page, f"{gateway.url}/console/log")
    row = page.locator("#results tbody tr").first
    assert row.locator(".badge", has_text="stopped").count() == 1
    settle(page, f"{gateway.url}/console")
    assert page.inner_text("#card-errors .value") == "0"

    settle(page, f"{gateway.url}/console/log")
    first_row = page.locator("#results tbody tr").first
    first_row.get_by_role("button", name=re.compile("Details")).click()
    detail = page.locator("#log-detail")
    detail.wait_for()
    text = detail.inner_text()
    for label in ("Dialect", "Tokens", "Cost", "Time to first token", "Latency"):
        assert label in text, text
    assert "openai" in text and "stopped" in text
    screenshot(page, "log-detail")


def test_editing_an_image_models_price_keeps_the_per_image_price(
    page: Any, gateway: Gateway
) -> None:
    sign_in(page, gateway.url, ADMIN_EMAIL, ADMIN_PASSWORD)
    settle(page, f"{gateway.url}/console/models")
    row = page.locator("tbody tr", has=page.locator("b", has_text=re.compile("^dall-mock$")))
    assert "$0.04 per image" in row.inner_text()
    row.get_by_role("button", name="Edit the price of dall-mock").click()
    dialog = page.locator("dialog")
    assert dialog.locator("input[name=per_image_usd]").input_value() == "0.04"
    assert "1024x1024:hd=0.08" in dialog.locator("textarea[name=image_prices]").input_value()
    dialog.get_by_role("button", name="Save").click()
    dialog.wait_for(state="detached")
    page.wait_for_timeout(1500)
    settle(page, f"{gateway.url}/console/models")
    row = page.locator("tbody tr", has=page.locator("b", has_text=re.compile("^dall-mock$")))
    assert "$0.04 per image" in row.inner_text()
    assert "$0 / $0" not in page.inner_text("#content")

    email, token = off_loop(gateway.new_user)
    sdk = openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=token, max_retries=0)
    sdk.images.generate(model="dall-mock", prompt="x", size="1024x1024", quality="hd")
    rows = wait_for(lambda: off_loop(log_rows, gateway, email))
    assert rows and rows[0]["cost"] == usd("0.08")


def test_error_toasts_start_upper_case_and_models_are_picked_from_a_list(
    page: Any, gateway: Gateway
) -> None:
    email = verified_user(gateway, balance_usd=1)
    sign_in(page, gateway.url, email, PASSWORD)
    settle(page, f"{gateway.url}/console/topup")
    page.fill("#redeem-form input[name=code]", "rc-not-a-code")
    page.click("#redeem-form button[type=submit]")
    toast = page.locator(".toast.error").first
    toast.wait_for()
    text = toast.inner_text()
    assert text[:1].isupper(), text

    settle(page, f"{gateway.url}/console/token")
    form = page.locator("#create-token")
    form.locator("input[name=name]").fill("picked")
    picker = form.locator("fieldset.picker")
    if picker.locator(".picker-filter").count():
        picker.locator(".picker-filter").fill("claude")
        assert picker.locator("label.check:visible").count() >= 1
        assert picker.locator("label.check:visible", has_text="gpt-mock").count() == 0
    picker.get_by_label("claude-mock").check()
    assert "1 selected" in picker.inner_text()
    form.locator("button[type=submit]").click()
    page.locator("#new-key").wait_for()
    settle(page, f"{gateway.url}/console/token")
    assert "1 model(s)" in page.locator("tbody tr", has_text="picked").inner_text()
