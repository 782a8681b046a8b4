"""Admission: the steps every relayed call takes before any upstream work.

token -> principal (memory) -> policy (status, expiry, IP, spend limit) -> rate limit.
"""

import secrets
from collections.abc import Mapping
from typing import Any

from switchgate import jsonutil
from switchgate.accounts.auth import Principal
from switchgate.errors import ErrorKind, GatewayError, invalid
from switchgate.ratelimit.rates import Rate, Refusal
from switchgate.relay import policy
from switchgate.state import AppState


def new_request_id() -> str:
    return "req_" + secrets.token_hex(12)


def bearer_token(headers: Mapping[str, str]) -> str | None:
    """The token from `Authorization: Bearer X`, untrimmed (whitespace is an error)."""
    value = headers.get("authorization")
    if value is None:
        return None
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token


async def admit(state: AppState, token: str | None, client_ip: str | None) -> Principal:
    token = policy.require_token(token)
    principal = policy.check_principal(
        await state.tokens.resolve(token), client_ip, state.recorder.token_spend
    )
    p = principal
    if p.rpm_limit or p.tpm_limit or p.user_rpm_limit or p.user_tpm_limit:
        await _rate_limit(state, p)
    return principal


async def _rate_limit(state: AppState, p: Principal) -> None:
    rates = []
    if p.rpm_limit or p.tpm_limit:
        rates.append(Rate(f"t:{p.token_id}", p.rpm_limit, p.tpm_limit))
    if p.user_rpm_limit or p.user_tpm_limit:
        rates.append(Rate(f"u:{p.user_id}", p.user_rpm_limit, p.user_tpm_limit))
    state.rate_meter.watch(p.token_id, [r.key for r in rates if r.tokens])
    refused = await state.limiter.admit(rates)
    if refused is not None:
        whose = "this key" if refused.rate.key.startswith("t:") else "this account"
        raise _rate_limited(state, refused, whose, "token" if whose == "this key" else "user")


async def admit_model(state: AppState, model: str) -> None:
    """The model's own limit over every user (SWITCHGATE_MODEL_LIMITS), if it has one."""
    rate = state.model_rates.get(model)
    if rate is not None:
        refused = await state.limiter.admit([rate])
        if refused is not None:
            raise _rate_limited(state, refused, f"model {model} (all users together)", "model")


def _rate_limited(state: AppState, refused: Refusal, whose: str, scope: str) -> GatewayError:
    limit = refused.rate.requests if refused.unit == "requests" else refused.rate.tokens
    per = "rpm" if refused.unit == "requests" else "tpm"
    state.metrics.rate_limited.labels(f"{scope}_{per}").inc()
    return GatewayError(
        ErrorKind.RATE_LIMITED,
        f"Rate limit of {limit} {refused.unit} per minute reached for {whose}.",
        code="rate_limit_exceeded",
        retry_after=refused.wait,
    )


def parse_json_object(body: bytes) -> dict[str, Any]:
    if not body:
        raise invalid("The request body is empty; expected a JSON object.")
    try:
        value = jsonutil.loads(body)
    except jsonutil.JSONDecodeError as exc:
        raise invalid(f"The request body is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise invalid("The request body must be a JSON object.")
    return value
