"""Token limits enforced by the relay, each refused in the client's own dialect."""

import time

import anthropic
import openai
import pytest

from switchgate.cli.ops import Ops
from switchgate.money import UNITS_PER_USD
from tests.conftest import Gateway


def token_with(gateway: Gateway, **limits: object) -> str:
    email, _ = gateway.new_user()

    async def job(ops: Ops) -> str:
        return (await ops.create_token(email, "limited", **limits)).token

    return str(gateway.ops(job))


def ask(gateway: Gateway, token: str, model: str = "gpt-mock") -> None:
    openai.OpenAI(
        base_url=f"{gateway.url}/v1", api_key=token, max_retries=0
    ).chat.completions.create(model=model, messages=[{"role": "user", "content": "hi"}])


def test_expired_token_is_refused(gateway: Gateway) -> None:
    token = token_with(gateway, expires_at=int(time.time() * 1000) - 1000)
    with pytest.raises(openai.AuthenticationError) as info:
        ask(gateway, token)
    assert info.value.code == "token_expired"
    claude = anthropic.Anthropic(base_url=gateway.url, api_key=token, max_retries=0)
    with pytest.raises(anthropic.AuthenticationError) as ainfo:
        claude.messages.create(
            model="claude-mock", max_tokens=8, messages=[{"role": "user", "content": "x"}]
        )
    assert ainfo.value.body["error"]["type"] == "authentication_error"  # type: ignore[index]


def test_token_from_another_ip_is_refused(gateway: Gateway) -> None:
    token = token_with(gateway, allowed_ips=["10.0.0.0/8"])
    with pytest.raises(openai.PermissionDeniedError) as info:
        ask(gateway, token)
    assert info.value.code == "ip_not_allowed"
    ask(gateway, token_with(gateway, allowed_ips=["127.0.0.1/32"]))


def test_model_allowlist(gateway: Gateway) -> None:
    token = token_with(gateway, allowed_models=["claude-mock"])
    with pytest.raises(openai.PermissionDeniedError):
        ask(gateway, token, "gpt-mock")
    ask(gateway, token, "claude-mock")
    ids = {m.id for m in openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=token).models.list()}
    assert ids == {"claude-mock"}


def test_spending_limit(gateway: Gateway) -> None:
    # A request is reserved against the limit as against the balance (issue 18, point 4):
    # its worst case (~$0.0082: 4,096 output tokens held) fits a $0.01 limit once.
    token = token_with(gateway, quota_limit=UNITS_PER_USD // 100)
    ask(gateway, token)  # costs ~$0.000013
    ask(gateway, token)  # ~$0.000013 spent + the hold still fit
    token = token_with(gateway, quota_limit=UNITS_PER_USD // 10**6)  # $0.000001
    with pytest.raises(openai.APIStatusError) as info:
        ask(gateway, token)  # nothing spent yet, but the worst case does not fit
    assert info.value.status_code == 402 and info.value.code == "token_quota_exceeded"


def test_requests_per_minute(gateway: Gateway) -> None:
    token = token_with(gateway, rpm_limit=2)
    ask(gateway, token)
    ask(gateway, token)
    with pytest.raises(openai.RateLimitError) as info:
        ask(gateway, token)
    assert int(info.value.response.headers["retry-after"]) >= 1
