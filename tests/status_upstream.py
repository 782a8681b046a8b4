"""A tiny upstream that answers every call under `/s/<status>/...` with that HTTP status
(an OpenAI-shaped error body; 429 with Retry-After) and under `/slow/<ms>/...` only after
that many milliseconds: for the diagnoses of `channels test` and `doctor`."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web

from switchgate.testing.mock_upstream.errors import openai_error_body


async def _status(request: web.Request) -> web.Response:
    status = int(request.match_info["status"])
    headers = {"retry-after": "30"} if status == 429 else {}
    return web.json_response(openai_error_body(status), status=status, headers=headers)


async def _slow(request: web.Request) -> web.Response:
    await asyncio.sleep(int(request.match_info["ms"]) / 1000)
    return web.json_response({"model": "slow", "choices": []})


@asynccontextmanager
async def status_upstream() -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_route("*", "/s/{status:\\d+}/{tail:.*}", _status)
    app.router.add_route("*", "/slow/{ms:\\d+}/{tail:.*}", _slow)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()
