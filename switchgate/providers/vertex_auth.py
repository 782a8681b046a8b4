"""Vertex AI authentication: a service-account JSON key exchanged for an OAuth 2 access
token (scope cloud-platform) by google-auth, cached per key and refreshed before it expires.

The channel key holds the service account's JSON key file as it is (the file the Cloud
console downloads: `type: service_account`, `client_email`, `private_key`,
`private_key_id`, `token_uri`, `project_id`). A key that is not a JSON object is taken as
a ready access token (`gcloud auth print-access-token`, or one minted by a token proxy)
and sent as it is: it is never refreshed, so it suits short tests only.

google-auth's refresh is synchronous (it POSTs a signed JWT assertion to `token_uri`
with `requests`): it runs in a worker thread, one refresh at a time per key, while the
other calls for that key wait for its result. Nothing here ever puts the private key in
an error message or a log line.
"""

import asyncio
import datetime
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from switchgate import jsonutil
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.gemini_errors import scrub

SCOPE: Final = "https://www.googleapis.com/auth/cloud-platform"
TOKEN_URI: Final = "https://oauth2.googleapis.com/token"
REFRESH_MARGIN: Final = datetime.timedelta(minutes=5)  # refresh this long before expiry
TOKEN_TIMEOUT: Final = 15.0  # seconds for one token endpoint request
# Seconds one refresh may take in all (google-auth retries a 5xx with backoff inside its
# synchronous call): past it the call fails over; the worker thread finishes on its own.
REFRESH_BUDGET: Final = 30.0
_REQUIRED: Final = ("client_email", "private_key")

Clock = Callable[[], datetime.datetime]


def _utcnow() -> datetime.datetime:
    """Naive UTC, the way google-auth stores `Credentials.expiry`."""
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def _channel_error(message: str) -> GatewayError:
    # No upstream status: the attempt pipeline counts it against the channel
    # (routing/failures.py Blame.CHANNEL) and tries the next candidate.
    return GatewayError(ErrorKind.UPSTREAM_ERROR, message)


@dataclass(frozen=True, slots=True)
class ServiceAccount:
    """The parts of a service-account key the gateway reads (the key itself stays in
    `info`, which is never printed)."""

    email: str
    project_id: str | None
    token_uri: str
    info: dict[str, Any] = field(repr=False)


def parse_service_account(key: str) -> ServiceAccount | None:
    """The service account of a JSON key, or None when `key` is not JSON (a ready
    access token). A JSON key that is not a usable service-account key is a channel
    error naming what is missing, never its content."""
    text = key.strip()
    if not text.startswith("{"):
        return None
    try:
        info = jsonutil.loads(text)
    except jsonutil.JSONDecodeError:
        raise _channel_error("vertex: the channel key is not valid JSON") from None
    if not isinstance(info, dict):
        raise _channel_error("vertex: the channel key is not a JSON object")
    if info.get("type", "service_account") != "service_account":
        raise _channel_error(
            f"vertex: the channel key is a {str(info.get('type'))[:40]!r} credential, "
            "not a service-account key"
        )
    missing = [name for name in _REQUIRED if not isinstance(info.get(name), str) or not info[name]]
    if missing:
        raise _channel_error(f"vertex: the service-account key lacks {', '.join(missing)}")
    project = info.get("project_id")
    token_uri = info.get("token_uri")
    return ServiceAccount(
        email=info["client_email"],
        project_id=project if isinstance(project, str) and project else None,
        token_uri=token_uri if isinstance(token_uri, str) and token_uri else TOKEN_URI,
        info=info,
    )


def _credentials(account: ServiceAccount) -> Any:
    """google-auth credentials for the key (imported here: only vertex channels need it)."""
    try:
        from google.oauth2 import service_account
    except ImportError:  # pragma: no cover - google-auth is a dependency
        raise _channel_error("vertex: the google-auth package is not installed") from None
    try:
        return service_account.Credentials.from_service_account_info(  # type: ignore[no-untyped-call]
            {**account.info, "token_uri": account.token_uri}, scopes=[SCOPE]
        )
    except (ValueError, TypeError):
        raise _channel_error(
            f"vertex: the private key of service account {account.email} could not be loaded"
        ) from None


