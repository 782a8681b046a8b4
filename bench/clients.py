"""Upstream-client evidence: how much CPU aiohttp, httpx and switchgate's own client
(`switchgate/relay/http1.py`) spend per request against the fake upstream (one process,
one CPU, 1 and 64 concurrent requests), and a bare asyncio protocol client as the floor.

    .venv/bin/python -m bench.clients
"""

import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench.loadgen import Conn
from bench.procs import pin_self
from bench.targets import start_upstream
from bench.upstream import run as run_loop

BODY = json.dumps(
    {"model": "m", "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 64}
).encode()
PATH = "/u/0/20/0/v1/chat/completions"
HEADERS = {"content-type": "application/json", "authorization": "Bearer mock-key"}


async def _drive(call: Callable[[], Awaitable[None]], concurrency: int, seconds: float) -> int:
    done = 0
    end = time.perf_counter() + seconds

    async def worker() -> None:
        nonlocal done
        while time.perf_counter() < end:
            await call()
            done += 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return done


async def bench_aiohttp(url: str, concurrency: int, seconds: float) -> int:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=75)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def call() -> None:
            async with session.post(url, data=BODY, headers=HEADERS) as response:
                await response.read()

        return await _drive(call, concurrency, seconds)


async def bench_httpx(url: str, concurrency: int, seconds: float) -> int:
    import httpx

    limits = httpx.Limits(max_connections=None, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits) as client:

        async def call() -> None:
            response = await client.post(url, content=BODY, headers=HEADERS)
            await response.aread()

        return await _drive(call, concurrency, seconds)


async def bench_switchgate(url: str, concurrency: int, seconds: float) -> int:
    from switchgate.providers.base import UpstreamRequest
    from switchgate.relay.upstream import UpstreamClient, read_all
    from switchgate.settings import Timeouts

    client = UpstreamClient(Timeouts())
    await client.start()
    request = UpstreamRequest("POST", url, HEADERS, BODY)

    async def call() -> None:
        response = await client.send(request)
        try:
            await read_all(response)
        finally:
            response.release()

    try:
        return await _drive(call, concurrency, seconds)
    finally:
        await client.close()


async def bench_raw(url: str, concurrency: int, seconds: float) -> int:
    host, port = url.split("//")[1].split("/")[0].split(":")
    head = f"POST {PATH} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n"
    request = (head + f"content-length: {len(BODY)}\r\n\r\n").encode() + BODY
    loop = asyncio.get_running_loop()
    pool: list[Conn] = []
    for _ in range(concurrency):
        _, conn = await loop.create_connection(Conn, host, int(port))
        pool.append(conn)

    async def call() -> None:
        conn = pool.pop()
        await conn.request(request)
        pool.append(conn)

    return await _drive(call, concurrency, seconds)


def _box(fn: Any, url: str, concurrency: int) -> list[int]:
    box: list[int] = []

    async def go() -> None:
        box.append(await fn(url, concurrency, 3.0))

    run_loop(go())
    return box


def main() -> int:
    pin_self({0})
    work = Path("bench/results/tmp/clients")
    work.mkdir(parents=True, exist_ok=True)
    upstream, port = start_upstream(work, {1} if (os.cpu_count() or 1) > 1 else {0})
    url = f"http://127.0.0.1:{port}{PATH}"
    results: dict[str, Any] = {}
    try:
        for name, fn in (
            ("aiohttp", bench_aiohttp),
            ("httpx", bench_httpx),
            ("switchgate", bench_switchgate),
            ("raw", bench_raw),
        ):
            for concurrency in (1, 64):
                cpu0, t0 = time.process_time(), time.perf_counter()
                box = _box(fn, url, concurrency)
                cpu, wall = time.process_time() - cpu0, time.perf_counter() - t0
                results[f"{name}-c{concurrency}"] = {
                    "requests": box[0],
                    "rps": round(box[0] / wall),
                    "cpu_ms_per_request": round(cpu * 1000 / box[0], 4),
                }
                print(f"{name:<10} c={concurrency:<3} {results[f'{name}-c{concurrency}']}")
    finally:
        upstream.stop()
    out = Path("bench/results/clients.json")
    out.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
