"""The metrics module on its own: bounded label values, breaker gauges that return to
closed, failure reasons, and who may read /metrics."""

from prometheus_client.parser import text_string_to_metric_families

from switchgate.billing.recorder import Record
from switchgate.catalog import Catalog
from switchgate.errors import ErrorKind, GatewayError
from switchgate.observability.endpoint import allowed_on_main_port, split_address, token_ok
from switchgate.observability.metrics import Metrics, attempt_result
from switchgate.routing.channels import Channel
from switchgate.settings import Settings

CATALOG = Catalog.build([Channel(7, "main", "openai", "http://x/v1", "k", ("gpt-a",))], {}, 0)


def _samples(metrics: Metrics) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    out = {}
    for family in text_string_to_metric_families(metrics.render().decode()):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def _record(model: str, status: int = 200) -> Record:
    return Record("r", 0, 1, 1, model, "openai", "chat.completions", status, channel_id=7)


def test_unknown_model_names_share_one_label_value() -> None:
    metrics = Metrics(lambda: CATALOG)
    for model in ("gpt-a", "gpt-a", "made-up-1", "made-up-2"):
        metrics.observe(_record(model))
    samples = _samples(metrics)
    models = {dict(ls)["model"] for (n, ls) in samples if n == "switchgate_requests_total"}
    assert models == {"gpt-a", "other"}
    total = sum(v for (n, _), v in samples.items() if n == "switchgate_requests_total")
    assert total == 4


def test_breaker_gauges_show_open_then_closed() -> None:
    metrics = Metrics(lambda: CATALOG)
    metrics.sample(
        pending_holds=2,
        queue_depth=5,
        breakers={(7, "channel", ""): ("open", 12.5), (7, "model", "gpt-a"): ("half_open", 0.0)},
    )
    s = _samples(metrics)
    assert s[("switchgate_channel_state", frozenset({("channel", "main"), ("state", "open")}))] == 1
    assert s[("switchgate_channel_cooldown_seconds", frozenset({("channel", "main")}))] == 12.5
    key = frozenset({("channel", "main"), ("scope", "model"), ("target", "gpt-a")})
    assert s[("switchgate_breaker_state", key | {("state", "half_open")})] == 1
    assert s[("switchgate_pending_holds", frozenset())] == 2
    assert s[("switchgate_batch_queue_depth", frozenset())] == 5
    metrics.sample(pending_holds=0, queue_depth=0, breakers={})
    s = _samples(metrics)
    assert s[("switchgate_channel_state", frozenset({("channel", "main"), ("state", "open")}))] == 0
    assert s[("switchgate_breaker_state", key | {("state", "closed")})] == 1
    assert s[("switchgate_breaker_state", key | {("state", "half_open")})] == 0


def test_failure_reasons() -> None:
    def err(kind: ErrorKind, status: int | None = None) -> GatewayError:
        return GatewayError(kind, "x", upstream_status=status)

    assert attempt_result(err(ErrorKind.UPSTREAM_TIMEOUT)) == "timeout"
    assert attempt_result(err(ErrorKind.UPSTREAM_ERROR)) == "unreachable"
    assert attempt_result(err(ErrorKind.UPSTREAM_ERROR, 401)) == "auth"
    assert attempt_result(err(ErrorKind.RATE_LIMITED, 429)) == "rate_limited"
    assert attempt_result(err(ErrorKind.UPSTREAM_OVERLOADED, 503)) == "overloaded"
    assert attempt_result(err(ErrorKind.UPSTREAM_ERROR, 500)) == "upstream_error"
    assert attempt_result(err(ErrorKind.INVALID_REQUEST, 400)) == "client_error"


def test_who_may_read_metrics() -> None:
    plain = Settings()
    assert allowed_on_main_port(plain, None, "127.0.0.1")
    assert not allowed_on_main_port(plain, None, "10.1.2.3")
    token = Settings(metrics_token="s3cret")
    assert allowed_on_main_port(token, "Bearer s3cret", "10.1.2.3")
    assert not allowed_on_main_port(token, "Bearer nope", "127.0.0.1")
    assert not allowed_on_main_port(token, None, "127.0.0.1")
    separate = Settings(metrics_address="127.0.0.1:9464")
    assert not allowed_on_main_port(separate, None, "127.0.0.1")
    assert token_ok(separate, None) and not token_ok(token, "s3cret")
    assert split_address("[::1]:9464") == ("::1", 9464)
    assert split_address(":9464") == ("0.0.0.0", 9464)
