"""Tokens per minute per token and requests/tokens per minute per user, on one gateway
process without Redis (the embedded default); test_replicas.py checks them across two
replicas through Redis. The 429 names the limit in the client's dialect."""

import time

import openai
import pytest

from switchgate.cli.ops import Ops
from tests.conftest import Gateway, _start_gateway
from tests.support import Process, run_cli


def _away_from_a_minute_boundary() -> None:
    second = time.time() % 60
    if second > 45:
        time.sleep(60.5 - second)


def _ask(gw: Gateway, token: str) -> openai.types.chat.ChatCompletion:
    sdk = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0)
    return sdk.chat.completions.create(
        model="gpt-mock", messages=[{"role": "user", "content": "count my tokens"}]
    )


def test_tokens_per_minute_per_token(gateway: Gateway) -> None:
    email, probe = gateway.new_user()
    _away_from_a_minute_boundary()
    first = _ask(gateway, probe)
    assert first.usage is not None
    per_request = first.usage.prompt_tokens + first.usage.completion_tokens

    async def job(ops: Ops) -> str:
        limit = 2 * per_request + per_request // 2  # room for 3 requests, not 4
        return (await ops.create_token(email, "tpm", tpm_limit=limit)).token

    token = str(gateway.ops(job))
    for _ in range(3):
        _ask(gateway, token)
        time.sleep(0.3)  # the tokens are counted as the request is recorded
    try:
        _ask(gateway, token)
        raise AssertionError("the 4th request should have been refused")
    except openai.RateLimitError as exc:
        assert "tokens per minute reached for this key" in str(exc)
        assert int(exc.response.headers["retry-after"]) >= 1
    _ask(gateway, probe)  # the user's other token is not limited


def test_requests_per_minute_per_user_over_all_tokens(gateway: Gateway) -> None:
    email, one = gateway.new_user()

    async def job(ops: Ops) -> str:
        return (await ops.create_token(email, "second")).token

    two = str(gateway.ops(job))
    result = run_cli(gateway.env, "users", "limit", email, "--rpm", "3")
    assert "3 requests per minute" in result.stdout
    time.sleep(0.3)  # the gateway picks the change up at its next poll (0.1 s here)
    _away_from_a_minute_boundary()
    for token in (one, two, one):
        _ask(gateway, token)
    try:
        _ask(gateway, two)
        raise AssertionError("the user's 4th request should have been refused")
    except openai.RateLimitError as exc:
        assert "3 requests per minute reached for this account" in str(exc)
    run_cli(gateway.env, "users", "limit", email, "--rpm", "0")
    time.sleep(0.3)
    _ask(gateway, two)  # the limit is gone


def test_a_model_limit_counts_every_user(
    tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process
) -> None:
    limits = {"SWITCHGATE_MODEL_LIMITS": "gpt-mock=3/, claude-mock=/9"}
    gw = _start_gateway(tmp_path_factory, mock_upstream, None, limits)
    process = gw.process
    try:
        tokens = [gw.new_user()[1] for _ in range(2)]
        _away_from_a_minute_boundary()
        for token in (tokens[0], tokens[1], tokens[0]):
            _ask(gw, token)
        with pytest.raises(openai.RateLimitError) as refused:
            _ask(gw, tokens[1])
        assert "3 requests per minute reached for model gpt-mock" in str(refused.value)
        sdk = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=tokens[1], max_retries=0)
        sdk.chat.completions.create(  # another model: its own limit
            model="gpt-alias", messages=[{"role": "user", "content": "hi"}]
        )
    finally:
        process.stop()
