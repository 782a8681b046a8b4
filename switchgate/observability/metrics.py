"""Prometheus metrics with `prometheus-client`, served at GET /metrics (see
docs/observability.md for every series).

Hot path: each finished request costs one dictionary look-up for its cached label
children (the `_Series` of its model, channel, dialect, endpoint and status) and a handful
of increments; `.labels()` runs only the first time a combination is seen. Gauges that
describe a process (active streams, pending holds, the batch writer's queue, channel
breakers) are sampled once a second by `sample()`, off the request path.

With `switchgate serve --workers N` the supervisor sets PROMETHEUS_MULTIPROC_DIR before
the workers start; every worker then writes its values to files there and a scrape that
reaches any worker aggregates all of them (prometheus-client's multi-process mode).
"""

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)

from switchgate.billing.recorder import Record
from switchgate.catalog import Catalog
from switchgate.errors import ErrorKind, GatewayError
from switchgate.observability.exposition import SPEND, Families, ProcessCollector, exact_spend

MULTIPROC_ENV: Final = "PROMETHEUS_MULTIPROC_DIR"
LATENCY_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
TTFT_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
FLUSH_BUCKETS: Final = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
TOKEN_KINDS: Final = ("input", "output", "cached", "cache_write", "reasoning")
CHANNEL_STATES: Final = ("closed", "half_open", "open")
NO_CHANNEL: Final = "none"
OTHER_MODEL: Final = "other"  # a name no channel serves (bounds the label's values)
MAX_SERIES: Final = 4096
ALERT_KINDS: Final = ("charge_failed", "charge_capped", "records_lost")


def multiprocess_dir() -> str | None:
    return os.environ.get(MULTIPROC_ENV) or None


def attempt_result(error: GatewayError) -> str:
    """The `result` / `reason` label of a failed upstream attempt."""
    status = error.upstream_status
    if status in (401, 403) or error.kind in (ErrorKind.AUTHENTICATION, ErrorKind.PERMISSION):
        return "auth"
    if error.kind is ErrorKind.UPSTREAM_TIMEOUT:
        return "timeout"
    if error.kind is ErrorKind.RATE_LIMITED or status == 429:
        return "rate_limited"
    if error.kind is ErrorKind.UPSTREAM_OVERLOADED:
        return "overloaded"
    if status is None and error.kind is ErrorKind.UPSTREAM_ERROR:
        return "unreachable"
    if error.retryable:
        return "upstream_error"
    return "client_error"


@dataclass(slots=True)
class _Series:
    """The label children of one (model, channel, dialect, endpoint, status) combination."""

    requests: Counter
    latency: Histogram
    ttft: Histogram
    tokens: tuple[Counter, ...]  # in TOKEN_KINDS order
    spend: Counter


