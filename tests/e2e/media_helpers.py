"""Shared by the media end-to-end tests: SDK clients, prices in units, log rows."""

import struct
from typing import Any

import openai
from sqlalchemy import select

from switchgate.accounts import service as accounts
from switchgate.storage.tables import request_logs
from tests.conftest import Gateway

UNITS = 10**12
PER_TOKEN = UNITS // 10**6  # $1 per 1M tokens, in units per token


def client(gw: Gateway, token: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0, timeout=30)


def usd(text: str) -> int:
    """Exact units of a USD amount written with up to 12 decimals."""
    whole, _, frac = text.partition(".")
    return int(whole) * UNITS + int((frac + "0" * 12)[:12])


def log_rows(gw: Gateway, email: str) -> list[dict[str, Any]]:
    """This user's request-log rows, oldest first."""

    async def job(ops: Any) -> list[dict[str, Any]]:
        async with ops.db.connect() as conn:
            user = await accounts.get_user(conn, email)
            rows = await conn.execute(
                select(request_logs)
                .where(request_logs.c.user_id == user.id)
                .order_by(request_logs.c.id)
            )
            return [dict(r._mapping) for r in rows]

    result: list[dict[str, Any]] = gw.ops(job)
    return result


def wav(seconds: float, rate: int = 16_000) -> bytes:
    """A silent 16-bit mono PCM WAV file of `seconds`."""
    size = int(rate * seconds) * 2
    header = (
        b"RIFF"
        + struct.pack("<I", 36 + size)
        + b"WAVEfmt "
        + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16)
        + b"data"
        + struct.pack("<I", size)
    )
    return header + bytes(size)
