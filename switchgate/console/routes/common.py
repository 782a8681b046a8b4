"""Helpers for the signed-out forms: the double-submit CSRF cookie, session cookies."""

from typing import Any, Final

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from switchgate.accounts import bootstrap, csrf, sessions, site_settings
from switchgate.accounts.site_settings import SiteSettings
from switchgate.console.deps import client_ip, cookie_secure, gw
from switchgate.console.render import render

SIGNUP_LIMITED: Final = "Too many sign-ups from your network"


def limited_text(what: str, wait: int) -> str:
    """The reason for a 429, then the wait in words ("Try again in 60 minutes")."""
    if wait < 60:
        words = f"{wait} second{'s' if wait != 1 else ''}"
    else:
        minutes = -(-wait // 60)
        words = f"{minutes} minute{'s' if minutes != 1 else ''}"
    return f"{what}. Try again in {words}."


async def site(request: Request) -> SiteSettings:
    state = gw(request)
    async with state.db.connect() as conn:
        return await site_settings.load(conn, state.box, state.settings.site_env)


async def form_page(request: Request, template: str, status: int = 200, **ctx: Any) -> Response:
    """Render a signed-out form with the double-submit CSRF token (set once as a cookie)."""
    token = request.cookies.get(csrf.PRE_COOKIE) or csrf.new_token()
    current = await site(request)
    async with gw(request).db.connect() as conn:
        hint = await site_settings.get_value(conn, bootstrap.HINT_KEY)
    response = render(
        request,
        template,
        status,
        csrf=token,
        signup_open=current.signup_open,
        github=current.provider_configured("github"),
        google=current.provider_configured("google"),
        mail_configured=current.smtp_configured,
        pricing_page=current.get("pricing_page") != "off",
        admin_hint=hint,
        **ctx,
    )
    if request.cookies.get(csrf.PRE_COOKIE) != token:
        response.set_cookie(
            csrf.PRE_COOKIE,
            token,
            httponly=True,
            samesite="lax",
            secure=cookie_secure(request),
            path="/console",
        )
    return response


def pre_csrf_ok(request: Request, form: Any) -> bool:
    return csrf.matches(request.cookies.get(csrf.PRE_COOKIE), str(form.get(csrf.FIELD) or ""))


def safe_next(raw: str | None) -> str:
    if raw and raw.startswith("/console") and not raw.startswith("//") and "\\" not in raw:
        return raw
    return "/console"


async def start_session(request: Request, user_id: int, next_url: str) -> Response:
    async with gw(request).db.begin() as conn:
        value = await sessions.create(
            conn, user_id, client_ip(request), request.headers.get("user-agent")
        )
    response = RedirectResponse(safe_next(next_url), status_code=303)
    response.set_cookie(
        sessions.COOKIE,
        value,
        max_age=sessions.TTL_MS // 1000,
        httponly=True,
        samesite="lax",
        secure=cookie_secure(request),
        path="/",
    )
    return response
