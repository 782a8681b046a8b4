"""Issue 18, points 5 and 6, over real sockets against the fake upstreams, on SQLite and
PostgreSQL with two workers: negative or absurd usage never credits anyone and is billed
from the tokenizer; one charge the database refuses does not stop the others, nor a
SIGTERM shutdown; prices no column could hold are refused wherever they are set."""

import signal
import subprocess
import sys
from collections.abc import Iterator
from subprocess import PIPE
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from sqlalchemy import select, update

from switchgate import jsonutil
from switchgate.audit.actions import list_entries
from switchgate.cli.ops import Ops
from switchgate.money import MAX_AMOUNT, UNITS_PER_USD, format_usd_exact
from switchgate.storage.db import now_ms
from switchgate.storage.tables import ledger, users
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Gateway, config_toml
from tests.e2e.billing_support import (  # noqa: F401 - two_workers is a fixture
    DATABASES,
    charges,
    database_urls,
    expected_cost,
    failures,
    leases,
    logs,
    start_gateway,
    two_workers_fixture,
    user_id,
)
from tests.e2e.console_client import Console
from tests.support import ROOT, Process, free_port, gateway_env, run_cli, wait_for

FAULTS = [
    "[[mock:usage_output=-100000]]",  # the credit of 0.999999999997 USD
    "[[mock:usage_output=1000000000000]]",  # 1e12 tokens: the poisoned charge
    "[[mock:usage_input=-7]][[mock:usage_output=-1]]",
]


