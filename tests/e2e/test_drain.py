"""Graceful shutdown: SIGTERM with 50 streams in flight. Every stream completes, every
charge and request-log row is written (batched writes are held back until the end),
`/readyz` answers 503 while draining, and the process exits 0."""

import asyncio
import signal
import time
import urllib.error
import urllib.request

import openai
import pytest
from sqlalchemy import func, select

from switchgate.cli.ops import Ops
from switchgate.money import UNITS_PER_USD
from switchgate.storage.tables import ledger, request_logs, users
from tests.conftest import Gateway, _start_gateway
from tests.support import Process

STREAMS = 50
CHUNKS = 30  # x 100 ms: each stream lasts ~3 s, so SIGTERM lands in the middle


def _status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, OSError):
        return None  # the listener is closed


def _written(gw: Gateway, email: str) -> tuple[int, int, int]:
    """(charge rows, their total, request-log rows) for a user."""

    async def job(ops: Ops) -> tuple[int, int, int]:
        async with ops.db.connect() as conn:
            user_id = await conn.scalar(select(users.c.id).where(users.c.email == email))
            count, total = (
                await conn.execute(
                    select(func.count(), func.coalesce(func.sum(ledger.c.amount), 0)).where(
                        ledger.c.user_id == user_id, ledger.c.kind == "charge"
                    )
                )
            ).one()
            logs = await conn.scalar(
                select(func.count())
                .select_from(request_logs)
                .where(request_logs.c.user_id == user_id)
            )
            return int(count), -int(total), int(logs or 0)

    result: tuple[int, int, int] = gw.ops(job)
    return result


def test_sigterm_drains_fifty_streams(
    tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process
) -> None:
    held_back = {
        "SWITCHGATE_FLUSH_SECONDS": "3600",  # every charge is still queued at SIGTERM
        "SWITCHGATE_DRAIN_DELAY_SECONDS": "1",
        "SWITCHGATE_DRAIN_SECONDS": "30",
    }
    gw = _start_gateway(tmp_path_factory, mock_upstream, None, held_back)
    process = gw.process
    readyz = f"{gw.url}/readyz"
    try:
        email, token = gw.new_user()
        assert _status(readyz) == 200
        readiness_seen: list[int | None] = []

        async def run() -> list[str]:
            client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0)
            started = asyncio.Event()
            first_chunks = 0

            async def one(i: int) -> str:
                nonlocal first_chunks
                stream = await client.chat.completions.create(
                    model="gpt-mock",
                    stream=True,
                    stream_options={"include_usage": True},
                    messages=[
                        {
                            "role": "user",
                            "content": f"s{i} [[mock:chunks={CHUNKS}]] [[mock:interval=100]]",
                        }
                    ],
                )
                text, finished, seen = [], None, False
                async for chunk in stream:
                    if not seen:
                        seen = True
                        first_chunks += 1
                        if first_chunks == STREAMS:
                            started.set()
                    for choice in chunk.choices:
                        text.append(choice.delta.content or "")
                        finished = choice.finish_reason or finished
                assert finished == "stop", f"stream {i} ended without finishing"
                return "".join(text)

            tasks = [asyncio.create_task(one(i)) for i in range(STREAMS)]
            await asyncio.wait_for(started.wait(), timeout=30)
            process.proc.send_signal(signal.SIGTERM)
            signalled = time.monotonic()
            while time.monotonic() - signalled < 0.8:  # within the drain delay
                readiness_seen.append(await asyncio.to_thread(_status, readyz))
                await asyncio.sleep(0.1)
            try:
                return await asyncio.gather(*tasks)
            finally:
                await client.close()

        texts = asyncio.run(run())
        assert len(texts) == STREAMS and all(texts)
        assert readiness_seen and set(readiness_seen) == {503}, readiness_seen
        assert process.proc.wait(timeout=40) == 0, process.log()
        assert _status(readyz) is None  # gone
    finally:
        process.stop()
    count, total, logs = _written(gw, email)
    assert (count, logs) == (STREAMS, STREAMS), process.log()
    assert total > 0
    assert gw.balance(email) == 10 * UNITS_PER_USD - total  # and the ledger sums to it


def test_probes_need_no_token_and_write_no_log(gateway_any: Gateway) -> None:
    async def log_rows(ops: Ops) -> int:
        async with ops.db.connect() as conn:
            return int(await conn.scalar(select(func.count()).select_from(request_logs)) or 0)

    before = gateway_any.ops(log_rows)
    for _ in range(3):
        assert _status(f"{gateway_any.url}/healthz") == 200
        assert _status(f"{gateway_any.url}/readyz") == 200
    time.sleep(0.3)  # several flush intervals (SWITCHGATE_FLUSH_SECONDS is 0.05 here)
    assert gateway_any.ops(log_rows) == before
