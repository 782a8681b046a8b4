"""Sign-up, sign-in, sign-out, e-mail verification and password reset (HTML forms)."""

from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from switchgate.accounts import csrf, sessions, signin
from switchgate.accounts.mail import MailError, SmtpConfig, send_mail
from switchgate.accounts.service import AccountError, hash_new_password, set_password_hash
from switchgate.console.deps import (
    UntrustedHost,
    client_ip,
    current_session,
    gw,
    link_base_url,
)
from switchgate.console.render import render
from switchgate.console.routes.common import (
    SIGNUP_LIMITED,
    form_page,
    limited_text,
    pre_csrf_ok,
    site,
    start_session,
)

_MAIL_LIMITED = "Too many e-mails for this address or from your network"


async def too_many(request: Request, template: str, wait: int, what: str, **ctx: Any) -> Response:
    """The form again, with 429, a Retry-After header and the wait in words."""
    response = await form_page(request, template, 429, error=limited_text(what, wait), **ctx)
    response.headers["Retry-After"] = str(wait)
    return response


def _mail_base(request: Request) -> str:
    """Where links in e-mails point; MailError when the Host header cannot be trusted."""
    try:
        return link_base_url(request)
    except UntrustedHost as exc:
        raise MailError(str(exc)) from exc


async def _mail_link(request: Request, user_id: int, email: str, purpose: str) -> None:
    config = SmtpConfig.from_site(await site(request))
    if config is None:
        raise MailError("e-mail is not set up on this gateway; ask the operator")
    base = _mail_base(request)
    async with gw(request).db.begin() as conn:
        token = await signin.issue_email_token(conn, user_id, purpose)
    if purpose == "verify":
        link = f"{base}/console/verify?token={token}"
        subject, text = "Verify your e-mail address", f"Open this link to verify:\n\n{link}\n"
    else:
        link = f"{base}/console/reset?token={token}"
        subject = "Reset your password"
        text = f"Open this link to choose a new password (valid for 1 hour):\n\n{link}\n"
    await send_mail(config, email, subject, text)


async def signin_page(request: Request) -> Response:
    if request.method != "POST":  # GET, and HEAD (answered like GET)
        if await current_session(request) is not None:
            return RedirectResponse("/console", status_code=303)
        return await form_page(request, "signin.html", next=request.query_params.get("next"))
    form = await request.form()
    email = str(form.get("email") or "").strip().lower()
    next_url = str(form.get("next") or "")
    if not pre_csrf_ok(request, form):
        return await form_page(request, "signin.html", 403, error="The form expired; try again.")
    state, ip = gw(request), client_ip(request)
    wait = await state.account_limits.take_signin(email, ip)
    if wait is not None:
        return await too_many(
            request, "signin.html", wait, "Too many sign-in attempts", email=email, next=next_url
        )
    try:
        who = await signin.authenticate(state.db, email, str(form.get("password") or ""))
    except AccountError as exc:
        return await form_page(
            request,
            "signin.html",
            400,
            email=email,
            next=next_url,
            error=str(exc).capitalize() + ".",
        )
    await state.account_limits.signin_succeeded(email, ip)
    current = await site(request)
    if (
        current.smtp_configured
        and current.flag("require_verification")
        and not (who.email_verified)
    ):
        return await form_page(
            request,
            "signin.html",
            403,
            email=email,
            unverified=True,
            error="Verify your e-mail address first: open the link we sent.",
        )
    return await start_session(request, who.user_id, next_url)


async def signup_page(request: Request) -> Response:
    current = await site(request)
    if request.method != "POST":  # GET, and HEAD (answered like GET)
        return await form_page(request, "signup.html")
    form = await request.form()
    email = str(form.get("email") or "")
    if not pre_csrf_ok(request, form):
        return await form_page(request, "signup.html", 403, error="The form expired; try again.")
    if not current.signup_open:
        return await form_page(request, "signup.html", 403, error="Sign-up is closed.")
    if str(form.get("password") or "") != str(form.get("password2") or ""):
        return await form_page(
            request, "signup.html", 400, email=email, error="The two passwords differ."
        )
    if current.smtp_configured:
        try:
            _mail_base(request)  # refuse before creating an account that cannot be verified
        except MailError as exc:
            return await form_page(request, "signup.html", 400, email=email, error=str(exc))
    wait = await gw(request).account_limits.take_signup(client_ip(request))
    if wait is not None:
        return await too_many(request, "signup.html", wait, SIGNUP_LIMITED, email=email)
    try:
        user = await signin.sign_up(gw(request).db, email, str(form.get("password") or ""))
    except AccountError as exc:
        return await form_page(request, "signup.html", 400, email=email, error=str(exc))
    if not current.smtp_configured:
        return await start_session(request, user.id, "/console")
    try:
        await _mail_link(request, user.id, user.email, "verify")
    except MailError as exc:
        return render(
            request,
            "message.html",
            502,
            title="Account created",
            message=f"But the verification e-mail failed: {exc}.",
        )
    return render(
        request,
        "message.html",
        title="Check your inbox",
        message=f"We sent a link to {user.email}. Open it to verify your address, then sign in.",
    )


