"""The keep-alive event on translated streams: which dialects' encoders have one
(dialects.base.KeepAlive, checked with isinstance), and the relay sending it while the
upstream is quiet (relay/chat.py _KeepAlive)."""

import asyncio

from switchgate.core.request import ChatRequest
from switchgate.dialects.anthropic_messages.dialect import AnthropicMessagesDialect
from switchgate.dialects.base import KeepAlive
from switchgate.dialects.gemini_generate.dialect import GeminiGenerateDialect
from switchgate.dialects.openai_chat.dialect import OpenAIChatDialect
from switchgate.relay.chat_stream import _KeepAlive

REQUEST = ChatRequest("m", ())


def test_which_encoders_keep_alive() -> None:
    anthropic = AnthropicMessagesDialect().stream_encoder(REQUEST)
    assert isinstance(anthropic, KeepAlive)
    assert anthropic.ping().startswith(b"event: ping\n")
    assert not isinstance(OpenAIChatDialect().stream_encoder(REQUEST), KeepAlive)
    assert not isinstance(GeminiGenerateDialect().stream_encoder(REQUEST), KeepAlive)


class _Responder:
    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    async def chunk(self, data: bytes) -> None:
        self.chunks.append(data)


async def test_pings_while_quiet_and_stops() -> None:
    responder = _Responder()
    keepalive = _KeepAlive(responder, lambda: b"PING", interval=0.05)  # type: ignore[arg-type]
    await asyncio.sleep(0.18)
    keepalive.stop()
    sent = len(responder.chunks)
    assert 2 <= sent <= 4 and set(responder.chunks) == {b"PING"}
    await asyncio.sleep(0.1)
    assert len(responder.chunks) == sent  # stopped


async def test_no_ping_without_a_keepalive_event() -> None:
    keepalive = _KeepAlive(_Responder(), None, interval=0.01)  # type: ignore[arg-type]
    await asyncio.sleep(0.03)
    keepalive.stop()
