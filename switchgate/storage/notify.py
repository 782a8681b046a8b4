"""Config-change notices over Redis pub/sub, so every replica reloads at once instead of
at its next poll. Polling stays on as the fallback (and is all there is without Redis)."""

import asyncio
import logging
from collections.abc import Awaitable, Callable

from redis.asyncio import Redis
from redis.exceptions import RedisError

CHANNEL = "switchgate:config"
log = logging.getLogger("switchgate.notify")


async def publish_config_changed(url: str) -> None:
    client = Redis.from_url(url)
    try:
        await client.publish(CHANNEL, b"changed")
    except (RedisError, OSError) as exc:
        log.warning("could not publish the config change to Redis: %s", exc)
    finally:
        await client.aclose()


async def publish_with(client: Redis) -> None:
    """Publish from a running gateway (the console changed something): never raises."""
    try:
        await client.publish(CHANNEL, b"changed")
    except (RedisError, OSError) as exc:
        log.warning("could not publish the config change to Redis: %s", exc)


async def listen_for_changes(client: Redis, on_change: Callable[[], Awaitable[None]]) -> None:
    """Run until cancelled; reconnects after Redis errors."""
    while True:
        try:
            async with client.pubsub() as pubsub:
                await pubsub.subscribe(CHANNEL)
                async for message in pubsub.listen():
                    if message.get("type") == "message":
                        await on_change()
        except (RedisError, OSError) as exc:
            log.warning("Redis pub/sub interrupted (%s); retrying in 1 s", exc)
            await asyncio.sleep(1.0)