class Metrics:
    def __init__(self, catalog: Callable[[], Catalog] = Catalog) -> None:
        self._catalog = catalog
        disable_created_metrics()  # type: ignore[no-untyped-call]  # no *_created series
        self.registry = CollectorRegistry(auto_describe=False)
        self.live = CollectorRegistry(auto_describe=False)  # this process only
        # Read late: the app replaces `upstream_connections` once its pool exists.
        self.live.register(ProcessCollector(self._open_connections))
        reg = self.registry
        by_request = ["model", "channel", "dialect", "endpoint", "status_class", "code"]
        self.requests = Counter(
            "switchgate_requests", "Finished requests.", by_request, registry=reg
        )
        self.latency = Histogram(
            "switchgate_request_duration_seconds",
            "Request latency, arrival to the last byte.",
            ["model", "channel"],
            buckets=LATENCY_BUCKETS,
            registry=reg,
        )
        self.ttft = Histogram(
            "switchgate_time_to_first_token_seconds",
            "Streamed requests: arrival to the first byte of the answer.",
            ["model", "channel"],
            buckets=TTFT_BUCKETS,
            registry=reg,
        )
        self.tokens = Counter(
            "switchgate_tokens",
            "Tokens billed (input, output, cached, cache_write, reasoning).",
            ["model", "channel", "kind"],
            registry=reg,
        )
        self.spend = Counter(
            SPEND,
            "Amount charged, in units (1 USD = 10^12); shown exact, with its USD twin.",
            ["model", "channel"],
            registry=reg,
        )
        self.billing_alerts = Counter(
            "switchgate_billing_alerts",
            "Charges that failed to be written (charge_failed), were capped (charge_capped)"
            " or were lost at shutdown (records_lost). Any increase needs an operator.",
            ["kind"],
            registry=reg,
        )
        for kind in ALERT_KINDS:
            self.billing_alerts.labels(kind)
        self.attempts = Counter(
            "switchgate_upstream_attempts",
            "Calls sent to upstreams, by channel and result.",
            ["channel", "result"],
            registry=reg,
        )
        self.retries = Counter(
            "switchgate_upstream_retries",
            "Attempts that failed and were followed by another attempt.",
            ["channel", "reason"],
            registry=reg,
        )
        self.failovers = Counter(
            "switchgate_failovers",
            "Retries that moved to a different channel (labelled with the one that failed).",
            ["channel", "reason"],
            registry=reg,
        )
        self.rate_limited = Counter(
            "switchgate_rate_limit_rejections",
            "Requests refused by a gateway rate limit.",
            ["limit"],
            registry=reg,
        )
        self.flush_latency = Histogram(
            "switchgate_batch_flush_duration_seconds",
            "Time to write one batch of request logs and ledger rows.",
            buckets=FLUSH_BUCKETS,
            registry=reg,
        )
        self.active_streams = Gauge(
            "switchgate_active_streams",
            "Streamed answers in progress.",
            registry=reg,
            multiprocess_mode="livesum",
        )
        self.pending_holds = Gauge(
            "switchgate_pending_holds",
            "Balance holds not settled yet (requests in flight).",
            registry=reg,
            multiprocess_mode="livesum",
        )
        self.queue_depth = Gauge(
            "switchgate_batch_queue_depth",
            "Request records waiting for the batch writer.",
            registry=reg,
            multiprocess_mode="livesum",
        )
        self.channel_state = Gauge(
            "switchgate_channel_state",
            "1 for the state each channel's own circuit breaker is in (closed/half_open/open).",
            ["channel", "state"],
            registry=reg,
            multiprocess_mode="max",
        )
        self.channel_cooldown = Gauge(
            "switchgate_channel_cooldown_seconds",
            "Seconds until an open channel breaker lets a trial request through (0: closed).",
            ["channel"],
            registry=reg,
            multiprocess_mode="max",
        )
        self.breaker_state = Gauge(
            "switchgate_breaker_state",
            "1 for the state of each breaker below a channel: one model on it (scope=model) "
            "or one of its keys (scope=key); target is the model or the key's index.",
            ["channel", "scope", "target", "state"],
            registry=reg,
            multiprocess_mode="max",
        )
        self.breaker_cooldown = Gauge(
            "switchgate_breaker_cooldown_seconds",
            "Seconds until an open model or key breaker lets a trial request through.",
            ["channel", "scope", "target"],
            registry=reg,
            multiprocess_mode="max",
        )
        self._breakers_shown: set[tuple[str, str, str]] = set()
        self.streams_open = 0  # kept by the relay; sampled into active_streams
        self._series: dict[tuple[object, ...], _Series] = {}
        self._seen_catalog: Catalog | None = None
        self._attempt_ok: dict[int, Counter] = {}
        self.upstream_connections: Callable[[], int] = lambda: 0

    # -- the hot path --------------------------------------------------------------

    def observe(self, record: Record) -> None:
        key = (
            record.model,
            record.channel_id,
            record.dialect,
            record.endpoint,
            record.status,
        )
        series = self._series.get(key)
        if series is None:
            series = self._new_series(key)
        series.requests.inc()
        series.latency.observe(record.latency_ms / 1000)
        if record.stream and record.ttft_ms is not None:
            series.ttft.observe(record.ttft_ms / 1000)
        if record.input_tokens:
            cached = record.cache_read_tokens
            series.tokens[0].inc(record.input_tokens - cached if cached else record.input_tokens)
            if cached:
                series.tokens[2].inc(cached)
        if record.output_tokens:
            series.tokens[1].inc(record.output_tokens)
        if record.cache_write_tokens:
            series.tokens[3].inc(record.cache_write_tokens)
        if record.reasoning_tokens:
            series.tokens[4].inc(record.reasoning_tokens)
        if record.cost:
            series.spend.inc(record.cost)

    def attempt_ok(self, channel_id: int) -> None:
        counter = self._attempt_ok.get(channel_id)
        if counter is None:
            counter = self._attempt_ok[channel_id] = self.attempts.labels(
                self.channel_label(channel_id), "ok"
            )
        counter.inc()

    # -- failure paths and background work ------------------------------------------

    def alert(self, kind: str) -> None:
        """A billing alert from the recorder (a charge failed, was capped, was lost)."""
        self.billing_alerts.labels(kind).inc()

    def attempt_failed(self, channel_id: int, error: GatewayError) -> str:
        result = attempt_result(error)
        self.attempts.labels(self.channel_label(channel_id), result).inc()
        return result

    def retried(self, channel_id: int, reason: str, next_channel_id: int) -> None:
        channel = self.channel_label(channel_id)
        self.retries.labels(channel, reason).inc()
        if next_channel_id != channel_id:
            self.failovers.labels(channel, reason).inc()

    def channel_label(self, channel_id: int | None) -> str:
        if channel_id is None:
            return NO_CHANNEL
        for channel in self._catalog().channels:
            if channel.id == channel_id:
                return channel.name
        return f"#{channel_id}"

    def _new_series(self, key: tuple[object, ...]) -> _Series:
        catalog = self._catalog()
        if catalog is not self._seen_catalog or len(self._series) >= MAX_SERIES:
            self._series.clear()  # names may have changed; and the cache stays bounded
            self._seen_catalog = catalog
        model, channel_id, dialect, endpoint, status = key
        known = model in catalog.channels_by_model or model in catalog.prices
        model_label = str(model) if known else (OTHER_MODEL if model else NO_CHANNEL)
        channel = self.channel_label(channel_id)  # type: ignore[arg-type]
        code = int(status)  # type: ignore[call-overload]
        by_model = (model_label, channel)
        series = _Series(
            requests=self.requests.labels(
                model_label, channel, str(dialect), str(endpoint), f"{code // 100}xx", str(code)
            ),
            latency=self.latency.labels(*by_model),
            ttft=self.ttft.labels(*by_model),
            tokens=tuple(self.tokens.labels(*by_model, kind) for kind in TOKEN_KINDS),
            spend=self.spend.labels(*by_model),
        )
        self._series[key] = series
        return series

    def _open_connections(self) -> int:
        return self.upstream_connections()

    def sample(
        self,
        *,
        pending_holds: int,
        queue_depth: int,
        breakers: dict[tuple[int, str, str], tuple[str, float]],
    ) -> None:
        """Set the sampled gauges. `breakers`: (channel id, scope, target) -> (state,
        seconds of cool-down left) for every breaker that is not closed; scope "channel"
        (target "") is the channel's own."""
        self.active_streams.set(self.streams_open)
        self.pending_holds.set(pending_holds)
        self.queue_depth.set(queue_depth)
        for channel in self._catalog().channels:
            state, cooldown = breakers.get((channel.id, "channel", ""), ("closed", 0.0))
            for name in CHANNEL_STATES:
                self.channel_state.labels(channel.name, name).set(1 if name == state else 0)
            self.channel_cooldown.labels(channel.name).set(cooldown)
        shown: set[tuple[str, str, str]] = set()
        for (channel_id, scope, target), (state, cooldown) in breakers.items():
            if scope != "channel":
                labels = (self.channel_label(channel_id), scope, target)
                shown.add(labels)
                self._set_breaker(labels, state, cooldown)
        for labels in self._breakers_shown - shown:  # closed since: shown as closed
            self._set_breaker(labels, "closed", 0.0)
        self._breakers_shown |= shown

    def _set_breaker(self, labels: tuple[str, str, str], state: str, cooldown: float) -> None:
        for name in CHANNEL_STATES:
            self.breaker_state.labels(*labels, name).set(1 if name == state else 0)
        self.breaker_cooldown.labels(*labels).set(cooldown)

    def render(self) -> bytes:
        """The exposition: every process's series (multi-process mode) or this one's,
        then this process's own gauges. Spend is written exact: integer units and the
        exact decimal USD (prometheus-client would print floats such as 1.3e-05)."""
        path = multiprocess_dir()
        source = self.registry
        if path is not None:
            from prometheus_client import multiprocess

            source = CollectorRegistry(auto_describe=False)
            multiprocess.MultiProcessCollector(source, path=path)  # type: ignore[no-untyped-call]
        families = list(source.collect())
        spend = [f for f in families if f.name == SPEND]
        rest = CollectorRegistry(auto_describe=False)
        rest.register(Families([f for f in families if f.name != SPEND]))
        return generate_latest(rest) + exact_spend(spend) + generate_latest(self.live)
