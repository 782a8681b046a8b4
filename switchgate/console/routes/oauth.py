"""Sign in with GitHub or Google, and link them to the signed-in account.

The pending flow (state, nonce, PKCE verifier) lives in a short-lived cookie encrypted
with the secret box; the callback checks `state` against it before using the code.
A sign-in that creates a new account counts as a sign-up attempt from the client's IP,
under the same limit as the sign-up form; signing in to a linked (or same-address)
account and linking to the signed-in account are not counted.
"""

from functools import partial

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from switchgate.accounts import csrf, identities, oauth
from switchgate.accounts.service import AccountError
from switchgate.console.deps import (
    UntrustedHost,
    client_ip,
    cookie_secure,
    current_session,
    gw,
    link_base_url,
)
from switchgate.console.render import render
from switchgate.console.routes.common import SIGNUP_LIMITED, limited_text, site, start_session

PENDING_COOKIE = "sg_oauth"


def _redirect_uri(request: Request, provider: str) -> str:
    """Never from an untrusted Host header (UntrustedHost): see deps.trusted_link_base."""
    return f"{link_base_url(request)}/console/oauth/{provider}/callback"


def _sentence(exc: Exception) -> str:
    text = str(exc)
    return text[:1].upper() + text[1:] + "."


def _failed(request: Request, message: str, status: int = 400) -> Response:
    return render(
        request, "message.html", status, title="Sign-in failed", message=message, signin_link=True
    )


async def _begin(request: Request, mode: str) -> Response:
    name = str(request.path_params["provider"])
    try:
        provider = await oauth.load_provider(await site(request), name)
    except oauth.OAuthError as exc:
        return _failed(request, str(exc), 502)
    if provider is None:
        return _failed(request, f"Sign-in with {name} is not set up on this gateway.", 404)
    try:
        redirect_uri = _redirect_uri(request, name)
    except UntrustedHost as exc:
        return _failed(request, _sentence(exc))
    url, pending = oauth.start(provider, redirect_uri, mode)
    response = RedirectResponse(url, status_code=303)
    response.set_cookie(
        PENDING_COOKIE,
        gw(request).box.encrypt(pending.dumps()),
        max_age=oauth.PENDING_TTL_SECONDS,
        httponly=True,
        samesite="lax",
        secure=cookie_secure(request),
        path="/console/oauth",
    )
    return response


async def start_signin(request: Request) -> Response:
    return await _begin(request, "signin")


async def start_link(request: Request) -> Response:
    session = await current_session(request)
    form = await request.form()
    if session is None or not csrf.matches(session.csrf, str(form.get(csrf.FIELD) or "")):
        return _failed(request, "Your session expired; sign in again.", 403)
    return await _begin(request, "link")


async def callback(request: Request) -> Response:
    name = str(request.path_params["provider"])
    raw = request.cookies.get(PENDING_COOKIE)
    try:
        pending = oauth.Pending.loads(gw(request).box.decrypt(raw or ""))
    except (ValueError, TypeError):
        return _failed(request, "The sign-in took too long or came from elsewhere; try again.")
    if (
        pending.expired
        or pending.provider != name
        or not csrf.matches(pending.state, request.query_params.get("state"))
    ):
        return _failed(request, "The sign-in took too long or came from elsewhere; try again.")
    if "error" in request.query_params or not request.query_params.get("code"):
        return _failed(request, f"{name} did not sign you in.")
    current = await site(request)
    try:
        provider = await oauth.load_provider(current, name)
        if provider is None:
            return _failed(request, f"Sign-in with {name} is not set up on this gateway.", 404)
        ident = await oauth.finish(
            provider, pending, _redirect_uri(request, name), request.query_params["code"]
        )
    except UntrustedHost as exc:
        return _failed(request, _sentence(exc))
    except oauth.OAuthError as exc:
        return _failed(request, str(exc), 502)
    state = gw(request)
    try:
        if pending.mode == "link":
            session = await current_session(request)
            if session is None:
                return _failed(request, "Your session expired; sign in again.", 403)
            async with state.db.begin() as conn:
                await identities.link(conn, session.user_id, ident)
            response: Response = RedirectResponse(f"/console/account?linked={name}", 303)
        else:
            take_signup = partial(state.account_limits.take_signup, client_ip(request))
            async with state.db.begin() as conn:
                user_id = await identities.sign_in(
                    conn, ident, signup_open=current.signup_open, take_signup=take_signup
                )
            response = await start_session(request, user_id, "/console")
    except identities.SignupLimited as exc:
        limited = _failed(request, limited_text(SIGNUP_LIMITED, exc.wait), 429)
        limited.headers["Retry-After"] = str(exc.wait)
        return limited
    except AccountError as exc:
        return _failed(request, str(exc).capitalize() + ".", 403)
    response.delete_cookie(PENDING_COOKIE, path="/console/oauth")
    return response


def oauth_routes() -> list[Route]:
    return [
        Route("/console/oauth/{provider}/start", start_signin, methods=["GET"]),
        Route("/console/oauth/{provider}/link", start_link, methods=["POST"]),
        Route("/console/oauth/{provider}/callback", callback, methods=["GET"]),
    ]
