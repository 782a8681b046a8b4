"""An OTLP/HTTP collector double: a thread serving POST /v1/traces (protobuf), keeping
every span it received, decoded with the OpenTelemetry protocol package."""

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass
class Span:
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    attributes: dict[str, Any]
    service: str


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


@dataclass
class Collector:
    spans: list[Span] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)
    url: str = ""

    def by_trace(self, trace_id: str) -> list[Span]:
        return [s for s in self.spans if s.trace_id == trace_id]


def start_collector() -> tuple[Collector, ThreadingHTTPServer]:
    collector = Collector()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            with lock:
                collector.raw.append(body)
                for resource_spans in request.resource_spans:
                    service = next(
                        (
                            _value(a.value)
                            for a in resource_spans.resource.attributes
                            if a.key == "service.name"
                        ),
                        "",
                    )
                    for scope in resource_spans.scope_spans:
                        for s in scope.spans:
                            collector.spans.append(
                                Span(
                                    s.name,
                                    s.trace_id.hex(),
                                    s.span_id.hex(),
                                    s.parent_span_id.hex(),
                                    s.kind,
                                    {a.key: _value(a.value) for a in s.attributes},
                                    service,
                                )
                            )
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    collector.url = f"http://127.0.0.1:{server.server_address[1]}"
    return collector, server
