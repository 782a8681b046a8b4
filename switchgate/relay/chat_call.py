"""One chat call as the pipeline carries it (relay/chat.py): the client's request, canonical
and raw, who sent it, and what the pipeline fills in on the way (price, hold)."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from switchgate.accounts.auth import Principal
from switchgate.billing.holds import Hold
from switchgate.billing.output_guard import OutputGuard
from switchgate.billing.pricing import Price
from switchgate.core.request import ChatRequest
from switchgate.core.usage import Usage
from switchgate.dialects.base import ChatDialect
from switchgate.providers.capabilities import ChatProvider
from switchgate.relay.outcome import Outcome
from switchgate.routing.channels import Channel
from switchgate.tokenizer import Tokenizer


class PassFilter(Protocol):
    """Rewrites a passed-through stream's framing (bytes in, bytes out)."""

    def feed(self, data: bytes) -> bytes: ...

    def close(self) -> bytes: ...


@dataclass(slots=True)
class ChatCall:
    dialect: ChatDialect
    request: ChatRequest  # validated, canonical
    body: dict[str, Any]  # the client's parsed body, for passthrough
    raw: bytes  # the bytes it was parsed from
    headers: Mapping[str, str]
    principal: Principal
    outcome: Outcome
    stream_headers: list[tuple[bytes, bytes]] | None = None
    pass_filter: Callable[[], PassFilter] | None = None
    # A per-channel override of the channel kind's provider (e.g. a native Responses
    # upstream); passthrough still means "the provider's dialect is the client's".
    native: Callable[[Channel], ChatProvider | None] | None = None
    # Set by run_chat: the price, the request's hold, and the output tokens it covers.
    price: Price | None = None
    hold: Hold | None = None
    held_output: int = 0

    def output_guard(
        self, tokenizer: Tokenizer, text: Callable[[], str], reported: Callable[[], Usage | None]
    ) -> OutputGuard:
        assert self.hold is not None and self.price is not None
        return OutputGuard(
            self.hold, self.price.output, self.held_output, tokenizer.count, text, reported
        )
