"""OpenTelemetry tracing, optional (`pip install 'switchgate[otel]'`), configured by the
standard OTEL_* variables (docs/observability.md).

On when the SDK is installed and OTEL_EXPORTER_OTLP_ENDPOINT or
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (and OTEL_SDK_DISABLED is not true, and
OTEL_TRACES_EXPORTER is not none); the OTLP/HTTP exporter, the sampler
(OTEL_TRACES_SAMPLER), the service name (OTEL_SERVICE_NAME, default "switchgate") and the
batch processor (OTEL_BSP_*) read their own variables.

One span per relayed request (kind SERVER) with children `auth`, `route`, one
`upstream` per attempt (channel, status, retry reason) and `billing`. The request id
is `<trace id>-<server span id>` (32 + 1 + 16 hex digits): the `x-request-id` the
client gets, the one stored in the request log and the ledger, and the one sent upstream
beside a `traceparent` header. The span id, fresh and random for every request, keeps
request ids unique when a client sends the same `traceparent` twice (its trace is
continued, and the ledger's unique request id still tells the calls apart). Off, every
method is a no-op and request ids keep their `req_` form.
"""

import contextlib
import os
import secrets
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span, Tracer

_TRACEPARENT: Final = "traceparent"
_NULL: Final = contextlib.nullcontext()


