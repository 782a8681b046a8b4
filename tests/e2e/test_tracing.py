"""OpenTelemetry tracing against an OTLP/HTTP collector double: one server span per
request whose trace id is the x-request-id, with children auth, route, one upstream span
per attempt (channel, status, retry reason) and billing; the upstream receives the same
id and a traceparent; a client's own traceparent is continued."""

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.conftest import Gateway, _start_gateway
from tests.otlp_collector import Collector, Span, start_collector
from tests.support import Process, clear_mock_requests, mock_requests, wait_for


@dataclass
class Traced:
    gateway: Gateway
    collector: Collector


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process) -> Iterator[Traced]:
    collector, server = start_collector()
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.url, "OTEL_BSP_SCHEDULE_DELAY": "50"}
    gateway = _start_gateway(tmp_path_factory, mock_upstream, None, env)
    yield Traced(gateway, collector)
    gateway.process.stop()
    server.shutdown()


def _trace(collector: Collector, trace_id: str, count: int) -> list[Span]:
    spans = wait_for(lambda: len(found := collector.by_trace(trace_id)) >= count and found, 10)
    assert spans, collector.by_trace(trace_id)
    return list(spans)


def _chat(gateway: Gateway, token: str, model: str, **headers: str) -> httpx.Response:
    return httpx.post(
        f"{gateway.url}/v1/chat/completions",
        headers={"authorization": f"Bearer {token}", **headers},
        json={"model": model, "messages": [{"role": "user", "content": "trace me"}]},
        timeout=30,
    )


def test_a_failover_is_one_trace_with_a_span_per_attempt(traced: Traced) -> None:
    gateway = traced.gateway
    _, token = gateway.new_user()
    clear_mock_requests(gateway.mock_url)
    reply = _chat(gateway, token, "fallback-model")
    assert reply.status_code == 200
    trace_id = reply.headers["x-request-id"]
    assert len(trace_id) == 32 and int(trace_id, 16)

    spans = _trace(traced.collector, trace_id, 6)
    roots = [s for s in spans if not s.parent_id]
    assert len(roots) == 1
    root = roots[0]
    assert root.kind == 2 and root.name == "chat.completions"  # SERVER
    assert root.service == "switchgate"
    assert root.attributes["http.response.status_code"] == 200
    assert root.attributes["switchgate.model"] == "fallback-model"
    assert root.attributes["switchgate.channel"] == "mock-fallback"
    assert root.attributes["switchgate.request_id"] == trace_id
    children = [s for s in spans if s is not root]
    assert all(s.parent_id == root.span_id for s in children)
    assert sorted(s.name for s in children) == ["auth", "billing", "route", "upstream", "upstream"]
    dead, alive = sorted(
        (s for s in children if s.name == "upstream"),
        key=lambda s: s.attributes["switchgate.channel"] != "dead-primary",
    )
    assert dead.attributes["switchgate.channel"] == "dead-primary"
    assert dead.attributes["switchgate.failure"] == "unreachable"
    assert "http.response.status_code" not in dead.attributes
    assert alive.attributes["switchgate.channel"] == "mock-fallback"
    assert alive.attributes["http.response.status_code"] == 200
    assert alive.attributes["switchgate.retry_reason"] == "unreachable"

    sent = [r for r in mock_requests(gateway.mock_url) if r["path"].endswith("/chat/completions")]
    assert len(sent) == 1
    assert sent[0]["headers"]["x-request-id"] == trace_id
    parent = sent[0]["headers"]["traceparent"]
    assert parent == f"00-{trace_id}-{alive.span_id}-01"  # the attempt's own span


def test_a_clients_traceparent_is_continued(traced: Traced) -> None:
    gateway = traced.gateway
    _, token = gateway.new_user()
    trace_id, caller_span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    reply = _chat(gateway, token, "gpt-mock", traceparent=f"00-{trace_id}-{caller_span}-01")
    assert reply.status_code == 200 and reply.headers["x-request-id"] == trace_id
    spans = _trace(traced.collector, trace_id, 5)
    root = next(s for s in spans if s.name == "chat.completions")
    assert root.parent_id == caller_span
    assert {s.name for s in spans} == {"chat.completions", "auth", "route", "upstream", "billing"}


def test_a_refused_call_is_traced_too(traced: Traced) -> None:
    reply = _chat(traced.gateway, "sk-wrong", "gpt-mock")
    assert reply.status_code == 401
    spans = _trace(traced.collector, reply.headers["x-request-id"], 3)
    root = next(s for s in spans if not s.parent_id)
    assert root.attributes["http.response.status_code"] == 401
    assert sorted(s.name for s in spans if s is not root) == ["auth", "billing"]
    assert "sk-wrong" not in str([s.attributes for s in spans])
