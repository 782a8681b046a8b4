"""OpenTelemetry tracing against an OTLP/HTTP collector double: one server span per
request whose trace and span ids make the x-request-id (`<trace>-<span>`), with children
auth, route, one upstream span per attempt (channel, status, retry reason) and billing;
the upstream receives the same id and a traceparent; a client's own traceparent is
continued, and two calls sending the same one are two requests, both charged."""

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.conftest import Gateway, _start_gateway
from tests.e2e.billing_support import charges, failures, logs
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


def _ids(request_id: str) -> tuple[str, str]:
    """(trace id, server span id) of a request id."""
    trace_id, dash, span_id = request_id.partition("-")
    assert dash and len(trace_id) == 32 and len(span_id) == 16, request_id
    assert int(trace_id, 16) and int(span_id, 16)
    return trace_id, span_id


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
    request_id = reply.headers["x-request-id"]
    trace_id, span_id = _ids(request_id)

    spans = _trace(traced.collector, trace_id, 6)
    roots = [s for s in spans if not s.parent_id]
    assert len(roots) == 1
    root = roots[0]
    assert root.span_id == span_id
    assert root.kind == 2 and root.name == "chat.completions"  # SERVER
    assert root.service == "switchgate"
    assert root.attributes["http.response.status_code"] == 200
    assert root.attributes["switchgate.model"] == "fallback-model"
    assert root.attributes["switchgate.channel"] == "mock-fallback"
    assert root.attributes["switchgate.request_id"] == request_id
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
    assert sent[0]["headers"]["x-request-id"] == request_id
    parent = sent[0]["headers"]["traceparent"]
    assert parent == f"00-{trace_id}-{alive.span_id}-01"  # the attempt's own span


def test_a_clients_traceparent_is_continued_and_each_call_is_charged(traced: Traced) -> None:
    """A client sending the same traceparent on every call: each call is a child of the
    client's span in the client's trace, has its own request id, and is charged."""
    gateway = traced.gateway
    email, token = gateway.new_user()
    trace_id, caller_span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    header = f"00-{trace_id}-{caller_span}-01"
    replies = [_chat(gateway, token, "gpt-mock", traceparent=header) for _ in range(2)]
    assert [r.status_code for r in replies] == [200, 200]
    request_ids = [r.headers["x-request-id"] for r in replies]
    assert request_ids[0] != request_ids[1]
    assert [_ids(r)[0] for r in request_ids] == [trace_id, trace_id]
    spans = _trace(traced.collector, trace_id, 10)
    roots = [s for s in spans if s.name == "chat.completions"]
    assert sorted(s.span_id for s in roots) == sorted(_ids(r)[1] for r in request_ids)
    assert all(s.parent_id == caller_span for s in roots)
    assert {s.name for s in spans} == {"chat.completions", "auth", "route", "upstream", "billing"}
    # Both calls are charged, each under its own request id, and nothing failed.
    assert wait_for(lambda: charges(gateway, email)[0] == 2, 10), charges(gateway, email)
    assert sorted(row.request_id for row in logs(gateway, email)) == sorted(request_ids)
    assert not [f for f in failures(gateway) if f.request_id in request_ids]


def test_a_refused_call_is_traced_too(traced: Traced) -> None:
    reply = _chat(traced.gateway, "sk-wrong", "gpt-mock")
    assert reply.status_code == 401
    spans = _trace(traced.collector, _ids(reply.headers["x-request-id"])[0], 3)
    root = next(s for s in spans if not s.parent_id)
    assert root.attributes["http.response.status_code"] == 401
    assert sorted(s.name for s in spans if s is not root) == ["auth", "billing"]
    assert "sk-wrong" not in str([s.attributes for s in spans])
