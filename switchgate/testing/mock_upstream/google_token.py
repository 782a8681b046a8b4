"""A fake Google OAuth 2 token endpoint for service accounts (`POST /token`, like
https://oauth2.googleapis.com/token), as google-auth uses it:

    grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<RS256 JWT>

The assertion must be signed with the private key whose public half was registered for
its issuer (header `kid` = the key's `private_key_id`), `aud` must be Google's token URI
(google-auth always sends that, whatever `token_uri` it posts to), `scope` must be given,
and `iat`/`exp` must be a window of at most an hour around now. Answers and refusals are
shaped like Google's (`{"access_token", "expires_in", "token_type"}`; 400 `invalid_grant`
/ `invalid_scope` / `unsupported_grant_type` with an `error_description`).

Service accounts are registered by the test, as they would be in a Google project:
POST /_mock/google/service-accounts {client_email, private_key_id, public_key (PEM),
project_id, token_ttl?}; GET lists them with the tokens issued; POST
/_mock/google/expire-tokens makes every issued token invalid (a revoked or expired one).
"""

import base64
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import parse_qsl

from aiohttp import web
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import RSAKey

from switchgate import jsonutil

from .httpkit import json_response
from .state import MockState

GOOGLE_TOKEN_URI: Final = "https://oauth2.googleapis.com/token"
JWT_GRANT: Final = "urn:ietf:params:oauth:grant-type:jwt-bearer"
MAX_LIFETIME: Final = 3600  # seconds between iat and exp
CLOCK_SKEW: Final = 300  # seconds of tolerated clock difference
_TIMEFRAME: Final = (
    "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable "
    "timeframe. Check your iat and exp values in the JWT claim."
)


@dataclass(slots=True)
class ServiceAccountRecord:
    email: str
    key_id: str
    public_key: RSAKey
    project_id: str
    token_ttl: int = 3600
    tokens_issued: int = 0
    scopes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Grant:
    account: ServiceAccountRecord
    expires: float
    scopes: tuple[str, ...]


class GoogleAccounts:
    """The registered service accounts and the access tokens issued to them."""

    def __init__(self, state: MockState) -> None:
        self.state = state  # token requests are recorded like any other (no body kept)
        self.accounts: dict[str, ServiceAccountRecord] = {}
        self.tokens: dict[str, Grant] = {}

    def grant(self, token: str) -> Grant | None:
        """The live grant of an access token (None: unknown, expired or revoked)."""
        grant = self.tokens.get(token)
        if grant is None or grant.expires <= time.time():
            return None
        return grant

    # ------------------------------------------------------------ the token endpoint

    async def token(self, request: web.Request) -> web.Response:
        await self.state.intake(request)
        form = dict(parse_qsl((await request.read()).decode(errors="replace")))
        if form.get("grant_type") != JWT_GRANT:
            return _refuse(
                "unsupported_grant_type", f"Invalid grant_type: {form.get('grant_type', '')}"
            )
        assertion = form.get("assertion")
        if not assertion:
            return _refuse("invalid_request", "Missing required parameter: assertion")
        return self._exchange(assertion)

    def _exchange(self, assertion: str) -> web.Response:
        header, unverified = _segment(assertion, 0), _segment(assertion, 1)
        issuer = unverified.get("iss") if unverified else None
        account = self.accounts.get(issuer) if isinstance(issuer, str) else None
        if account is None:
            return _refuse("invalid_grant", "Invalid grant: account not found")
        if header is None or header.get("alg") != "RS256" or header.get("kid") != account.key_id:
            return _refuse("invalid_grant", "Invalid JWT Signature.")
        try:
            claims = jwt.decode(assertion, account.public_key, algorithms=["RS256"]).claims
        except (JoseError, ValueError):
            return _refuse("invalid_grant", "Invalid JWT Signature.")
        if claims.get("aud") != GOOGLE_TOKEN_URI:
            return _refuse(
                "invalid_grant",
                f"Invalid JWT: Failed audience check. The right audience is {GOOGLE_TOKEN_URI}",
            )
        iat, exp, now = claims.get("iat"), claims.get("exp"), time.time()
        if (
            not isinstance(iat, int)
            or not isinstance(exp, int)
            or iat > now + CLOCK_SKEW
            or exp <= now - CLOCK_SKEW
            or exp <= iat
            or exp - iat > MAX_LIFETIME
        ):
            return _refuse("invalid_grant", _TIMEFRAME)
        scope = claims.get("scope")
        if not isinstance(scope, str) or not scope.split():
            return _refuse("invalid_scope", "Invalid OAuth scope or ID token audience provided.")
        token = "ya29.mock-" + secrets.token_urlsafe(24)
        self.tokens[token] = Grant(account, now + account.token_ttl, tuple(scope.split()))
        account.tokens_issued += 1
        account.scopes = scope.split()
        return json_response(
            {"access_token": token, "expires_in": account.token_ttl, "token_type": "Bearer"}
        )

    # ------------------------------------------------------------ control

    async def register(self, request: web.Request) -> web.Response:
        try:
            data: Any = await request.json()
            record = ServiceAccountRecord(
                email=str(data["client_email"]),
                key_id=str(data["private_key_id"]),
                public_key=RSAKey.import_key(str(data["public_key"])),
                project_id=str(data["project_id"]),
                token_ttl=int(data.get("token_ttl", 3600)),
            )
        except (KeyError, TypeError, ValueError, JoseError) as exc:
            return json_response({"error": f"bad service account: {exc}"}, 400)
        self.accounts[record.email] = record
        return json_response({"registered": record.email})

    async def list(self, request: web.Request) -> web.Response:
        return json_response(
            [
                {
                    "client_email": a.email,
                    "project_id": a.project_id,
                    "tokens_issued": a.tokens_issued,
                    "scopes": a.scopes,
                }
                for a in self.accounts.values()
            ]
        )

    async def expire_tokens(self, request: web.Request) -> web.Response:
        count = len(self.tokens)
        self.tokens.clear()
        return json_response({"expired": count})


def _refuse(error: str, description: str) -> web.Response:
    return json_response({"error": error, "error_description": description}, 400)


def _segment(assertion: str, index: int) -> dict[str, Any] | None:
    """The JSON of one JWT segment, unverified (to find whose key should verify it)."""
    parts = assertion.split(".")
    if len(parts) != 3:
        return None
    try:
        padded = parts[index] + "=" * (-len(parts[index]) % 4)
        value = jsonutil.loads(base64.urlsafe_b64decode(padded))
    except (ValueError, TypeError):
        return None
    return value if isinstance(value, dict) else None