def _calls(gw: Gateway, token: str, text: str) -> list[str]:
    """One request per client and shape; returns the model each was billed at."""
    oai = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0)
    ant = anthropic.Anthropic(base_url=gw.url, api_key=token, max_retries=0)
    gem = genai.Client(api_key=token, http_options={"base_url": gw.url})
    messages: Any = [{"role": "user", "content": text}]
    oai.chat.completions.create(model="gpt-mock", messages=messages)
    list(
        oai.chat.completions.create(
            model="gpt-mock",
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    oai.chat.completions.create(model="claude-mock", messages=messages)  # translated
    ant.messages.create(model="claude-mock", max_tokens=200, messages=messages)
    with ant.messages.stream(model="claude-mock", max_tokens=200, messages=messages) as stream:
        stream.get_final_message()
    gem.models.generate_content(model="gemini-mock", contents=text)
    list(gem.models.generate_content_stream(model="gemini-mock", contents=text))
    return ["gpt-mock", "gpt-mock", "claude-mock", "claude-mock", "claude-mock"] + [
        "gemini-mock"
    ] * 2


@pytest.mark.parametrize("fault", FAULTS)
def test_bogus_usage_is_billed_from_the_tokenizer(two_workers: Gateway, fault: str) -> None:
    gw = two_workers
    email, token = gw.new_user(balance_usd=10)
    models = _calls(gw, token, f"{fault} tell me something")
    assert wait_for(lambda: charges(gw, email)[0] == len(models), timeout=10)
    rows = logs(gw, email)
    assert sorted(r.model for r in rows) == sorted(models)
    for row in rows:
        assert row.status == 200 and row.usage_estimated, row
        assert 0 < row.output_tokens < 1000 and 0 < row.input_tokens < 1000, row
        assert row.cost == expected_cost(row.model, row) > 0, row
    _count, total = charges(gw, email)
    assert total == sum(r.cost for r in rows)
    assert gw.balance(email) == 10 * UNITS_PER_USD - total  # and == sum(ledger)
    assert failures(gw) == []


def _sigterm_gateway(
    tmp_path_factory: pytest.TempPathFactory, mock: Process, url: str | None
) -> Gateway:
    # Nothing is written until shutdown: every charge is still queued at the SIGTERM.
    return start_gateway(
        tmp_path_factory, mock, url, workers=2, extra_env={"SWITCHGATE_FLUSH_SECONDS": "3600"}
    )


@pytest.fixture(params=DATABASES)
def database_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    yield from database_urls(request.param)


@pytest.mark.timeout(150)  # then the CLI, a process per command
def test_a_charge_the_database_refuses_stops_neither_charging_nor_shutdown(
    tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process, database_url: str | None
) -> None:
    gw = _sigterm_gateway(tmp_path_factory, mock_upstream, database_url)
    try:
        _poisoned_then_sigterm(gw)
    finally:
        gw.process.stop()


def _poisoned_then_sigterm(gw: Gateway) -> None:
    poisoned, bad_token = gw.new_user(balance_usd=10)
    payer, token = gw.new_user(balance_usd=10)
    oai = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=bad_token, max_retries=0)
    oai.chat.completions.create(model="gpt-mock", messages=[{"role": "user", "content": "hi"}])
    bad_id = user_id(gw, poisoned)

    async def owe_nearly_everything(ops: Ops) -> None:
        # Behind the gateway's back (by SQL: ledger.add_entry refuses a debit below what
        # requests hold): the balance drops so low that no charge fits its 64-bit column
        # any more. The queued charge is now poisoned.
        async with ops.db.begin() as conn:
            balance = int(await conn.scalar(select(users.c.balance).where(users.c.id == bad_id)))
            debt = -(MAX_AMOUNT - 3)
            for amount in (-balance, debt):
                await conn.execute(
                    ledger.insert().values(
                        user_id=bad_id, amount=amount, kind="adjust", created_at=now_ms()
                    )
                )
            await conn.execute(update(users).where(users.c.id == bad_id).values(balance=debt))

    gw.ops(owe_nearly_everything)
    oai = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0)
    for _ in range(20):
        oai.chat.completions.create(model="gpt-mock", messages=[{"role": "user", "content": "hi"}])
    assert charges(gw, payer) == (0, 0), "charges are still queued"
    gw.process.proc.send_signal(signal.SIGTERM)
    assert gw.process.proc.wait(timeout=60) in (0, -signal.SIGTERM)
    count, total = charges(gw, payer)
    assert count == 20 and total > 0
    assert gw.balance(payer) == 10 * UNITS_PER_USD - total
    assert gw.balance(poisoned) == -(MAX_AMOUNT - 3)  # not charged, and == sum(ledger)
    [failed] = failures(gw)
    assert failed.user_id == bad_id and int(failed.cost) > 0 and "ChargeRefused" in failed.reason
    assert leases(gw) == 0, "every lease handed back"
    assert "could not be written" in gw.process.log()
    assert len(logs(gw, payer)) == 20 and len(logs(gw, poisoned)) == 1
    _retried_by_cli(gw, poisoned, failed)


def _retried_by_cli(gw: Gateway, email: str, failed: Any) -> None:
    """`charges failed` lists the charge; `charges retry` is refused while the cause
    lasts, then, with the balance back in range, charges it exactly once even when two
    retries race."""
    env, cost = gw.env, int(failed.cost)
    listed = run_cli(env, "charges", "failed").stdout
    assert f"#{failed.id} " in listed and email in listed and "ChargeRefused" in listed
    assert f"${format_usd_exact(cost)}" in listed
    [row] = [
        jsonutil.loads(line)
        for line in run_cli(env, "charges", "failed", "--json").stdout.splitlines()
    ]
    assert row["id"] == failed.id and row["email"] == email and row["amount_units"] == cost
    assert row["request_id"] == failed.request_id and row["failed_at"] > 0

    refused = run_cli(env, "charges", "retry", str(failed.id), check=False)
    assert refused.returncode == 2 and "not applied" in refused.stderr, refused
    assert "Traceback" not in refused.stderr
    assert len(failures(gw)) == 1 and charges(gw, email) == (0, 0)  # rolled back

    async def credit(ops: Ops) -> None:  # the operator puts the balance back in range
        await ops.add_balance(email, 10 * UNITS_PER_USD, "fixed", actor="cli")

    gw.ops(credit)
    before = gw.balance(email)
    command = [sys.executable, "-m", "switchgate", "charges", "retry", str(failed.id)]
    racers = [
        subprocess.Popen(command, env=env, cwd=ROOT, stdout=PIPE, stderr=PIPE, text=True)
        for _ in range(2)
    ]
    results = sorted((p.wait(timeout=60), p.communicate()) for p in racers)
    (won, (out, _)), (lost, (_, err)) = results
    assert (won, lost) == (0, 2), results
    assert email in out and "no failed charge" in err
    assert gw.balance(email) == before - cost  # == sum(ledger), checked by balance()
    assert charges(gw, email) == (1, cost) and failures(gw) == []
    again = run_cli(env, "charges", "retry", str(failed.id), check=False)
    assert again.returncode == 2 and "already retried" in again.stderr

    async def audited(ops: Ops) -> list[dict[str, Any]]:
        async with ops.db.connect() as conn:
            return await list_entries(conn, action="charges retry")

    [entry] = gw.ops(audited)
    assert failed.request_id in entry["detail"] and entry["target"] == email


