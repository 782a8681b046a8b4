"""A fallback model's channels pass the same filter as the model's own (relay/attempt.py,
Route.serves): a channel whose kind cannot serve the operation (an Anthropic channel for
images) is passed over, the call goes on to the next fallback instead of failing with a
502 from the request builder; and a chat call's paid options keep a fallback channel
that does not allow them out, as they keep the model's own."""

from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from switchgate.billing.pricing import Price
from switchgate.catalog import Catalog
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.registry import ProviderKind
from switchgate.relay.attempt import attempt
from switchgate.relay.chat import _ChatRoute
from switchgate.relay.outcome import Outcome
from switchgate.relay.simple import Delivery, Exchange, _ExchangeRoute, openai_shaped
from switchgate.relay.upstream import UpstreamResponse
from switchgate.routing.channels import Channel
from switchgate.settings import Settings
from switchgate.state import AppState


class _Images(Exchange):
    endpoint = "images"

    def __init__(self, model: str) -> None:
        super().__init__(model)
        self.delivered: list[str] = []

    def hold(self, price: Price) -> int:
        return 0

    def build(self, kind: ProviderKind, target: Target) -> UpstreamRequest:
        openai_shaped(kind, self.endpoint)  # raises for a kind that cannot serve images
        return UpstreamRequest("POST", f"{target.base_url}/images/generations", {}, b"{}")

    async def relay(self, delivery: Delivery, response: UpstreamResponse) -> None:
        self.delivered.append(delivery.channel.name)


class _Response:
    def __init__(self, status: int) -> None:
        self.status = status
        self.headers: dict[str, str] = {}

    async def read(self) -> bytes:
        return b'{"error": {"message": "down"}}'

    def release(self) -> None:
        pass


class _Upstream:
    """The primary's upstream answers 500; every other one 200."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send(self, request: UpstreamRequest, limits: object = None) -> _Response:
        self.sent.append(request.url)
        return _Response(500 if "primary" in request.url else 200)


class _Recording:
    """A Route that notes which channels it was asked to build for."""

    def __init__(self, inner: _ExchangeRoute) -> None:
        self.inner = inner
        self.built: list[str] = []
        self.serves = inner.serves
        self.classify = inner.classify
        self.deliver = inner.deliver

    def build(self, channel: Channel, target: Target) -> UpstreamRequest | None:
        self.built.append(channel.name)
        return self.inner.build(channel, target)


def _channel(id: int, name: str, kind: str, model: str, **extra: Any) -> Channel:
    return Channel(id, name, kind, f"http://{name}.invalid/v1", "k", (model,), extra=extra)


@pytest.fixture
async def state(tmp_path: Path) -> AsyncIterator[AppState]:
    s = AppState.create(Settings(data_dir=tmp_path))
    yield s
    await s.db.dispose()


async def test_an_images_fallback_channel_that_cannot_serve_images_is_passed_over(
    state: AppState,
) -> None:
    channels = [
        _channel(1, "primary", "openai", "img"),
        _channel(2, "claude", "anthropic", "img-fb1"),  # no images: passed over
        _channel(3, "second", "openai", "img-fb2"),
    ]
    state.catalog = Catalog.build(channels, {}, 0, {"img": ("img-fb1", "img-fb2")})
    upstream = _Upstream()
    state.upstream = upstream  # type: ignore[assignment]
    exchange = _Images("img")
    outcome = Outcome.begin("r", "openai", "images", None)
    nothing = cast(Any, None)
    route = _ExchangeRoute(state, exchange, nothing, outcome, nothing, nothing, nothing)
    recording = _Recording(route)
    await attempt(state, "img", [channels[0]], recording, outcome, stream=False)
    assert exchange.delivered == ["second"]
    assert recording.built == ["primary", "second"]  # the fallback filter kept claude out
    assert upstream.sent == [
        "http://primary.invalid/v1/images/generations",
        "http://second.invalid/v1/images/generations",
    ]
    # And the builder itself answers "not this channel" rather than failing the call.
    assert route.build(channels[1], Target("http://claude.invalid", "k", "m")) is None


def test_a_chat_calls_paid_options_filter_fallback_channels(state: AppState) -> None:
    call = SimpleNamespace(dialect=SimpleNamespace(name="openai"))
    route = _ChatRoute(state, cast(Any, call), cast(Any, None), ["web_search"])
    closed = _channel(1, "closed", "openai", "m")
    opened = _channel(2, "open", "openai", "m", paid_options=["*"])
    assert not route.serves(closed) and route.serves(opened)
    assert _ChatRoute(state, cast(Any, call), cast(Any, None)).serves(closed)
