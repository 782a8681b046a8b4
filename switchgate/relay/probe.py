"""A real, tiny call to one channel (the console's "test" button): not billed, not logged."""

import time
from dataclasses import dataclass, replace

from switchgate.core.content import TextPart
from switchgate.core.request import ChatRequest, Message, Sampling
from switchgate.errors import GatewayError
from switchgate.relay.attempt import target_for
from switchgate.relay.upstream import read_all
from switchgate.routing.channels import Channel
from switchgate.state import AppState


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    model: str
    latency_ms: int
    message: str  # the reply's first words, or what went wrong


async def probe_channel(state: AppState, channel: Channel, model: str | None = None) -> ProbeResult:
    model = model or channel.models[0]
    provider = state.providers.get(channel.kind)
    started = time.perf_counter()

    def done(ok: bool, message: str) -> ProbeResult:
        return ProbeResult(ok, model, int((time.perf_counter() - started) * 1000), message[:300])

    if provider is None:
        return done(False, f"no provider for channel kind {channel.kind!r}")
    target = target_for(channel, model)
    request = ChatRequest(
        model=target.upstream_model,
        messages=(Message("user", (TextPart("Say hello in three words."),)),),
        sampling=Sampling(max_tokens=16),
    )
    try:
        response = await state.upstream.send(provider.build_chat_request(request, target))
        try:
            body = await read_all(response)
            if response.status >= 400:
                error = provider.classify_error(response.status, body)
                return done(False, f"HTTP {response.status}: {error.message}")
            parsed = provider.parse_chat_response(body, replace(request, model=model))
        finally:
            response.release()
    except GatewayError as err:
        return done(False, err.message)
    except (ValueError, KeyError, TypeError) as exc:
        return done(False, f"unreadable answer ({type(exc).__name__})")
    text = "".join(getattr(part, "text", "") for part in parsed.parts)
    return done(True, text or "(empty reply)")
