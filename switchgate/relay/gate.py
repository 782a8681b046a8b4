"""Admission: the steps every relayed call takes before any upstream work.

token -> principal (memory) -> policy (status, expiry, IP, spend limit) -> rate limit.
"""

import secrets
from collections.abc import Mapping
from typing import Any

from switchgate import jsonutil
from switchgate.accounts.auth import Principal
from switchgate.errors import ErrorKind, GatewayError, invalid
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
    if principal.rpm_limit:
        wait = await state.limiter.hit(principal.token_id, principal.rpm_limit)
        if wait is not None:
            state.metrics.rate_limited.labels("token_rpm").inc()
            raise GatewayError(
                ErrorKind.RATE_LIMITED,
                f"Rate limit of {principal.rpm_limit} requests per minute reached for this key.",
                code="rate_limit_exceeded",
                retry_after=wait,
            )
    return principal


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