def test_prices_no_column_can_hold_are_refused_with_a_clear_error(
    gateway: Gateway, tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process
) -> None:
    env = gateway.env
    for args in (
        ["--input", "1e13", "--output", "1"],  # the old traceback: > 64 bits of units
        ["--input", "1", "--output", "20000"],  # above $10,000 per 1M
        ["--input", "1", "--output", "1", "--per-request", "20000"],  # above $10,000
    ):
        result = run_cli(env, "prices", "set", "m-huge", *args, check=False)
        assert result.returncode == 2, result
        assert result.stderr.startswith("error: ") and "too large" in result.stderr
        assert "Traceback" not in result.stderr + result.stdout
    assert run_cli(env, "prices", "set", "m-ok", "--input", "10000", "--output", "1")

    # The console API: a 400 with the reason.
    boss = Console(gateway)
    assert boss.signin(ADMIN_EMAIL, ADMIN_PASSWORD).status_code == 303
    answer = boss.api("PUT", "/api/prices/m-huge", {"input_per_1m": "1e13", "output_per_1m": "1"})
    assert answer.status_code == 400 and "too large" in answer.text

    # A config file: the server refuses to start, saying why (no traceback).
    data_dir = tmp_path_factory.mktemp("hugeprice")
    config = data_dir / "c.toml"
    text = config_toml(mock_upstream.base_url, f"http://127.0.0.1:{free_port()}")
    config.write_text(text + '\n[prices."m-huge"]\ninput = "1e13"\noutput = "1"\n')
    result = run_cli(
        gateway_env(data_dir, None),
        "serve",
        "--port",
        str(free_port()),
        "--config",
        str(config),
        check=False,
    )
    assert result.returncode == 2 and "too large" in result.stderr, result
    assert "Traceback" not in result.stderr


def test_metrics_count_spend_in_exact_units(two_workers: Gateway) -> None:
    _email, token = two_workers.new_user(balance_usd=1)
    oai = openai.OpenAI(base_url=f"{two_workers.url}/v1", api_key=token, max_retries=0)
    oai.chat.completions.create(model="gpt-mock", messages=[{"role": "user", "content": "hi"}])
    text = httpx.get(f"{two_workers.url}/metrics").text
    lines = [line for line in text.splitlines() if line.startswith("switchgate_cost_")]
    values = {line.split("{")[0]: line.rsplit(" ", 1)[1] for line in lines}
    assert values["switchgate_cost_units_total"].isdigit()  # integer units
    whole, _, frac = values["switchgate_cost_usd_total"].partition(".")
    assert whole.isdigit() and frac.isdigit()  # an exact decimal, never 1.3e-05
    assert 'switchgate_billing_alerts_total{kind="charge_failed"}' in text
