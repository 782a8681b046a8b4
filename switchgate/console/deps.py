"""What every console page and API call needs: the AppState, who is asking (a session
cookie, or an admin's `Authorization: Bearer sk-...`), CSRF checks, JSON responses."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, cast

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from switchgate import jsonutil
from switchgate.accounts import csrf, sessions
from switchgate.accounts.service import AccountError
from switchgate.audit import actions as audit_actions
from switchgate.billing.ledger import LedgerError
from switchgate.billing.redemption import RedemptionError
from switchgate.errors import GatewayError
from switchgate.money import MoneyError
from switchgate.relay import policy
from switchgate.relay.gate import bearer_token
from switchgate.routing.channels import ChannelError
from switchgate.state import AppState

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
USER_ERRORS = (AccountError, LedgerError, RedemptionError, MoneyError, ChannelError, ValueError)


def gw(request: Request) -> AppState:
    return cast(AppState, request.app.state.gateway)


class ApiError(Exception):
    def __init__(self, status: int, message: str, code: str = "error") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


@dataclass(frozen=True)
class Actor:
    """Who is calling: a signed-in person, or a script with an admin's token."""

    user_id: int
    email: str
    role: str
    session: sessions.Session | None

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def require_admin(self) -> None:
        if not self.is_admin:
            raise ApiError(403, "this needs an admin account", "forbidden")


def _plain(value: Any) -> Any:
    """Dict keys as plain str (SQLAlchemy row keys are a str subclass orjson refuses)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


class JSON(JSONResponse):
    def render(self, content: Any) -> bytes:
        return jsonutil.dumps(_plain(content))


def error_response(status: int, message: str, code: str) -> Response:
    return JSON({"error": {"message": message, "code": code}}, status_code=status)


def client_ip(request: Request) -> str | None:
    return request.client.host if request.client else None


def base_url(request: Request) -> str:
    """The gateway's own address, as clients should use it."""
    configured = gw(request).settings.public_url
    return configured or str(request.base_url).rstrip("/")


class UntrustedHost(ValueError):
    """The request's Host may not be used to build a link sent elsewhere."""


_LOOPBACK = frozenset({"localhost", "::1", "[::1]"})


def trusted_link_base(
    public_url: str, allowed_hosts: tuple[str, ...], bind_host: str, request_base: str, host: str
) -> str:
    """The base of a link the gateway sends away (e-mail, OAuth redirect_uri): the
    configured public URL; else the request's own address, but only when its Host names a
    loopback address, the bind address or an allowed host: a forged Host header must never
    choose where a password-reset link points."""
    if public_url:
        return public_url
    name = host.lower()
    if (
        name in _LOOPBACK
        or name.startswith("127.")
        or name in allowed_hosts
        or (name == bind_host.lower() and bind_host not in ("0.0.0.0", "::", ""))
    ):
        return request_base
    raise UntrustedHost(
        "this gateway does not know its public address: the operator must set "
        "SWITCHGATE_PUBLIC_URL (or list this host in SWITCHGATE_ALLOWED_HOSTS) before it "
        "sends sign-in or e-mail links"
    )


def link_base_url(request: Request) -> str:
    """`trusted_link_base` for this request (UntrustedHost when the Host is not trusted)."""
    settings = gw(request).settings
    return trusted_link_base(
        settings.public_url,
        settings.allowed_hosts,
        settings.host,
        str(request.base_url).rstrip("/"),
        request.url.hostname or "",
    )


def cookie_secure(request: Request) -> bool:
    settings = gw(request).settings
    if settings.cookie_secure is not None:
        return settings.cookie_secure
    return request.url.scheme == "https" or settings.public_url.startswith("https://")


async def current_session(request: Request) -> sessions.Session | None:
    if "switchgate.session" not in request.scope:
        async with gw(request).db.connect() as conn:
            found = await sessions.load(conn, request.cookies.get(sessions.COOKIE))
        request.scope["switchgate.session"] = found
    return cast(sessions.Session | None, request.scope["switchgate.session"])


async def api_actor(request: Request) -> Actor:
    state = gw(request)
    token = bearer_token({k.lower(): v for k, v in request.headers.items()})
    if token is not None:
        try:
            principal = policy.check_principal(
                await state.tokens.resolve(policy.require_token(token)),
                client_ip(request),
                state.recorder.token_spend,
            )
        except GatewayError as err:
            raise ApiError(401, err.message, "unauthorized") from err
        if principal.role != "admin":
            raise ApiError(403, "the management API takes only an admin's token", "forbidden")
        return Actor(principal.user_id, principal.email, principal.role, None)
    session = await current_session(request)
    if session is None:
        raise ApiError(401, "sign in first (or send an admin's token)", "unauthorized")
    given = request.headers.get(csrf.HEADER) or request.query_params.get(csrf.FIELD)
    if not csrf.matches(session.csrf, given):
        raise ApiError(403, "missing or wrong CSRF token (X-CSRF-Token header)", "csrf")
    return Actor(session.user_id, session.email, session.role, session)


ApiHandler = Callable[[Request, Actor], Awaitable[Any]]


def api_endpoint(
    handler: ApiHandler, *, admin: bool, audit: str | None = None
) -> Callable[[Request], Awaitable[Response]]:
    """`audit`: the action name under which a successful call is added to the audit log
    (every admin write has one, see console/app.py)."""

    async def endpoint(request: Request) -> Response:
        try:
            actor = await api_actor(request)
            if admin:
                actor.require_admin()
            result = await handler(request, actor)
        except ApiError as err:
            return error_response(err.status, err.message, err.code)
        except USER_ERRORS as exc:
            return error_response(400, str(exc), "invalid")
        if audit is not None:
            await _audit(request, actor, audit)
        if isinstance(result, Response):
            return result
        return JSON(result)

    return endpoint


async def _audit(request: Request, actor: Actor, action: str) -> None:
    raw = await request.body()  # cached by Starlette: what the handler read
    try:
        detail: Any = jsonutil.loads(raw) if raw else None
    except jsonutil.JSONDecodeError:
        detail = None
    entry = audit_actions.Entry(
        actor=actor.email,
        actor_id=actor.user_id,
        action=action,
        target=request.url.path,
        detail=detail,
        ip=client_ip(request),
    )
    async with gw(request).db.begin() as conn:
        await audit_actions.record(conn, entry)


async def json_body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw:
        return {}
    try:
        value = jsonutil.loads(raw)
    except jsonutil.JSONDecodeError as exc:
        raise ApiError(400, "the body is not valid JSON", "invalid") from exc
    if not isinstance(value, dict):
        raise ApiError(400, "the body must be a JSON object", "invalid")
    return value


def int_param(request: Request, name: str, default: int | None = None) -> int | None:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        return int(str(raw))
    except ValueError as exc:
        raise ApiError(400, f"{name} must be a whole number", "invalid") from exc


def path_int(request: Request, name: str = "id") -> int:
    try:
        return int(request.path_params[name])
    except (KeyError, ValueError) as exc:
        raise ApiError(404, "not found", "not_found") from exc
