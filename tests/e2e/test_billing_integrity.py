"""Money is never lost, double-counted or overdrawn: concurrent requests against a small
balance, and charges that are still queued when the gateway is stopped."""

import signal
from concurrent.futures import ThreadPoolExecutor

import openai
import pytest
from sqlalchemy import func, select

from switchgate.cli.ops import Ops
from switchgate.money import UNITS_PER_USD
from switchgate.storage.tables import ledger, request_logs, users
from tests.conftest import Gateway, config_toml
from tests.support import Process, free_port, gateway_env, start_process, wait_for


def _charges(gw: Gateway, email: str) -> tuple[int, int]:
    """(number of charge rows, their total) for a user."""

    async def job(ops: Ops) -> tuple[int, int]:
        async with ops.db.connect() as conn:
            user_id = await conn.scalar(select(users.c.id).where(users.c.email == email))
            row = (
                await conn.execute(
                    select(func.count(), func.coalesce(func.sum(ledger.c.amount), 0)).where(
                        ledger.c.user_id == user_id, ledger.c.kind == "charge"
                    )
                )
            ).one()
            return int(row[0]), -int(row[1])

    result: tuple[int, int] = gw.ops(job)
    return result


def test_concurrent_requests_never_overdraw(gateway_any: Gateway) -> None:
    email, token = gateway_any.new_user(balance_usd=0)

    async def top_up(ops: Ops) -> None:
        await ops.add_balance(email, 500 * UNITS_PER_USD // 10**6, "small", "test")  # $0.0005

    gateway_any.ops(top_up)
    sdk = openai.OpenAI(base_url=f"{gateway_any.url}/v1", api_key=token, max_retries=0)

    def one(_: int) -> bool:
        try:
            sdk.chat.completions.create(
                model="gpt-mock", max_tokens=10, messages=[{"role": "user", "content": "tiny"}]
            )
            return True
        except openai.APIStatusError as exc:
            assert exc.status_code == 402
            return False

    with ThreadPoolExecutor(max_workers=16) as pool:
        outcomes = list(pool.map(one, range(40)))
    succeeded = sum(outcomes)
    assert succeeded >= 5 and not all(outcomes)
    assert wait_for(lambda: _charges(gateway_any, email)[0] == succeeded, timeout=10)
    _, total = _charges(gateway_any, email)
    balance = gateway_any.balance(email)  # also checks ledger == balance
    assert balance >= 0
    assert balance == 500 * UNITS_PER_USD // 10**6 - total


def test_queued_charges_survive_a_stop(
    tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process
) -> None:
    data_dir = tmp_path_factory.mktemp("stop")
    config = data_dir / "c.toml"
    config.write_text(config_toml(mock_upstream.base_url, f"http://127.0.0.1:{free_port()}"))
    env = gateway_env(data_dir, None)
    env["SWITCHGATE_FLUSH_SECONDS"] = "3600"  # nothing is written until shutdown
    port = free_port()
    process = start_process(
        ["serve", "--port", str(port), "--config", str(config)],
        env,
        data_dir / "gw.log",
        f"http://127.0.0.1:{port}/healthz",
    )
    gw = Gateway(process, mock_upstream.base_url, data_dir, None)
    try:
        email, token = gw.new_user()
        sdk = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0)
        for _ in range(3):
            sdk.chat.completions.create(
                model="gpt-mock", messages=[{"role": "user", "content": "hi"}]
            )
        assert _charges(gw, email) == (0, 0), "charges are batched, not written per request"
        process.proc.send_signal(signal.SIGTERM)
        # uvicorn shuts down gracefully, then re-raises the signal it caught.
        assert process.proc.wait(timeout=30) in (0, -signal.SIGTERM)
    finally:
        process.stop()
    count, total = _charges(gw, email)
    assert count == 3 and total > 0
    assert gw.balance(email) == 10 * UNITS_PER_USD - total

    async def logs(ops: Ops) -> int:
        async with ops.db.connect() as conn:
            return int(await conn.scalar(select(func.count()).select_from(request_logs)) or 0)

    assert gw.ops(logs) == 3
