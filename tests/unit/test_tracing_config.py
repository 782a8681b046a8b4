"""When tracing is on, and W3C traceparent parsing."""

from switchgate.observability.tracing import Tracing, configured, create_tracing, parse_traceparent


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