def _transport() -> Any:
    """A google-auth HTTP transport (requests) with a bounded timeout."""
    import google.auth.transport.requests

    return functools.partial(google.auth.transport.requests.Request(), timeout=TOKEN_TIMEOUT)


def _refresh_failure(account: ServiceAccount, exc: Exception) -> GatewayError:
    """The token endpoint's answer (`error: error_description`), without anything that
    could carry a secret (key-like strings and URLs are scrubbed)."""
    first = exc.args[0] if exc.args else type(exc).__name__
    detail = scrub(str(first))[:300]
    return _channel_error(
        f"vertex: no access token for service account {account.email} "
        f"from its token endpoint: {detail}"
    )


@dataclass(slots=True)
class _Entry:
    account: ServiceAccount
    credentials: Any
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    refreshes: int = 0


class TokenCache:
    """Access tokens per service-account key, refreshed `margin` before they expire.

    Held by the vertex adapter (one per process, on AppState): a key's token is fetched
    once and shared by every call until it nears its expiry."""

    def __init__(
        self,
        clock: Clock = _utcnow,
        margin: datetime.timedelta = REFRESH_MARGIN,
        transport: Callable[[], Any] = _transport,
        budget: float = REFRESH_BUDGET,
    ) -> None:
        self._clock = clock
        self._margin = margin
        self._transport = transport
        self._budget = budget
        # By channel key (the same string object every call: its hash is cached).
        self._accounts: dict[str, ServiceAccount | None] = {}
        self._entries: dict[str, _Entry] = {}

    def account(self, key: str) -> ServiceAccount | None:
        """parse_service_account(key), parsed once per key."""
        try:
            return self._accounts[key]
        except KeyError:
            account = self._accounts[key] = parse_service_account(key)
            return account

    def _entry(self, key: str, account: ServiceAccount) -> _Entry:
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _Entry(account, _credentials(account))
        return entry

    def _fresh(self, credentials: Any) -> str | None:
        token, expiry = credentials.token, credentials.expiry
        if not token or expiry is None or expiry - self._clock() <= self._margin:
            return None
        return str(token)

    async def token(self, key: str, account: ServiceAccount) -> str:
        entry = self._entry(key, account)
        token = self._fresh(entry.credentials)
        if token is not None:
            return token
        async with entry.lock:  # one refresh at a time per key; the others wait for it
            token = self._fresh(entry.credentials)
            if token is not None:
                return token
            await self._refresh(entry)
            token = entry.credentials.token
            if not token:
                raise _channel_error(
                    f"vertex: the token endpoint gave service account {account.email} "
                    "no access token"
                )
            return str(token)

    async def _refresh(self, entry: _Entry) -> None:
        from google.auth import exceptions

        request = self._transport()
        entry.refreshes += 1
        try:
            refresh = asyncio.to_thread(entry.credentials.refresh, request)
            await asyncio.wait_for(refresh, self._budget)
        except (exceptions.RefreshError, exceptions.TransportError) as exc:
            raise _refresh_failure(entry.account, exc) from None
        except TimeoutError:
            raise _channel_error(
                f"vertex: the token endpoint of service account {entry.account.email} "
                f"did not answer within {self._budget:g} s"
            ) from None

    def refreshes(self, key: str) -> int:
        """How many times `key`'s token was fetched (for tests and diagnostics)."""
        entry = self._entries.get(key)
        return entry.refreshes if entry is not None else 0

    def forget(self) -> None:
        """Drop every cached token (the upstream refused one): the next call refreshes."""
        for entry in self._entries.values():
            entry.credentials.token = None
