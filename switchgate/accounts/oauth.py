"""Sign-in with GitHub (OAuth 2) and Google (OpenID Connect), through Authlib.

The authorization-code flow with PKCE: `start` builds the provider's authorization URL
and the pending state (kept by the caller in an encrypted cookie); `finish` exchanges the
code, and returns who signed in. Endpoints come from the site settings, so a test (or a
GitHub Enterprise) can point them elsewhere; Google's come from OpenID discovery.
"""

import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import httpx

from switchgate import jsonutil
from switchgate.accounts.identities import ProviderIdentity
from switchgate.accounts.site_settings import SiteSettings

if TYPE_CHECKING:  # Authlib and joserfc load on the first OAuth sign-in, not at start-up
    from authlib.integrations.httpx_client import AsyncOAuth2Client

PROVIDERS: Final = ("github", "google")
PENDING_TTL_SECONDS: Final = 600
_TIMEOUT: Final = 15.0


class OAuthError(RuntimeError):
    """The provider refused, or answered something the gateway can't use."""


@dataclass(frozen=True)
class Provider:
    name: str
    client_id: str
    client_secret: str
    authorize_url: str
    token_url: str
    userinfo_url: str
    scope: str
    emails_url: str | None = None  # GitHub: the verified addresses
    issuer: str | None = None  # OpenID Connect only
    jwks_uri: str | None = None


@dataclass(frozen=True)
class Pending:
    provider: str
    state: str
    nonce: str
    verifier: str
    mode: str  # signin | link
    created: float

    def dumps(self) -> str:
        return jsonutil.dumps_str(self.__dict__)

    @classmethod
    def loads(cls, text: str) -> "Pending":
        return cls(**jsonutil.loads(text))

    @property
    def expired(self) -> bool:
        return time.time() - self.created > PENDING_TTL_SECONDS


async def _get_json(url: str, **kwargs: Any) -> Any:
    async with httpx.AsyncClient(timeout=_TIMEOUT) as client:
        response = await client.get(url, **kwargs)
    if response.status_code != 200:
        raise OAuthError(f"{url} answered {response.status_code}")
    return response.json()


async def load_provider(site: SiteSettings, name: str) -> Provider | None:
    if name not in PROVIDERS or not site.provider_configured(name):
        return None
    client_id, secret = site.get(f"{name}_client_id"), site.get(f"{name}_client_secret")
    if name == "github":
        api = site.get("github_api_url").rstrip("/")
        return Provider(
            name="github",
            client_id=client_id,
            client_secret=secret,
            authorize_url=site.get("github_authorize_url"),
            token_url=site.get("github_token_url"),
            userinfo_url=f"{api}/user",
            emails_url=f"{api}/user/emails",
            scope="read:user user:email",
        )
    issuer = site.get("google_issuer").rstrip("/")
    try:
        meta = await _get_json(f"{issuer}/.well-known/openid-configuration")
    except (httpx.HTTPError, ValueError) as exc:
        raise OAuthError(f"OpenID discovery failed for {issuer}") from exc
    return Provider(
        name="google",
        client_id=client_id,
        client_secret=secret,
        authorize_url=meta["authorization_endpoint"],
        token_url=meta["token_endpoint"],
        userinfo_url=meta["userinfo_endpoint"],
        scope="openid email profile",
        issuer=meta.get("issuer", issuer),
        jwks_uri=meta["jwks_uri"],
    )


def _client(provider: Provider, redirect_uri: str, token: Any = None) -> "AsyncOAuth2Client":
    from authlib.integrations.httpx_client import AsyncOAuth2Client

    return AsyncOAuth2Client(
        client_id=provider.client_id,
        client_secret=provider.client_secret,
        token_endpoint_auth_method="client_secret_post",
        scope=provider.scope,
        redirect_uri=redirect_uri,
        code_challenge_method="S256",
        token=token,
        timeout=_TIMEOUT,
    )


def start(provider: Provider, redirect_uri: str, mode: str) -> tuple[str, Pending]:
    pending = Pending(
        provider=provider.name,
        state=secrets.token_urlsafe(24),
        nonce=secrets.token_urlsafe(24),
        verifier=secrets.token_urlsafe(48),
        mode=mode,
        created=time.time(),
    )
    extra = {"nonce": pending.nonce} if provider.issuer else {}
    url, _ = _client(provider, redirect_uri).create_authorization_url(
        provider.authorize_url, state=pending.state, code_verifier=pending.verifier, **extra
    )
    return str(url), pending


async def finish(
    provider: Provider, pending: Pending, redirect_uri: str, code: str
) -> ProviderIdentity:
    client = _client(provider, redirect_uri)
    try:
        async with client:
            token = await client.fetch_token(
                provider.token_url,
                code=code,
                code_verifier=pending.verifier,
                headers={"Accept": "application/json"},
            )
            if provider.issuer:
                claims = await _id_token_claims(provider, token.get("id_token"), pending.nonce)
                info = (await client.get(provider.userinfo_url)).json()
                return ProviderIdentity(
                    provider="google",
                    subject=str(claims["sub"]),
                    email=info.get("email") or claims.get("email"),
                    email_verified=bool(claims.get("email_verified", info.get("email_verified"))),
                    name=info.get("name"),
                )
            user = (await client.get(provider.userinfo_url)).json()
            emails = (await client.get(provider.emails_url or "")).json()
    except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
        raise OAuthError(f"{provider.name} sign-in failed ({type(exc).__name__})") from exc
    except Exception as exc:  # Authlib's OAuth errors (e.g. an invalid or reused code)
        raise OAuthError(f"{provider.name} refused the sign-in: {exc}") from exc
    primary = next(
        (e for e in emails if isinstance(e, dict) and e.get("primary") and e.get("verified")),
        None,
    )
    return ProviderIdentity(
        provider="github",
        subject=str(user["id"]),
        email=primary["email"] if primary else None,
        email_verified=primary is not None,
        name=user.get("name") or user.get("login"),
    )


async def _id_token_claims(provider: Provider, id_token: Any, nonce: str) -> dict[str, Any]:
    from joserfc import jwt
    from joserfc.errors import JoseError
    from joserfc.jwk import KeySet

    if not isinstance(id_token, str):
        raise OAuthError("the provider sent no id_token")
    keys = KeySet.import_key_set(await _get_json(provider.jwks_uri or ""))
    try:
        decoded = jwt.decode(id_token, keys, algorithms=["RS256", "ES256"])
        jwt.JWTClaimsRegistry(
            iss={"essential": True, "value": provider.issuer or ""},
            aud={"essential": True, "value": provider.client_id},
            sub={"essential": True},
            nonce={"essential": True, "value": nonce},
            exp={"essential": True},
        ).validate(decoded.claims)
    except JoseError as exc:
        raise OAuthError(f"the id_token is not valid: {exc}") from exc
    return decoded.claims
