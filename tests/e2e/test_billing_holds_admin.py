"""Issue 18, points 7 and 8: an admin debit can't leave the balance below what requests in
flight hold, and a dead process's holds stop counting within the lease TTL; on SQLite
and PostgreSQL, over real sockets."""

import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import replace

import openai
import pytest

from switchgate.cli.ops import Ops
from switchgate.money import UNITS_PER_USD, format_usd_exact
from tests.conftest import Gateway
from tests.e2e.billing_support import DATABASES, charges, database_urls, start_gateway, user_id
from tests.e2e.console_client import signed_in
from tests.support import Process, run_cli, wait_for

TTL = 3  # seconds (SWITCHGATE_LEASE_TTL_SECONDS): renewals every 0.5 s


@pytest.fixture(scope="module", params=DATABASES)
def short_leases(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    mock_upstream: Process,
) -> Iterator[Gateway]:
    for url in database_urls(request.param):
        gw = start_gateway(
            tmp_path_factory,
            mock_upstream,
            url,
            extra_env={"SWITCHGATE_LEASE_TTL_SECONDS": str(TTL)},
        )
        yield gw
        gw.process.stop()
        break


def _slow_request(gw: Gateway, token: str, seconds: float, max_tokens: int = 1000) -> None:
    client = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0, timeout=60)
    client.chat.completions.create(
        model="gpt-mock",
        max_tokens=max_tokens,
        messages=[{"role": "user", "content": f"hi [[mock:latency={int(seconds * 1000)}]]"}],
    )


def _cut_short(gw: Gateway, token: str) -> None:
    """A request the gateway dies in the middle of (kill -9): the connection just drops."""
    try:
        _slow_request(gw, token, 30.0, 2000)
    except openai.APIConnectionError:
        pass


def _debit(gw: Gateway, email: str, units: int) -> tuple[int, str]:
    result = run_cli(gw.env, "balance", "add", email, f"-{format_usd_exact(units)}", check=False)
    return result.returncode, result.stderr


@pytest.mark.timeout(150)  # a 20 s request in flight, then lease renewals
def test_a_debit_below_what_requests_in_flight_hold_is_refused(short_leases: Gateway) -> None:
    gw = short_leases
    email, token = gw.new_user(balance_usd=10)
    # Long enough to outlast two CLI runs and a console sign-in on a loaded machine.
    slow = threading.Thread(target=_slow_request, args=(gw, token, 20.0))
    slow.start()
    try:
        time.sleep(1.0)  # the request holds its worst case now
        code, err = _debit(gw, email, 10 * UNITS_PER_USD)
        assert code == 2 and "held by requests in flight" in err, err
        assert "Traceback" not in err
        # The console API says the same, as a 400.
        boss = signed_in(gw, admin=True)
        answer = boss.api("POST", f"/api/users/{user_id(gw, email)}/balance", {"amount_usd": "-10"})
        assert answer.status_code == 400 and "held by requests in flight" in answer.text
        # A debit that leaves what is held goes through.
        assert _debit(gw, email, UNITS_PER_USD)[0] == 0
    finally:
        slow.join()
    assert wait_for(lambda: charges(gw, email)[0] == 1, timeout=10)
    # Once the request is settled and its slice given back (a renewal or two), the whole
    # balance can be debited; nothing can then take it below zero.
    balance = gw.balance(email)
    assert wait_for(lambda: _debit(gw, email, balance)[0] == 0, timeout=3 * TTL)
    assert gw.balance(email) == 0  # and == sum(ledger)
    with pytest.raises(openai.APIStatusError) as refused:
        _slow_request(gw, token, 0)
    assert refused.value.status_code == 402
    assert gw.balance(email) == 0


DEAD_TTL = 8  # long enough to see the dead lease count before it stops counting


@pytest.mark.parametrize("database", DATABASES)
def test_a_dead_process_holds_stop_counting_within_the_ttl(
    tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process, database: str
) -> None:
    for url in database_urls(database):
        _dead_process(tmp_path_factory, mock_upstream, url)


def _dead_process(
    tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process, url: str | None
) -> None:
    env = {"SWITCHGATE_LEASE_TTL_SECONDS": str(DEAD_TTL)}
    first = start_gateway(tmp_path_factory, mock_upstream, url, workers=1, extra_env=env)
    email, token = first.new_user(balance_usd=0)

    async def small(ops: Ops) -> None:
        await ops.add_balance(email, UNITS_PER_USD // 100, "t", "t")  # $0.01

    first.ops(small)
    # The second process starts first, so its start-up time (long on a loaded machine)
    # is not part of the measured window: only the lease TTL is.
    started = start_gateway(
        tmp_path_factory,
        mock_upstream,
        url,
        workers=1,
        extra_env={**env, "SWITCHGATE_DATA_DIR": str(first.data_dir)},
    )
    second = replace(started, data_dir=first.data_dir)
    try:
        # In flight on the first process: holds 2,000 output tokens' worth ($0.004).
        slow = threading.Thread(target=_cut_short, args=(first, token))
        slow.daemon = True
        slow.start()
        time.sleep(1.0)
        first.process.proc.send_signal(signal.SIGKILL)  # kill -9: no lease given back
        killed = time.monotonic()
        first.process.proc.wait()
        attempts: list[int] = []

        def served() -> bool:
            try:
                _slow_request(second, token, 0, 3500)  # holds $0.007
            except openai.APIStatusError as exc:
                attempts.append(exc.status_code)
                return False
            return True

        assert wait_for(served, timeout=DEAD_TTL + 10, interval=0.2)
        waited = time.monotonic() - killed
        assert attempts and set(attempts) == {402}, "the dead process's hold counted first"
        assert waited <= DEAD_TTL + 1.5, waited  # the documented bound: the lease TTL
        assert second.balance(email) >= 0  # and == sum(ledger)
    finally:
        second.process.stop()