async def resend_verification(request: Request) -> Response:
    form = await request.form()
    if not pre_csrf_ok(request, form):
        return await form_page(request, "signin.html", 403, error="The form expired; try again.")
    email = str(form.get("email") or "").strip().lower()
    state = gw(request)
    wait = await state.account_limits.take_mail(email, client_ip(request))
    if wait is not None:
        return await too_many(
            request, "signin.html", wait, _MAIL_LIMITED, email=email, unverified=True
        )
    async with state.db.connect() as conn:
        user_id = await signin.user_id_for_email(conn, email)
    if user_id is not None:
        try:
            await _mail_link(request, user_id, email, "verify")
        except MailError:
            pass
    return render(
        request,
        "message.html",
        title="Check your inbox",
        message="If that account exists and is unverified, a new link is on its way.",
    )


async def verify(request: Request) -> Response:
    try:
        async with gw(request).db.begin() as conn:
            user_id = await signin.use_email_token(
                conn, request.query_params.get("token", ""), "verify"
            )
            await signin.mark_verified(conn, user_id)
    except AccountError as exc:
        return render(request, "message.html", 400, title="Link not valid", message=str(exc))
    return render(
        request,
        "message.html",
        title="E-mail verified",
        message="Your address is verified. You can sign in now.",
        signin_link=True,
    )


async def forgot(request: Request) -> Response:
    if request.method != "POST":  # GET, and HEAD (answered like GET)
        return await form_page(request, "forgot.html")
    form = await request.form()
    if not pre_csrf_ok(request, form):
        return await form_page(request, "forgot.html", 403, error="The form expired; try again.")
    email = str(form.get("email") or "").strip().lower()
    try:
        _mail_base(request)  # before the look-up: the answer must not depend on the address
    except MailError as exc:
        return await form_page(request, "forgot.html", 400, error=str(exc))
    state = gw(request)
    wait = await state.account_limits.take_mail(email, client_ip(request))
    if wait is not None:
        return await too_many(request, "forgot.html", wait, _MAIL_LIMITED)
    async with state.db.connect() as conn:
        user_id = await signin.user_id_for_email(conn, email)
    if user_id is not None:
        try:
            await _mail_link(request, user_id, email, "reset")
        except MailError as exc:
            return await form_page(request, "forgot.html", 502, error=str(exc))
    return render(
        request,
        "message.html",
        title="Check your inbox",
        message="If an account uses that address, a reset link is on its way.",
    )


async def reset(request: Request) -> Response:
    if request.method != "POST":  # GET, and HEAD (answered like GET)
        return await form_page(request, "reset.html", token=request.query_params.get("token"))
    form = await request.form()
    token = str(form.get("token") or "")
    if not pre_csrf_ok(request, form):
        return await form_page(
            request, "reset.html", 403, token=token, error="The form expired; try again."
        )
    password = str(form.get("password") or "")
    if password != str(form.get("password2") or ""):
        return await form_page(
            request, "reset.html", 400, token=token, error="The two passwords differ."
        )
    try:
        hashed = await hash_new_password(password)
        async with gw(request).db.begin() as conn:
            user_id = await signin.use_email_token(conn, token, "reset")
            await set_password_hash(conn, user_id, hashed)
            await signin.mark_verified(conn, user_id)
            await sessions.destroy_all(conn, user_id)
    except AccountError as exc:
        return await form_page(request, "reset.html", 400, token=token, error=str(exc))
    return render(
        request,
        "message.html",
        title="Password changed",
        message="Sign in with your new password.",
        signin_link=True,
    )


async def signout(request: Request) -> Response:
    session = await current_session(request)
    form = await request.form()
    if session is None or not csrf.matches(session.csrf, str(form.get(csrf.FIELD) or "")):
        return RedirectResponse("/console" if session else "/console/signin", status_code=303)
    async with gw(request).db.begin() as conn:
        await sessions.destroy(conn, session.id)
    response = RedirectResponse("/console/signin", status_code=303)
    response.delete_cookie(sessions.COOKIE, path="/")
    return response


def auth_routes() -> list[Route]:
    both = ["GET", "POST"]
    return [
        Route("/console/signin", signin_page, methods=both),
        Route("/console/signup", signup_page, methods=both),
        Route("/console/verify", verify, methods=["GET"]),
        Route("/console/verify/resend", resend_verification, methods=["POST"]),
        Route("/console/forgot", forgot, methods=both),
        Route("/console/reset", reset, methods=both),
        Route("/console/signout", signout, methods=["POST"]),
    ]
