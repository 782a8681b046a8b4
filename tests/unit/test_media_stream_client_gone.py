"""A media stream whose client leaves before anything reached it is charged nothing
(relay/routes_images.py, relay/routes_audio.py): not an image call's per_request, not a
transcription's estimated duration (docs/billing.md); once bytes went out, what was
delivered is billed, estimated (tests/e2e/test_stream_unfinished_media.py)."""

from types import SimpleNamespace
from typing import Any, cast

import pytest

from switchgate.billing.pricing import Price
from switchgate.dialects.openai_media.requests import image_request
from switchgate.relay.asgi import ClientGone
from switchgate.relay.outcome import Outcome
from switchgate.relay.routes_audio import TranscriptionExchange
from switchgate.relay.routes_images import ImagesExchange
from switchgate.relay.simple import Delivery

SSE = {"content-type": "text/event-stream"}
PARTIAL = b'data: {"type": "image_generation.partial_image", "b64_json": "AA=="}\n\n'
DELTA = b'data: {"type": "transcript.text.delta", "delta": "hello"}\n\n'


class _Response:
    headers = SSE

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = list(chunks)

    async def next_chunk(self) -> bytes:
        return self.chunks.pop(0) if self.chunks else b""


class _GoneResponder:
    """Headers go out, then the client is gone."""

    started = False

    async def start(self, status: int, headers: Any) -> None:
        self.started = True

    async def chunk(self, data: bytes) -> None:
        raise ClientGone()

    async def end(self, data: bytes = b"") -> None:
        raise ClientGone()


def _delivery(price: Price) -> Delivery:
    outcome = Outcome.begin("r", "openai", "media", None)
    nothing = cast(Any, None)
    state = SimpleNamespace(tokenizer=SimpleNamespace(count=lambda text: len(text.split())))
    return Delivery(
        cast(Any, state), outcome, cast(Any, _GoneResponder()), nothing, price, nothing,
        nothing, nothing, nothing,
    )  # fmt: skip


async def test_an_image_stream_nobody_received_is_not_charged_its_per_request() -> None:
    price = Price("img", kind="image", input=5, output=40, per_request=1000)
    exchange = ImagesExchange(image_request({"model": "img", "prompt": "a fox", "stream": True}))
    delivery = _delivery(price)
    with pytest.raises(ClientGone):
        await exchange.relay(delivery, cast(Any, _Response(PARTIAL)))
    assert delivery.outcome.cost == 0 and delivery.outcome.usage is None


async def test_a_transcription_stream_nobody_received_is_not_charged() -> None:
    price = Price("stt", kind="stt", extra={"per_minute": 6_000_000_000})
    upload = SimpleNamespace(data=b"\0" * 64_000)
    call = SimpleNamespace(model="stt", stream=True, upload=upload, form=None)
    exchange = TranscriptionExchange(
        cast(Any, call), 100, cast(Any, SimpleNamespace()), "audio/transcriptions"
    )
    delivery = _delivery(price)
    with pytest.raises(ClientGone):
        await exchange.relay(delivery, cast(Any, _Response(DELTA)))
    assert delivery.outcome.cost == 0 and delivery.outcome.usage is None
