"""What happened to one call, filled in as it goes and turned into a Record at the end."""

import time
from dataclasses import dataclass

from switchgate.billing.recorder import Record
from switchgate.core.usage import Usage
from switchgate.errors import GatewayError
from switchgate.routing.channels import Channel
from switchgate.storage.db import now_ms


@dataclass(slots=True)
class Outcome:
    request_id: str
    dialect: str
    endpoint: str
    started: float  # perf_counter at arrival
    started_ms: int
    client_ip: str | None = None
    user_id: int | None = None
    token_id: int | None = None
    model: str | None = None
    upstream_model: str | None = None
    channel: Channel | None = None
    stream: bool = False
    status: int = 200
    usage: Usage | None = None
    cost: int = 0
    ttft: float | None = None
    error: GatewayError | None = None
    upstream_attempts: int = 0  # sends upstream so far (relay/attempt.py)

    @classmethod
    def begin(
        cls, request_id: str, dialect: str, endpoint: str, client_ip: str | None
    ) -> "Outcome":
        return cls(request_id, dialect, endpoint, time.perf_counter(), now_ms(), client_ip)

    def first_byte(self) -> None:
        if self.ttft is None:
            self.ttft = time.perf_counter()

    def record(self) -> Record:
        usage = self.usage or Usage()
        return Record(
            request_id=self.request_id,
            created_at=self.started_ms,
            user_id=self.user_id,
            token_id=self.token_id,
            model=self.model,
            dialect=self.dialect,
            endpoint=self.endpoint,
            status=self.error.status if self.error and self.status < 400 else self.status,
            cost=self.cost,
            upstream_model=self.upstream_model,
            channel_id=self.channel.id if self.channel else None,
            stream=self.stream,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            reasoning_tokens=usage.reasoning_tokens,
            usage_estimated=usage.estimated,
            latency_ms=int((time.perf_counter() - self.started) * 1000),
            ttft_ms=int((self.ttft - self.started) * 1000) if self.ttft is not None else None,
            client_ip=self.client_ip,
            error=self.error.message[:500] if self.error else None,
            upstream_attempts=self.upstream_attempts,
        )
