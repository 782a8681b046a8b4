"""AppState: every service of a running gateway, created once at start-up.

Nothing else in the package keeps mutable state at module level; handlers reach the
services through the one AppState they are given.
"""

import os
import random
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field

from redis.asyncio import Redis

from switchgate.accounts.auth import TokenCache
from switchgate.accounts.signin_limit import AccountLimits
from switchgate.billing.leases import BalanceBook
from switchgate.billing.recorder import Recorder
from switchgate.catalog import Catalog
from switchgate.dialects.anthropic_messages.dialect import AnthropicMessagesDialect
from switchgate.dialects.gemini_generate.dialect import GeminiGenerateDialect
from switchgate.dialects.openai_chat.dialect import OpenAIChatDialect
from switchgate.money import UNITS_PER_USD
from switchgate.observability.channel_errors import ChannelErrors
from switchgate.observability.logs import AccessLog
from switchgate.observability.metrics import Metrics
from switchgate.observability.tracing import Tracing, create_tracing
from switchgate.providers.capabilities import ChatProvider
from switchgate.providers.registry import ProviderKind, chat_providers, provider_kinds
from switchgate.ratelimit.memory import MemoryRateLimiter
from switchgate.ratelimit.meter import TokenMeter, model_rates
from switchgate.ratelimit.rates import Rate
from switchgate.ratelimit.redis import RedisRateLimiter
from switchgate.relay.upstream import UpstreamClient
from switchgate.routing.breaker import Ladder
from switchgate.routing.health import Health
from switchgate.routing.key_caps import KeyCaps
from switchgate.routing.keys import KeyPicker
from switchgate.settings import Settings
from switchgate.storage.db import Database
from switchgate.storage.secrets import SecretBox
from switchgate.tokenizer import Tokenizer


@dataclass(frozen=True)
class Dialects:
    openai: OpenAIChatDialect = field(default_factory=OpenAIChatDialect)
    anthropic: AnthropicMessagesDialect = field(default_factory=AnthropicMessagesDialect)
    gemini: GeminiGenerateDialect = field(default_factory=GeminiGenerateDialect)


@dataclass
class AppState:
    settings: Settings
    db: Database
    box: SecretBox
    holder: str
    book: BalanceBook
    recorder: Recorder
    tokens: TokenCache
    upstream: UpstreamClient
    kinds: Mapping[str, ProviderKind]  # the provider registry (providers/registry.py)
    catalog: Catalog = field(default_factory=Catalog)
    health: Health = field(default_factory=Health)
    keys: KeyPicker = field(default_factory=KeyPicker)
    key_caps: KeyCaps = field(default_factory=KeyCaps)  # per-key concurrency / RPM caps
    limiter: MemoryRateLimiter | RedisRateLimiter = field(default_factory=MemoryRateLimiter)
    rate_meter: TokenMeter = field(default_factory=lambda: TokenMeter(MemoryRateLimiter()))
    model_rates: dict[str, Rate] = field(default_factory=dict)  # per-model limits, if any
    redis: Redis | None = None
    account_limits: AccountLimits = field(default_factory=AccountLimits)
    dialects: Dialects = field(default_factory=Dialects)
    tokenizer: Tokenizer = field(default_factory=Tokenizer)
    rng: random.Random = field(default_factory=random.Random)
    metrics: Metrics = field(default_factory=Metrics)
    channel_errors: ChannelErrors = field(default_factory=ChannelErrors)
    tracing: Tracing = field(default_factory=Tracing)
    config_version: int = -1
    ready: bool = False
    draining: bool = False  # set at SIGTERM: /readyz answers 503 from then on
    providers: Mapping[str, ChatProvider] = field(init=False)  # chat adapters, by kind

    def __post_init__(self) -> None:
        self.providers = chat_providers(self.kinds)

    @classmethod
    def create(cls, settings: Settings) -> "AppState":
        db = Database(settings.resolved_database_url())
        redis = Redis.from_url(settings.redis_url) if settings.redis_url else None
        holder = f"{socket.gethostname()}:{os.getpid()}:{random.getrandbits(32):08x}"
        recorder = Recorder(db, holder, settings.flush_seconds)
        limiter = RedisRateLimiter(redis) if redis is not None else MemoryRateLimiter()
        state = cls(
            settings=settings,
            db=db,
            box=SecretBox.load(
                settings.secret_key, settings.data_dir, settings.secret_key_previous
            ),
            holder=holder,
            book=BalanceBook(
                db, holder, chunk=UNITS_PER_USD, ttl_ms=int(settings.lease_ttl_seconds * 1000)
            ),
            recorder=recorder,
            tokens=TokenCache(db, recorder.token_spend),
            upstream=UpstreamClient(settings.timeouts),
            kinds=provider_kinds(),
            redis=redis,
            health=Health(
                Ladder(
                    threshold=settings.routing.breaker_threshold,
                    base=settings.routing.breaker_base_seconds,
                    max=settings.routing.breaker_max_seconds,
                    retry_after_max=settings.routing.retry_after_max_seconds,
                )
            ),
            key_caps=KeyCaps(redis),
            limiter=limiter,
            rate_meter=TokenMeter(limiter, model_rates(settings.model_limits)),
            model_rates=model_rates(settings.model_limits),
            account_limits=AccountLimits.create(settings, redis),
        )
        state.metrics = Metrics(lambda: state.catalog)
        state.tracing = create_tracing()
        if state.tracing.enabled:
            state.upstream.trace_headers = state.tracing.upstream_headers
        state.metrics.upstream_connections = lambda: state.upstream.open_connections
        state.recorder.observers.append(state.metrics.observe)
        state.recorder.observers.append(AccessLog(lambda: state.catalog).observe)
        state.recorder.flush_observers.append(state.metrics.flush_latency.observe)
        state.recorder.observers.append(state.rate_meter.observe)
        state.recorder.alerts.append(state.metrics.alert)
        return state
