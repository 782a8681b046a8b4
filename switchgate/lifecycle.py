"""Start-up and shutdown of a gateway process, and its background loops."""

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from switchgate import drain
from switchgate.accounts.bootstrap import ensure_admin
from switchgate.billing.prices import load_prices
from switchgate.catalog import Catalog
from switchgate.observability.endpoint import start_listener
from switchgate.observability.sampling import process_exited, sample_metrics
from switchgate.routing.channels import load_channels
from switchgate.routing.fallbacks import load as load_fallbacks
from switchgate.routing.health_redis import share_health
from switchgate.state import AppState
from switchgate.storage import migrate
from switchgate.storage.db import now_ms
from switchgate.storage.notify import listen_for_changes

log = logging.getLogger("switchgate")


async def refresh_catalog(state: AppState) -> None:
    """Reload channels, prices and fallback models, and forget cached tokens, if the
    config changed."""
    version = await state.db.config_version()
    if version == state.config_version:
        return
    async with state.db.connect() as conn:
        channels = await load_channels(conn, state.box)
        prices = await load_prices(conn)
        fallbacks = await load_fallbacks(conn, state.settings.site_env)
    state.catalog = Catalog.build(channels, prices, now_ms(), fallbacks)
    state.keys.reloaded()
    state.tokens.clear()
    state.rate_meter.clear()
    state.config_version = version


async def _every(seconds: float, job: Callable[[], Awaitable[None]], name: str) -> None:
    while True:
        await asyncio.sleep(seconds)
        try:
            await job()
        except Exception:
            log.exception("background job %s failed; will retry", name)


class Lifecycle:
    def __init__(self, state: AppState, *, run_migrations: bool = True) -> None:
        self.state = state
        self._run_migrations = run_migrations
        self._tasks: list[asyncio.Task[None]] = []
        self._metrics_server: asyncio.Server | None = None

    async def startup(self) -> None:
        state = self.state
        if self._run_migrations:
            await migrate.upgrade(state.db)
            await ensure_admin(state.db, state.settings)
        await refresh_catalog(state)
        await state.upstream.start()
        state.recorder.start()
        self._tasks = [
            asyncio.create_task(
                _every(state.settings.config_poll_seconds, lambda: refresh_catalog(state), "config")
            ),
            asyncio.create_task(
                _every(state.settings.lease_ttl_seconds / 6, state.book.renew, "lease-renewal")
            ),
            asyncio.create_task(
                _every(state.settings.config_poll_seconds, state.tokens.refresh_spend, "spend")
            ),
        ]
        if state.redis is not None:
            self._tasks.append(
                asyncio.create_task(listen_for_changes(state.redis, lambda: refresh_catalog(state)))
            )
            self._tasks.append(  # routing health shared by every replica (docs/routing.md)
                asyncio.create_task(share_health(state.redis, state.health, state.holder))
            )
        self._tasks.append(
            asyncio.create_task(_every(1.0, lambda: sample_metrics(state), "metrics"))
        )
        self._metrics_server = await start_listener(state.settings, state.metrics)
        drain.install(state, state.settings.drain_delay_seconds)
        state.ready = True

    async def shutdown(self) -> None:
        state = self.state
        state.draining = True
        state.ready = False
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._metrics_server is not None:
            self._metrics_server.close()
        try:
            await state.recorder.close()  # every charge and log row written (or logged)
        finally:
            try:
                await state.book.close()  # then leases given back, whatever happened
            except Exception:
                log.exception("giving the balance leases back failed (they expire)")
        await state.upstream.close()
        if state.redis is not None:
            await state.redis.aclose()
        await state.db.dispose()
        process_exited()  # multi-process metrics: this worker's live gauges go away
        state.tracing.shutdown()  # the last spans are exported
