"""An embeddings call's further batches go through the key's caps (relay/embed_fanout.py,
routing/key_caps.py): each send takes its own slot (so `max_concurrency` holds while
batches fan out), each counts against `rpm` (a call with more batches than the minute
allows fails with the key-cap 429 once the channel's time limit is spent waiting), and
a failing batch counts against the key the call used, not the channel's first."""

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, cast

import pytest

from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.capabilities import EmbeddingsResult
from switchgate.relay.embed_fanout import TranslatedEmbeddings
from switchgate.relay.simple import Delivery
from switchgate.routing.channels import Channel
from switchgate.routing.key_caps import KeyCaps, Slot
from switchgate.routing.keys import ChannelKey
from switchgate.settings import Timeouts


class _Provider:
    embeddings_batch_limit = 1  # one text per batch: n texts, n sends

    def build_embeddings_request(
        self, texts: Sequence[str], dimensions: int | None, target: Target
    ) -> UpstreamRequest:
        body = json.dumps({"texts": list(texts)}).encode()
        return UpstreamRequest("POST", f"{target.base_url}/embed", {}, body)

    def parse_embeddings_response(self, body: bytes) -> EmbeddingsResult:
        texts = json.loads(body)["texts"]
        return EmbeddingsResult([[float(len(t))] for t in texts], 1)

    def classify_error(self, status: int, body: bytes) -> GatewayError:
        return GatewayError(ErrorKind.UPSTREAM_ERROR, "no", upstream_status=status)


@dataclass
class _Response:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)

    async def read(self) -> bytes:
        return self.body

    def release(self) -> None:
        pass


class _Upstream:
    """Answers each batch after a short while, counting the sends in flight."""

    def __init__(self, fail_status: int | None = None) -> None:
        self.inflight = self.most = self.sent = 0
        self.fail_status = fail_status

    async def send(self, request: UpstreamRequest, limits: object = None) -> _Response:
        self.sent += 1
        self.inflight += 1
        self.most = max(self.most, self.inflight)
        try:
            await asyncio.sleep(0.02)
        finally:
            self.inflight -= 1
        if self.fail_status is not None:
            return _Response(self.fail_status, b'{"error": {"message": "no credit"}}')
        return _Response(200, request.body)


class _Health:
    def __init__(self) -> None:
        self.failed: list[str] = []

    def failure(self, subject: str, wait: float | None, message: str) -> None:
        self.failed.append(subject)


class _Counter:
    def __init__(self) -> None:
        self.count = 0

    def labels(self, *names: str) -> "_Counter":
        return self

    def inc(self) -> None:
        self.count += 1


def _delivery(
    key: ChannelKey, upstream: _Upstream, caps: KeyCaps, slot: Slot | None, total: float = 5.0
) -> tuple[Delivery, Any]:
    channel = Channel(
        7, "emb", "gemini", "http://up.invalid", "", ("m",),
        extra={"timeouts": {"total": total}}, keys=(ChannelKey(0, "k0"), key),
    )  # fmt: skip
    state = SimpleNamespace(
        upstream=upstream,
        key_caps=caps,
        health=_Health(),
        settings=SimpleNamespace(timeouts=Timeouts()),
        metrics=SimpleNamespace(rate_limited=_Counter()),
    )
    target = Target("http://up.invalid", key.key, "m")
    delivery = Delivery(
        cast(Any, state), cast(Any, None), cast(Any, None), cast(Any, None), cast(Any, None),
        channel, cast(Any, None), target, cast(Any, None), key.position, key, slot,
    )  # fmt: skip
    return delivery, state


def _texts(n: int) -> TranslatedEmbeddings:
    return TranslatedEmbeddings(_Provider(), [f"t{'x' * i}" for i in range(n)], None, len)  # type: ignore[arg-type]


async def _first_slot(caps: KeyCaps, key: ChannelKey) -> Slot:
    """The slot the attempt pipeline took for the first batch."""
    taken = await caps.take(7, key, 5.0)
    assert isinstance(taken, Slot)
    return taken


async def test_batches_fan_out_no_wider_than_the_keys_concurrency_cap() -> None:
    key = ChannelKey(1, "k1", max_concurrency=2)
    caps, upstream = KeyCaps(), _Upstream()
    first = await _first_slot(caps, key)
    delivery, _ = _delivery(key, upstream, caps, first)
    texts = _texts(9)
    answer = await texts.merged(delivery, b'{"texts": ["t"]}', "m")
    assert [v[0] for v in answer.vectors] == [float(i + 1) for i in range(9)]
    assert upstream.sent == 8 and upstream.most == 2  # 4 in flight without the caps
    assert caps.local.inflight(7, 1) == 0  # every slot handed back, the first's too


async def test_every_batch_counts_against_the_keys_rpm() -> None:
    key = ChannelKey(1, "k1", rpm=3)
    caps, upstream = KeyCaps(), _Upstream()
    first = await _first_slot(caps, key)  # the first batch's send: 1 of 3
    delivery, state = _delivery(key, upstream, caps, first, total=0.3)
    with pytest.raises(GatewayError) as refused:
        await _texts(5).merged(delivery, b'{"texts": ["t"]}', "m")
    assert refused.value.kind is ErrorKind.RATE_LIMITED and refused.value.retry_after
    assert upstream.sent == 2  # the minute's other two sends, then no room in time
    assert state.metrics.rate_limited.count == 1


async def test_a_failing_batch_counts_against_the_key_the_call_used() -> None:
    key = ChannelKey(1, "k1", max_concurrency=4)
    caps, upstream = KeyCaps(), _Upstream(fail_status=402)
    delivery, state = _delivery(key, upstream, caps, await _first_slot(caps, key))
    with pytest.raises(GatewayError):
        await _texts(3).merged(delivery, b'{"texts": ["t"]}', "m")
    assert state.health.failed and set(state.health.failed) == {"k:7:1"}
    assert caps.local.inflight(7, 1) == 0
