"""When tracing is on, W3C traceparent parsing, and request ids."""

import pytest

from switchgate.observability.tracing import (
    Tracing,
    configured,
    create_tracing,
    parse_traceparent,
    split_request_id,
)


def test_on_only_with_an_otlp_endpoint() -> None:
    assert not configured({})
    assert configured({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"})
    assert configured({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"})
    on = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}
    assert not configured({**on, "OTEL_SDK_DISABLED": "true"})
    assert not configured({**on, "OTEL_TRACES_EXPORTER": "none"})
    off = create_tracing({})
    assert not off.enabled and off.new_request_id({}).startswith("req_")
    assert off.upstream_headers() is None and isinstance(off, Tracing)


def test_traceparent() -> None:
    good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    assert parse_traceparent(good) == (
        0x4BF92F3577B34DA6A3CE929D0E0E4736,
        0x00F067AA0BA902B7,
        1,
    )
    for bad in (None, "", "00-xyz-00f067aa0ba902b7-01", "ff-" + good[3:],
                "00-00000000000000000000000000000000-00f067aa0ba902b7-01"):  # fmt: skip
        assert parse_traceparent(bad) is None


def test_request_ids_are_unique_even_under_one_client_trace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The ledger keys a charge by request id: a client sending the same traceparent on
    every call must still get a new id each time (its trace id, a fresh span id)."""
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "always_off")  # nothing to export
    tracing = create_tracing({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"})
    try:
        assert tracing.enabled
        header = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
        ids = {tracing.new_request_id(header) for _ in range(50)}
        assert len(ids) == 50
        for request_id in ids:
            trace_hex, span_hex = request_id.split("-")
            assert trace_hex == "4bf92f3577b34da6a3ce929d0e0e4736" and len(span_hex) == 16
            assert split_request_id(request_id) == (int(trace_hex, 16), int(span_hex, 16))
        fresh = {tracing.new_request_id({}) for _ in range(50)}
        assert len(fresh) == 50 and all(len(r) == 49 and len(r) <= 64 for r in fresh)
        with tracing.request_span(next(iter(ids)), "chat.completions", "openai") as span:
            context = span.get_span_context()
            assert f"{context.trace_id:032x}-{context.span_id:016x}" in ids
    finally:
        tracing.shutdown()
    assert split_request_id("req_0123") == (0, 0)
