"""A steady streaming load while the primary upstream is killed and restarted (issue 14):
no request hangs past its limit, every stream ends complete or with a clean error event,
the primary takes traffic again soon after it recovers (within the longest cool-down),
and the ledger matches the balance."""

import threading
import time

import openai
import pytest

from tests.e2e.routing_support import lanes_toml, start_gateway, start_upstream
from tests.support import free_port, http_json

LIMIT = 2.0  # the channels' stream first-byte and idle limits in this test
MAX_COOLDOWN = 4.0  # SWITCHGATE_BREAKER_MAX_SECONDS here


def test_primary_killed_and_restarted_under_streaming_load(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    tmp = tmp_path_factory.mktemp("outage")
    port = free_port()
    primary = start_upstream(tmp, port)
    fallback = start_upstream(tmp)
    gw = None
    try:
        for upstream in (primary, fallback):
            http_json("POST", f"{upstream.url}/_mock/config", {"chunk_interval_ms": 20})
        gw = start_gateway(
            tmp_path_factory.mktemp("outage-gw"),
            lanes_toml(primary.url, fallback.url, {"load": []}),
            {"SWITCHGATE_BREAKER_MAX_SECONDS": str(MAX_COOLDOWN)},
        )
        email, token = gw.new_user(balance_usd=20)
        client = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0, timeout=30)
        results: list[tuple[float, float, str]] = []  # (started, seconds, "ok" | "error")
        lock = threading.Lock()
        stop = threading.Event()

        def worker() -> None:
            while not stop.is_set():
                started = time.monotonic()
                outcome = "ok"
                try:
                    text = ""
                    for chunk in client.chat.completions.create(
                        model="load-gpt",
                        messages=[{"role": "user", "content": "hello there"}],
                        stream=True,
                    ):
                        if chunk.choices:
                            text += chunk.choices[0].delta.content or ""
                    assert text
                except openai.APIError:
                    outcome = "error"  # a stream cut by the kill: a clean error event
                with lock:
                    results.append((started, time.monotonic() - started, outcome))

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for thread in threads:
            thread.start()
        time.sleep(2.0)
        primary.process.proc.kill()  # no goodbye: connections reset mid-stream
        primary.process.proc.wait()
        killed = time.monotonic()
        time.sleep(4.0)
        primary = start_upstream(tmp, port)
        http_json("POST", f"{primary.url}/_mock/config", {"chunk_interval_ms": 20})
        recovered = time.monotonic()
        back = None
        while time.monotonic() - recovered < MAX_COOLDOWN + 6:
            if primary.count("load-gpt") > 0:
                back = time.monotonic() - recovered
                break
            time.sleep(0.2)
        time.sleep(1.0)
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
        assert back is not None, "the primary never took traffic again"
        assert back <= MAX_COOLDOWN + 2, back
        durations = [seconds for _, seconds, _ in results]
        # a stream is at most: a first-byte wait on the dead primary + the fallback's answer
        assert max(durations) < 2 * LIMIT + 3, max(durations)
        during = [r for r in results if killed <= r[0] < recovered]
        assert during and all(r[2] == "ok" for r in during), "during the outage: the fallback"
        assert sum(1 for r in results if r[2] == "ok") > 20
        assert gw.balance(email) < 20 * 10**12  # charged; balance() checks the ledger
    finally:
        if gw is not None:
            gw.process.stop()
        primary.process.stop()
        fallback.process.stop()