def configured(env: Mapping[str, str]) -> bool:
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if env.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() in ("none", ""):
        return False
    endpoint = env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    return bool(endpoint or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def parse_traceparent(value: str | None) -> tuple[int, int, int] | None:
    """(trace id, parent span id, flags) from a W3C traceparent header, if valid."""
    if not value:
        return None
    parts = value.strip().split("-")
    if len(parts) < 4 or len(parts[1]) != 32 or len(parts[2]) != 16 or parts[0] == "ff":
        return None
    try:
        trace_id, span_id, flags = int(parts[1], 16), int(parts[2], 16), int(parts[3][:2], 16)
    except ValueError:
        return None
    return (trace_id, span_id, flags) if trace_id and span_id else None


def _random_id(size: int) -> int:
    """A random non-zero id of `size` bytes (W3C: all-zero trace and span ids are invalid)."""
    while not (value := int.from_bytes(secrets.token_bytes(size))):
        pass
    return value


def split_request_id(request_id: str) -> tuple[int, int]:
    """(trace id, server span id) of a `<32 hex>-<16 hex>` request id; (0, 0) (let the SDK
    choose) for any other form."""
    trace_hex, _, span_hex = request_id.partition("-")
    if len(trace_hex) != 32 or len(span_hex) != 16:
        return 0, 0
    try:
        return int(trace_hex, 16), int(span_hex, 16)
    except ValueError:
        return 0, 0


def describe_attempt(span: "Span", response: Any, error: Any, retry_of: str | None) -> None:
    """An upstream attempt's outcome on its span: status, failure, what it retries."""
    from switchgate.observability.metrics import attempt_result

    status = response.status if response is not None else getattr(error, "upstream_status", None)
    if status is not None:
        span.set_attribute("http.response.status_code", int(status))
    if error is not None:
        span.set_attribute("switchgate.failure", attempt_result(error))
        span.set_attribute("error.type", str(error.kind))
    if retry_of is not None:
        span.set_attribute("switchgate.retry_reason", retry_of)


def describe_request(span: "Span", record: Any, outcome: Any) -> None:
    """The finished request on its span (ids and numbers only, never a secret)."""
    span.set_attribute("http.response.status_code", int(record.status))
    values = {
        "switchgate.request_id": record.request_id,
        "switchgate.model": record.model,
        "switchgate.channel": outcome.channel.name if outcome.channel is not None else None,
        "switchgate.user_id": record.user_id,
        "switchgate.token_id": record.token_id,
        "switchgate.cost_units": record.cost,
        "switchgate.stream": record.stream,
    }
    for key, value in values.items():
        if value is not None:
            span.set_attribute(key, value)


class Tracing:
    """The gateway's tracer. `Tracing()` is the disabled one."""

    enabled = False

    def new_request_id(self, headers: Mapping[str, str]) -> str:
        return "req_" + secrets.token_hex(12)

    def request_span(self, request_id: str, endpoint: str, dialect: str) -> Any:
        return _NULL

    def span(self, name: str, **attributes: Any) -> Any:
        return _NULL

    def upstream_headers(self) -> dict[str, str] | None:
        return None

    def shutdown(self) -> None:
        return None


class OtelTracing(Tracing):
    enabled = True

    def __init__(
        self,
        provider: "TracerProvider",
        next_trace: ContextVar[int],
        next_span: ContextVar[int],
    ) -> None:
        self._provider = provider
        self._tracer: Tracer = provider.get_tracer("switchgate")
        self._next_trace = next_trace
        self._next_span = next_span
        self._parents: ContextVar[tuple[int, int, int] | None] = ContextVar("sg_parent")
        self._request_id: ContextVar[str] = ContextVar("sg_request_id")

    def new_request_id(self, headers: Mapping[str, str]) -> str:
        """`<trace id>-<span id>`: the client's trace (or a fresh one) and a fresh random
        id for this request's server span, so no two requests share an id."""
        parent = parse_traceparent(headers.get(_TRACEPARENT))
        self._parents.set(parent)
        trace_id = parent[0] if parent is not None else _random_id(16)
        return f"{trace_id:032x}-{_random_id(8):016x}"

    @contextlib.contextmanager
    def request_span(self, request_id: str, endpoint: str, dialect: str) -> Iterator["Span"]:
        from opentelemetry import trace
        from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, TraceFlags

        context = None
        trace_id, span_id = split_request_id(request_id)
        parent = self._parents.get(None)
        if parent is not None and parent[0] == trace_id:
            remote = SpanContext(parent[0], parent[1], True, TraceFlags(parent[2]))
            context = trace.set_span_in_context(NonRecordingSpan(remote))
        token = self._next_trace.set(trace_id)
        span_token = self._next_span.set(span_id)
        try:
            span = self._tracer.start_span(
                endpoint,
                context=context,
                kind=SpanKind.SERVER,
                attributes={"switchgate.endpoint": endpoint, "switchgate.dialect": dialect},
            )
        finally:
            self._next_span.reset(span_token)
            self._next_trace.reset(token)
        id_token = self._request_id.set(request_id)
        try:
            with trace.use_span(span, end_on_exit=True, record_exception=False):
                yield span
        finally:
            self._request_id.reset(id_token)

    def span(self, name: str, **attributes: Any) -> Any:
        return self._tracer.start_as_current_span(
            name, attributes=attributes, record_exception=False, set_status_on_exception=False
        )

    def upstream_headers(self) -> dict[str, str] | None:
        """`traceparent` (the current span: the upstream attempt) and `x-request-id`."""
        from opentelemetry import trace

        context = trace.get_current_span().get_span_context()
        request_id = self._request_id.get(None)
        if not context.is_valid or request_id is None:
            return None
        flags = int(context.trace_flags)
        return {
            _TRACEPARENT: f"00-{context.trace_id:032x}-{context.span_id:016x}-{flags:02x}",
            "x-request-id": request_id,
        }

    def shutdown(self) -> None:
        self._provider.shutdown()


def create_tracing(env: Mapping[str, str] | None = None) -> Tracing:
    env = os.environ if env is None else env
    if not configured(env):
        return Tracing()
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
    except ImportError:
        import logging

        logging.getLogger("switchgate").warning(
            "OTEL_EXPORTER_OTLP_ENDPOINT is set but the OpenTelemetry SDK is not installed "
            "(pip install 'switchgate[otel]'): tracing is off"
        )
        return Tracing()
    next_trace: ContextVar[int] = ContextVar("sg_next_trace", default=0)
    next_span: ContextVar[int] = ContextVar("sg_next_span", default=0)

    class RequestIds(IdGenerator):
        """The trace and server span ids a request asked for (its request id), else
        random ones."""

        def __init__(self) -> None:
            self._random = RandomIdGenerator()

        def generate_span_id(self) -> int:
            return next_span.get() or self._random.generate_span_id()

        def generate_trace_id(self) -> int:
            return next_trace.get() or self._random.generate_trace_id()

    attributes = {} if env.get("OTEL_SERVICE_NAME") else {"service.name": "switchgate"}
    provider = TracerProvider(resource=Resource.create(attributes), id_generator=RequestIds())
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return OtelTracing(provider, next_trace, next_span)
