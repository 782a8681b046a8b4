"""Helpers for the billing fault tests: two-worker gateways on SQLite and PostgreSQL, and
reads of what was charged and logged."""

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import func, select

from switchgate.cli.ops import Ops
from switchgate.money import per_million_to_unit_price
from switchgate.storage.tables import balance_leases, failed_charges, ledger, request_logs, users
from tests.conftest import PRICES, Gateway, config_toml
from tests.support import (
    IN_CI,
    Process,
    free_port,
    gateway_env,
    postgres_available,
    postgres_database,
    start_process,
)


def start_gateway(
    tmp_path_factory: pytest.TempPathFactory,
    mock: Process,
    database_url: str | None,
    *,
    workers: int = 2,
    extra_env: dict[str, str] | None = None,
) -> Gateway:
    data_dir = tmp_path_factory.mktemp("billing")
    config = data_dir / "switchgate.toml"
    config.write_text(config_toml(mock.base_url, f"http://127.0.0.1:{free_port()}"))
    env = gateway_env(data_dir, database_url)
    env.update(extra_env or {})
    port = free_port()
    proc = start_process(
        ["serve", "--port", str(port), "--config", str(config), "--workers", str(workers)],
        env,
        data_dir / "gateway.log",
        f"http://127.0.0.1:{port}/healthz",
    )
    return Gateway(proc, mock.base_url, data_dir, database_url)


def database_urls(name: str) -> Iterator[str | None]:
    """None (SQLite) or a fresh PostgreSQL database ("sqlite" / "postgres")."""
    if name == "sqlite":
        yield None
        return
    if not postgres_available():
        if IN_CI:
            pytest.fail("PostgreSQL is required in CI but is not reachable")
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
    with postgres_database() as url:
        yield url


DATABASES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def user_id(gw: Gateway, email: str) -> int:
    async def job(ops: Ops) -> int:
        async with ops.db.connect() as conn:
            return int(await conn.scalar(select(users.c.id).where(users.c.email == email)) or 0)

    return int(gw.ops(job))


def logs(gw: Gateway, email: str) -> list[Any]:
    """The user's request log rows, oldest first."""
    uid = user_id(gw, email)

    async def job(ops: Ops) -> list[Any]:
        async with ops.db.connect() as conn:
            query = select(request_logs).where(request_logs.c.user_id == uid)
            return list((await conn.execute(query.order_by(request_logs.c.id))).all())

    return list(gw.ops(job))


def charges(gw: Gateway, email: str) -> tuple[int, int]:
    """(number of charge rows, their total) for a user."""
    uid = user_id(gw, email)

    async def job(ops: Ops) -> tuple[int, int]:
        async with ops.db.connect() as conn:
            row = (
                await conn.execute(
                    select(func.count(), func.coalesce(func.sum(ledger.c.amount), 0)).where(
                        ledger.c.user_id == uid, ledger.c.kind == "charge"
                    )
                )
            ).one()
            return int(row[0]), -int(row[1])

    result: tuple[int, int] = gw.ops(job)
    return result


def failures(gw: Gateway) -> list[Any]:
    async def job(ops: Ops) -> list[Any]:
        async with ops.db.connect() as conn:
            return list((await conn.execute(select(failed_charges))).all())

    return list(gw.ops(job))


def leases(gw: Gateway) -> int:
    async def job(ops: Ops) -> int:
        async with ops.db.connect() as conn:
            return int(await conn.scalar(select(func.count()).select_from(balance_leases)) or 0)

    return int(gw.ops(job))


@pytest.fixture(scope="session", params=DATABASES, name="two_workers")
def two_workers_fixture(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    mock_upstream: Process,
) -> Iterator[Gateway]:
    """A gateway with two worker processes, on SQLite and on PostgreSQL."""
    for url in database_urls(request.param):
        gw = start_gateway(tmp_path_factory, mock_upstream, url)
        yield gw
        gw.process.stop()
        break


def _unit(model: str, kind: str) -> int:
    spec = PRICES[model]
    return per_million_to_unit_price(spec.get(kind, spec["input"]))


def expected_cost(model: str, row: Any) -> int:
    """Independent of billing/pricing.py: the documented formula over the logged counts."""
    uncached = row.input_tokens - row.cache_read_tokens - row.cache_write_tokens
    return (
        uncached * _unit(model, "input")
        + row.cache_read_tokens * _unit(model, "cache_read")
        + row.cache_write_tokens * _unit(model, "cache_write")
        + row.output_tokens * _unit(model, "output")
    )
