"""/metrics after a mixed load of known composition: requests by model, channel, dialect
and status; failovers; upstream and gateway 429s; streams and whole answers; tokens and
spend; the sampled gauges; with one worker and with two (multi-process mode); and who
may read it (token, separate address, loopback). The load and its composition are in
tests/e2e/mixed_load.py, shared with the admin dashboard's browser test."""

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import openai
import pytest

from switchgate.money import UNITS_PER_USD
from tests.conftest import Gateway, _start_gateway
from tests.e2e.mixed_load import (
    BALANCE_USD,
    REQUESTS,
    TOTAL,
    Samples,
    mixed_load,
    scrape,
    value,
)
from tests.support import Process, free_port, http_json, start_process, wait_for


@pytest.fixture(scope="module")
def own_gateway(
    tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process
) -> Iterator[Gateway]:
    gateway = _start_gateway(tmp_path_factory, mock_upstream, None)
    yield gateway
    gateway.process.stop()


def test_a_scrape_matches_a_mixed_load_exactly(own_gateway: Gateway) -> None:
    load = mixed_load(own_gateway)
    url = f"{own_gateway.url}/metrics"
    req = "switchgate_requests_total"
    samples = wait_for(lambda: (s := scrape(url)) and value(s, req) == TOTAL and s, timeout=10)
    assert samples, "\n".join(f"{sorted(ls)} {v}" for (n, ls), v in scrape(url).items() if n == req)
    for (model, channel, dialect, code), count in REQUESTS.items():
        got = value(samples, req, model=model, channel=channel, dialect=dialect, code=code)
        assert got == count, (model, channel, code, got)
    assert value(samples, req, status_class="2xx") == 12
    assert value(samples, req, status_class="4xx") == 5
    assert value(samples, req, endpoint="messages") == 1
    lat = "switchgate_request_duration_seconds_count"
    assert value(samples, lat, model="gpt-mock", channel="mock-openai") == 10
    ttft = "switchgate_time_to_first_token_seconds_count"
    assert value(samples, ttft, model="gpt-mock") == 2
    assert value(samples, ttft, model="claude-mock") == 1
    assert value(samples, ttft) == 3  # streams only

    att = "switchgate_upstream_attempts_total"
    assert value(samples, att, channel="dead-primary", result="unreachable") == 3
    assert value(samples, att, channel="mock-fallback", result="ok") == 3
    # a 429 with a short Retry-After is retried once on the same channel (not a failover)
    assert value(samples, att, channel="mock-openai", result="rate_limited") == 4
    assert value(samples, att, channel="mock-openai", result="ok") == 8  # incl. the rpm one
    assert value(samples, att, channel="mock-anthropic", result="ok") == 1
    assert value(samples, "switchgate_failovers_total", channel="dead-primary") == 3
    assert value(samples, "switchgate_failovers_total") == 3
    retries = "switchgate_upstream_retries_total"
    assert value(samples, retries, channel="dead-primary", reason="unreachable") == 3
    assert value(samples, retries, channel="mock-openai", reason="rate_limited") == 2
    assert value(samples, retries) == 5
    assert value(samples, "switchgate_rate_limit_rejections_total", limit="token_rpm") == 2

    assert value(samples, "switchgate_tokens_total", model="gpt-mock", kind="input") > 0
    assert value(samples, "switchgate_tokens_total", model="claude-mock", kind="output") > 0
    spent = BALANCE_USD * UNITS_PER_USD - own_gateway.balance(load.email)
    metered = value(samples, "switchgate_cost_units_total")
    limited_user_cost = metered - spent  # the rpm user's one call, same price as the others
    assert spent > 0 and 0 < limited_user_cost < spent / 5

    # sampled once a second: nothing in flight now; dead-primary's breaker is open
    def settled() -> Samples | None:
        s = scrape(url)
        quiet = all(
            value(s, name) == 0
            for name in (
                "switchgate_active_streams",
                "switchgate_pending_holds",
                "switchgate_batch_queue_depth",
            )
        )
        opened = value(s, "switchgate_channel_state", channel="dead-primary", state="open") == 1
        return s if quiet and opened else None

    samples = wait_for(settled, timeout=5)
    assert samples, scrape(url)
    assert value(samples, "switchgate_channel_cooldown_seconds", channel="dead-primary") > 1
    assert value(samples, "switchgate_channel_state", channel="mock-openai", state="closed") == 1
    assert value(samples, "switchgate_batch_flush_duration_seconds_count") >= 1
    assert value(samples, "process_resident_memory_bytes") > 10_000_000


