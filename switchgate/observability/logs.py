"""Structured logs with the standard library (docs/observability.md argues the choice).

- `configure_logging(settings)`: one handler on the root logger, writing to stderr:
  JSON lines (one object per line) when stderr is not a terminal or
  SWITCHGATE_LOG_FORMAT=json; a short human line on a terminal or with =text.
  uvicorn's loggers propagate to it, so every line of a worker has the same shape.
- `AccessLog.observe(record)`: one line per finished relayed request on the
  `switchgate.access` logger at INFO, with the request id, user id, token id (the id,
  never the token), model, channel, status, latency and cost. Nothing is built when INFO
  is off for that logger (SWITCHGATE_LOG_LEVEL=warning, or SWITCHGATE_ACCESS_LOG=0).

Values that may carry secrets never reach a log line: the records hold ids, not tokens or
keys, and upstream error messages are scrubbed before they become GatewayErrors.
"""

import logging
import sys
import time
from collections.abc import Callable
from typing import Any, Final, TextIO

from switchgate import jsonutil
from switchgate.billing.recorder import Record
from switchgate.catalog import Catalog
from switchgate.money import format_usd_exact
from switchgate.settings import Settings

ACCESS: Final = "switchgate.access"
_RESERVED: Final = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


def _iso(created: float) -> str:
    seconds = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created))
    return f"{seconds}.{int(created % 1 * 1000):03d}Z"


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, then the record's
    structured fields (`extra={"fields": {...}}`) and any other extras."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": _iso(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = record.__dict__.get("fields")
        if isinstance(fields, dict):
            out.update(fields)
        for key, value in record.__dict__.items():
            if key not in _RESERVED and key != "fields":
                out[key] = value if isinstance(value, str | int | float | bool) else str(value)
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return jsonutil.dumps(out).decode()


class TextFormatter(logging.Formatter):
    """For a person at a terminal: time, level, logger, message, then key=value fields."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = record.__dict__.get("fields")
        if isinstance(fields, dict):
            line += " " + " ".join(f"{k}={v}" for k, v in fields.items() if v is not None)
        return line


def wants_json(setting: str, stream: TextIO) -> bool:
    if setting == "json":
        return True
    if setting == "text":
        return False
    return not stream.isatty()


def configure_logging(settings: Settings, stream: TextIO | None = None) -> None:
    """Replace the root logger's handlers with one that writes our format to stderr."""
    stream = stream if stream is not None else sys.stderr
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        JsonFormatter() if wants_json(settings.log_format, stream) else TextFormatter()
    )
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(settings.log_level.upper())
    logging.getLogger(ACCESS).disabled = not settings.access_log
    for name in ("uvicorn", "uvicorn.error"):
        uvicorn_logger = logging.getLogger(name)
        uvicorn_logger.handlers.clear()
        uvicorn_logger.propagate = True


class AccessLog:
    """The per-request line; channel names come from the live catalogue."""

    def __init__(self, catalog: Callable[[], Catalog]) -> None:
        self._log = logging.getLogger(ACCESS)
        self._catalog = catalog
        self._seen: Catalog | None = None
        self._names: dict[int, str] = {}

    def _channel(self, channel_id: int | None) -> str | None:
        if channel_id is None:
            return None
        catalog = self._catalog()
        if catalog is not self._seen:
            self._names = {c.id: c.name for c in catalog.channels}
            self._seen = catalog
        return self._names.get(channel_id, f"#{channel_id}")

    def observe(self, record: Record) -> None:
        log = self._log
        if log.disabled or not log.isEnabledFor(logging.INFO):
            return
        fields: dict[str, Any] = {
            "request_id": record.request_id,
            "user_id": record.user_id,
            "token_id": record.token_id,
            "model": record.model,
            "channel": self._channel(record.channel_id),
            "dialect": record.dialect,
            "endpoint": record.endpoint,
            "stream": record.stream,
            "status": record.status,
            "latency_ms": record.latency_ms,
            "ttft_ms": record.ttft_ms,
            "cost_usd": format_usd_exact(record.cost) if record.cost else "0",
            "input_tokens": record.input_tokens,
            "output_tokens": record.output_tokens,
        }
        if record.error:
            fields["error"] = record.error
        log.info("request", extra={"fields": fields})
