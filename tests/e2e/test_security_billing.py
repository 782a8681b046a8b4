"""Issue 20, billing jam: no client-chosen string can make a charge or log row unwritable.

A model name longer than the log column used to fail its row on PostgreSQL, and the
writer retried that batch forever: later requests were served and never charged."""

import httpx
import openai
import pytest
from sqlalchemy import func, select

from switchgate.billing.recorder import NAME_LIMIT
from switchgate.cli.ops import Ops
from switchgate.storage.tables import request_logs, users
from tests.conftest import Gateway
from tests.e2e.test_billing_integrity import _charges
from tests.support import wait_for


def _long_model_rows(gw: Gateway, email: str) -> list[str]:
    async def job(ops: Ops) -> list[str]:
        async with ops.db.connect() as conn:
            user_id = await conn.scalar(select(users.c.id).where(users.c.email == email))
            rows = await conn.execute(
                select(request_logs.c.model).where(
                    request_logs.c.user_id == user_id,
                    func.length(request_logs.c.model) >= NAME_LIMIT,
                )
            )
            return [str(r.model) for r in rows]

    result: list[str] = gw.ops(job)
    return result


def test_an_overlong_model_name_never_jams_billing(gateway_any: Gateway) -> None:
    email, token = gateway_any.new_user()
    sdk = openai.OpenAI(base_url=f"{gateway_any.url}/v1", api_key=token, max_retries=0)
    long = "m" * 5000
    with pytest.raises(openai.NotFoundError):
        sdk.chat.completions.create(model=long, messages=[{"role": "user", "content": "hi"}])
    gemini = httpx.post(
        f"{gateway_any.url}/v1beta/models/{'g' * 5000}:generateContent",
        headers={"x-goog-api-key": token},
        json={"contents": [{"parts": [{"text": "hi"}]}]},
    )
    assert gemini.status_code == 404, gemini.text
    for _ in range(3):
        sdk.chat.completions.create(
            model="gpt-mock", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
        )
    # Everything after the long names is charged, and their rows were written, clipped.
    assert wait_for(lambda: _charges(gateway_any, email)[0] == 3, timeout=10)
    assert wait_for(lambda: len(_long_model_rows(gateway_any, email)) == 2, timeout=10)
    for model in _long_model_rows(gateway_any, email):
        assert len(model) == NAME_LIMIT and model.endswith("\u2026")


def test_choices_are_capped_and_held_for(gateway: Gateway) -> None:
    """`n` / `candidateCount` multiply the answer: bounded, and the hold covers each one
    (n=128 used to take a 0.02 USD balance to -1.26 USD)."""
    email, token = gateway.new_user(balance_usd=0)

    async def top_up(ops: Ops) -> None:
        await ops.add_balance(email, 2 * 10**10, "two cents", "test")  # 0.02 USD

    gateway.ops(top_up)
    sdk = openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=token, max_retries=0)
    hello = [{"role": "user", "content": "hi"}]
    with pytest.raises(openai.BadRequestError) as too_many:
        sdk.chat.completions.create(model="gpt-mock", n=17, messages=hello)
    assert too_many.value.code == "integer_above_max_value" and too_many.value.param == "n"
    # 1,000 output tokens at 2 USD / 1M is 0.002 USD; sixteen of them are 0.032 > 0.02.
    sdk.chat.completions.create(model="gpt-mock", n=1, max_tokens=1000, messages=hello)
    with pytest.raises(openai.APIStatusError) as short:
        sdk.chat.completions.create(model="gpt-mock", n=16, max_tokens=1000, messages=hello)
    assert short.value.status_code == 402
    gemini = httpx.post(
        f"{gateway.url}/v1beta/models/gemini-mock:generateContent",
        headers={"x-goog-api-key": token},
        json={
            "contents": [{"parts": [{"text": "hi"}]}],
            "generationConfig": {"candidateCount": 9},
        },
    )
    assert gemini.status_code == 400 and "candidateCount" in gemini.text