def test_two_workers_sum_up_in_every_scrape(
    tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process
) -> None:
    gateway = _start_gateway(tmp_path_factory, mock_upstream, None)
    gateway.process.stop()  # the same data directory, now served by two workers
    shared = gateway.data_dir / "prometheus"
    gateway = _start_gateway_workers(gateway, mock_upstream, shared)
    try:
        _, token = gateway.new_user()

        def call(i: int) -> None:  # a client each: new connections land on either worker
            with openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=token, max_retries=0) as oa:
                oa.chat.completions.create(
                    model="gpt-mock", messages=[{"role": "user", "content": f"n{i}"}]
                )

        sent = 0
        served_by: set[str] = set()
        while len(served_by) < 2 and sent < 320:  # until the kernel used both workers
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(call, range(sent, sent + 32)))
            sent += 32
            served_by = {f.stem.split("_")[-1] for f in shared.glob("counter_*.db")}
        assert len(served_by) == 2, "both workers should have served requests"
        url = f"{gateway.url}/metrics"
        for _ in range(8):  # whichever worker answers, the totals are the same
            s = scrape(url)
            assert value(s, "switchgate_requests_total", model="gpt-mock") == sent
            assert value(s, "switchgate_request_duration_seconds_count", model="gpt-mock") == sent
    finally:
        gateway.process.stop()


def _start_gateway_workers(first: Gateway, mock: Process, shared: Path) -> Gateway:
    port = free_port()
    env = {**first.env, "PROMETHEUS_MULTIPROC_DIR": str(shared)}
    proc = start_process(
        ["serve", "--port", str(port), "--workers", "2"],
        env,
        first.data_dir / "gateway-2w.log",
        f"http://127.0.0.1:{port}/healthz",
    )
    return Gateway(proc, mock.base_url, first.data_dir, None)


def test_metrics_need_the_token_when_one_is_set(
    tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process
) -> None:
    gateway = _start_gateway(
        tmp_path_factory, mock_upstream, None, {"SWITCHGATE_METRICS_TOKEN": "scrape-secret"}
    )
    try:
        status, _ = http_json("GET", f"{gateway.url}/metrics")
        assert status == 403
        status, _ = http_json(
            "GET", f"{gateway.url}/metrics", headers={"authorization": "Bearer wrong"}
        )
        assert status == 403
        ok = scrape(f"{gateway.url}/metrics", {"authorization": "Bearer scrape-secret"})
        assert value(ok, "process_resident_memory_bytes") > 0
    finally:
        gateway.process.stop()


def test_metrics_on_a_separate_address_only(
    tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process
) -> None:
    port = free_port()
    gateway = _start_gateway(
        tmp_path_factory,
        mock_upstream,
        None,
        {"SWITCHGATE_METRICS_ADDRESS": f"127.0.0.1:{port}"},
    )
    try:
        status, _ = http_json("GET", f"{gateway.url}/metrics")
        assert status == 404
        samples = scrape(f"http://127.0.0.1:{port}/metrics")
        assert value(samples, "process_resident_memory_bytes") > 0
        status, _ = http_json("GET", f"http://127.0.0.1:{port}/other")
        assert status == 404
    finally:
        gateway.process.stop()
