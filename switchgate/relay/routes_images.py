"""POST /v1/images/generations (JSON) and POST /v1/images/edits (multipart), protocols §2.3.

Both go to OpenAI-compatible and Azure channels: generations passed through (model
rewritten), edits re-encoded as multipart with the checked uploads (`image` or `image[]`,
optional `mask`) and every other field unchanged. The answer (`url` or `b64_json`) is
relayed unchanged; a stream (`stream: true`) chunk by chunk, metered from its
`*.completed` events. Billed per returned image by size and quality (billing/media_pricing),
or by the upstream's token usage when the price has no image keys.
"""

from collections.abc import Mapping
from dataclasses import replace
from typing import Final

from switchgate.billing.media_pricing import image_cost, image_hold
from switchgate.billing.pricing import Price
from switchgate.core.usage import Usage
from switchgate.dialects.openai_media.requests import ImageRequest, image_request
from switchgate.dialects.openai_media.uploads import parse_image_edit
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.openai_media import (
    ImageStreamMeter,
    form_request,
    image_result,
    passthrough_json,
)
from switchgate.providers.registry import IMAGES, ProviderKind
from switchgate.relay.asgi import Receive, Scope, Send
from switchgate.relay.gate import parse_json_object
from switchgate.relay.simple import Delivery, Exchange, MediaEndpoint, handle_media, openai_shaped
from switchgate.relay.stream_check import STREAM_ENDS
from switchgate.relay.upstream import UpstreamResponse, read_all
from switchgate.state import AppState
from switchgate.wire.forms import Form, parse_form

# Output tokens held per image when the price is per token (gpt-image-1 "high" quality
# at 1536x1024 makes about 6,200).
HOLD_OUTPUT_TOKENS_PER_IMAGE: Final = 8192
HOLD_INPUT_TOKENS_PER_UPLOAD: Final = 4096
# What OpenAI bills for each partial image of a stream (`partial_images`), in output tokens
# on top of the final image's: used for partial images delivered by a stream that ended
# before its `*.completed` event (the usage of a finished image counts its partials).
PARTIAL_IMAGE_OUTPUT_TOKENS: Final = 100


class ImagesExchange(Exchange):
    endpoint = IMAGES

    def __init__(
        self,
        request: ImageRequest,
        *,
        body: dict[str, object] | None = None,
        form: Form | None = None,
        uploads: int = 0,
    ) -> None:
        super().__init__(request.model)
        self.request = request
        self.body = body
        self.form = form
        self.uploads = uploads

    def hold(self, price: Price) -> int:
        # Uploaded images are input tokens too when billed per token (gpt-image).
        prompt = len(self.request.prompt.encode()) + 16
        prompt_tokens = prompt + self.uploads * HOLD_INPUT_TOKENS_PER_UPLOAD
        return image_hold(price, self.request.n, prompt_tokens, HOLD_OUTPUT_TOKENS_PER_IMAGE)

    def build(self, kind: ProviderKind, target: Target) -> UpstreamRequest:
        api = openai_shaped(kind, IMAGES)
        if self.form is not None:
            return form_request(api, target, "images/edits", self.form)
        assert self.body is not None
        return passthrough_json(api, target, "images/generations", dict(self.body))

    async def relay(self, delivery: Delivery, response: UpstreamResponse) -> None:
        content_type = response.headers.get("content-type", "application/json")
        if content_type.startswith("text/event-stream"):
            await self._relay_stream(delivery, response, content_type)
            return
        data = await read_all(response)
        result = image_result(data)
        request = self.request
        if result is None:  # unreadable: bill what was asked for
            cost = image_cost(delivery.price, request.n, request.size, request.quality, None)
            delivery.bill(cost)
        else:
            size = result.size or request.size
            quality = result.quality or request.quality
            cost = image_cost(delivery.price, result.images, size, quality, result.usage)
            delivery.bill(cost, result.usage or Usage())
        await delivery.whole(data, content_type)

    async def _relay_stream(
        self, delivery: Delivery, response: UpstreamResponse, content_type: str
    ) -> None:
        meter = ImageStreamMeter()
        try:
            headers = [(b"content-type", content_type.encode("latin-1"))]
            await delivery.stream(
                response,
                headers,
                meter=meter.feed,
                in_band_errors=True,  # a garbled or unfinished stream ends with an error
                end=STREAM_ENDS["images"],
            )
        finally:
            # Cut short (an upstream failure, the client gone): what reached the client,
            # estimated; nothing at all when nothing did (not even per_request).
            if delivery.finished or delivery.delivered:
                size = meter.size or self.request.size
                quality = meter.quality or self.request.quality
                usage = self._delivered(delivery, meter) if delivery.cut_short else meter.usage
                cost = image_cost(delivery.price, meter.images, size, quality, usage)
                delivery.bill(cost, usage or Usage())

    def _delivered(self, delivery: Delivery, meter: ImageStreamMeter) -> Usage:
        """The usage of a stream that ended early, marked estimated: what its completed
        images reported (else the prompt's tokens), plus the partial images delivered
        after them at OpenAI's rate for a partial image."""
        reported = meter.usage or Usage(
            input_tokens=delivery.state.tokenizer.count(self.request.prompt)
        )
        extra = meter.partials * PARTIAL_IMAGE_OUTPUT_TOKENS
        return replace(reported, output_tokens=reported.output_tokens + extra, estimated=True)


def _generation(state: AppState, raw: bytes, headers: Mapping[str, str]) -> Exchange:
    body = parse_json_object(raw)
    return ImagesExchange(image_request(body), body=body)


def _edit(state: AppState, raw: bytes, headers: Mapping[str, str]) -> Exchange:
    edit = parse_image_edit(parse_form(raw, headers.get("content-type")))
    return ImagesExchange(edit.request, form=edit.form, uploads=len(edit.form.files))


GENERATIONS = MediaEndpoint(name="images.generations", what="images", prepare=_generation)
EDITS = MediaEndpoint(name="images.edits", what="images", prepare=_edit)


async def generations(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    await handle_media(GENERATIONS, state, scope, receive, send)


async def edits(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    await handle_media(EDITS, state, scope, receive, send)
