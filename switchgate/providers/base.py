"""The data every provider adapter works with: where a call goes (Target), what it sends
(UpstreamRequest), and the per-stream readers. Providers never do network I/O: the
relay sends the UpstreamRequest they build and feeds them what comes back. What an
adapter can do is in providers/capabilities.py, the list of kinds in registry.py."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from switchgate.core.events import StreamEvent
from switchgate.core.usage import Usage


@dataclass(frozen=True, slots=True)
class Target:
    """Where one attempt goes: a channel's address and credentials, and the upstream model."""

    base_url: str  # what the provider's own SDK takes as its base address
    api_key: str
    upstream_model: str
    extra_headers: Mapping[str, str] = field(default_factory=dict)
    api_version: str | None = None  # e.g. Azure's api-version
    # The channel's other settings (channels.extra), e.g. a region or a project id for
    # the kinds that need more than a base URL and a key (bedrock, vertex).
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class UpstreamRequest:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes


class StreamDecoder(Protocol):
    """Per-request state machine: upstream stream bytes in, canonical events out.

    `feed` takes bytes split at arbitrary boundaries; `finish` is called once at the
    end of the upstream stream and returns whatever completes it (e.g. a Finish).
    """

    def feed(self, data: bytes) -> list[StreamEvent]: ...

    def finish(self) -> list[StreamEvent]: ...


class UsageMeter(Protocol):
    """Reads usage from a passed-through stream without changing a byte of it."""

    def feed(self, data: bytes) -> None: ...

    def usage(self) -> Usage | None: ...

    def output_text(self) -> str:
        """Text generated so far (for counting tokens when the upstream omits usage)."""
        ...

    def usage_final(self) -> bool:
        """Whether `usage()` is the upstream's final count. A stream cut short may have
        reported a running count only (Anthropic's `message_start` says `output_tokens:
        1`): the relay then bills the larger of it and the tokenizer's count of the text
        delivered, marked estimated."""
        ...
