"""Cancel the work of a request when its client goes away."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from switchgate.relay.asgi import ClientGone, Receive


@asynccontextmanager
async def cancel_on_disconnect(receive: Receive) -> AsyncIterator[None]:
    """Inside the block, a client disconnect cancels the current task and surfaces
    as ClientGone (so the caller can still bill what was delivered)."""
    task = asyncio.current_task()
    assert task is not None
    gone = False

    async def watch() -> None:
        nonlocal gone
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                gone = True
                task.cancel()
                return

    watcher = asyncio.create_task(watch())
    try:
        yield
    except asyncio.CancelledError:
        if gone:
            task.uncancel()
            raise ClientGone() from None
        raise
    finally:
        watcher.cancel()
