"""Every route of the app, called as every kind of caller, against an expected-answer table.

The routes come from the app itself: the relay's route table, the Gemini and stored-
Responses dispatchers, the Realtime WebSocket, and every Starlette route (console pages,
sign-in forms, OAuth, the management API, health and metrics). A route that is not in
the table fails `test_every_route_is_in_the_table`, so a new route cannot be added
without deciding who may call it.

Callers: anonymous; a console session cookie alone on the relay (no CSRF-less cookie
auth there); a plain user (token; session with and without the CSRF header); another
user's objects (ownership); a disabled token; a disabled user (token and session);
an admin (token and session). "Allowed" means the answer is neither 401 nor 403 nor a
5xx (a 400 for an empty body is fine: the caller got past the gate)."""

import asyncio
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import pytest
from sqlalchemy import select
from starlette.routing import Mount, Route

from switchgate.accounts.service import set_user_status
from switchgate.app import create_app
from switchgate.cli.ops import Ops
from switchgate.providers.embeddings import GEMINI_ACTIONS
from switchgate.relay import realtime, routes_gemini
from switchgate.relay.routes_responses import PREFIX as RESPONSES
from switchgate.relay.routes_responses_items import SUB_RESOURCES
from switchgate.settings import Settings
from switchgate.storage.db import bump_config_version
from switchgate.storage.tables import tokens, users
from tests.conftest import Gateway
from tests.e2e.console_client import Console, signed_in, verified_user
from tests.support import wait_for


@dataclass(frozen=True)
class Call:
    method: str
    template: str  # the route as the router spells it
    kind: str  # a row of RULES


# How each kind of route must answer each caller ("ok": allowed, else the status).
RULES: dict[str, dict[str, Any]] = {
    "relay": {"anon": 401, "cookie": 401, "dead_token": 401, "dead_user": 401, "user": "ok"},
    "gemini": {"anon": 401, "cookie": 401, "dead_token": 401, "dead_user": 401, "user": "ok"},
    "api_user": {"anon": 401, "no_csrf": 403, "user_bearer": 403, "user": "ok", "admin": "ok"},
    "api_admin": {"anon": 401, "no_csrf": 403, "user_bearer": 403, "user": 403, "admin": "ok"},
    "page_user": {"anon": 303, "dead_user": 303, "user": 200, "admin": 200},
    "page_admin": {"anon": 303, "dead_user": 303, "user": 403, "admin": 200},
    "public": {"anon": "ok"},
    "not_found": {"anon": 404},  # /api/{anything else}: 404 in the API's error shape
    "form": {"anon": "ok", "anon_post": 403},  # signed-out forms: POST needs the CSRF field
    "session_post": {"anon": "not_ok"},  # sign-out, OAuth link: nothing happens unsigned
    "oauth": {"anon": "ok"},
    "metrics": {"anon": "loopback"},
    "realtime": {"anon": "denied", "dead_token": "denied", "user": "accepted"},
}

# Starlette routes: path -> kind. Admin pages are found from their `admin` flag below.
WEB_KINDS = {
    "/healthz": "public",
    "/readyz": "public",
    "/metrics": "metrics",
    "/": "public",
    "/console/static": "public",
    "/api/openapi.json": "public",
    "/api/{rest:path}": "not_found",
    "/console/signin": "form",
    "/console/signup": "form",
    "/console/forgot": "form",
    "/console/reset": "form",
    "/console/verify": "public",
    "/console/pricing": "public",  # the public price list (site setting pricing_page)
    "/console/verify/resend": "form",
    "/console/signout": "session_post",
    "/console/oauth/{provider}/start": "oauth",
    "/console/oauth/{provider}/callback": "oauth",
    "/console/oauth/{provider}/link": "session_post",
}


def app_calls(tmp: Path) -> list[Call]:
    """Every (method, route) the app answers, read from the app itself."""
    app = create_app(Settings(data_dir=tmp), run_migrations=False)
    calls = [Call(m, p, "relay") for (m, p) in sorted(app.routes)]
    for prefix in routes_gemini.PREFIXES:
        calls += [Call("GET", prefix, "gemini"), Call("GET", prefix + "/{model}", "gemini")]
        for action in ("generateContent", "streamGenerateContent", "countTokens", *GEMINI_ACTIONS):
            calls.append(Call("POST", f"{prefix}/{{model}}:{action}", "gemini"))
    calls += [Call("GET", "/v1/models/{model}", "relay")]
    calls += [Call(m, RESPONSES + "{id}", "relay") for m in ("GET", "DELETE")]
    calls += [Call(m, RESPONSES + "{id}/" + sub, "relay") for (m, sub) in SUB_RESOURCES]
    calls.append(Call("WS", realtime.PATH, "realtime"))
    from switchgate.console.app import API_ROUTES
    from switchgate.console.pages import PAGES

    api_admin = {(r.method, r.path) for r in API_ROUTES if r.admin}
    admin_pages = {p.path for p in PAGES if p.admin}
    for route in app.web.routes:
        if isinstance(route, Mount):
            calls.append(Call("GET", route.path, WEB_KINDS.get(route.path, "?")))
            continue
        assert isinstance(route, Route)
        for method in sorted((route.methods or set()) - {"HEAD"}):
            if (method, route.path) in api_admin:
                kind = "api_admin"
            elif route.path.startswith("/api/") and route.path not in WEB_KINDS:
                kind = "api_user"
            elif route.path in admin_pages:
                kind = "page_admin"
            elif route.path in WEB_KINDS:
                kind = WEB_KINDS[route.path]
            elif route.path.startswith("/console"):
                kind = "page_user"
            else:
                kind = "?"
            calls.append(Call(method, route.path, kind))
    return calls


@pytest.fixture(scope="module")
def calls(tmp_path_factory: pytest.TempPathFactory) -> list[Call]:
    return app_calls(tmp_path_factory.mktemp("routes"))


def test_every_route_is_in_the_table(calls: list[Call]) -> None:
    unknown = [c for c in calls if c.kind not in RULES]
    assert not unknown, f"routes nobody decided the access rule for: {unknown}"
    assert len(calls) >= 100, len(calls)  # the walk really found the app's routes


@dataclass
class Cast:
    """The callers, made once for the module."""

    user_token: str
    other_token_id: int
    spare_token_id: int
    dead_token: str
    dead_user_token: str
    admin_token: str
    user: Console
    dead_user: Console
    admin: Console
    other_response: str


def _token_id(gateway: Gateway, token: str) -> int:
    async def job(ops: Ops) -> int:
        async with ops.db.connect() as conn:
            rows = await conn.execute(select(tokens.c.id, tokens.c.key_prefix))
            return max(int(r.id) for r in rows if token.startswith(r.key_prefix))

    result: int = gateway.ops(job)
    return result


@pytest.fixture(scope="module")
def cast(gateway: Gateway) -> Iterator[Cast]:
    user = signed_in(gateway, balance_usd=5)
    user_email = user.email

    async def tokens_for_user(ops: Ops) -> tuple[str, str, str]:
        main = (await ops.create_token(user_email, "enum")).token
        spare = (await ops.create_token(user_email, "spare")).token
        dead = (await ops.create_token(user_email, "dead")).token
        return main, spare, dead

    user_token, spare, dead_token = gateway.ops(tokens_for_user)
    _, other_token = gateway.new_user()
    _, admin_token = gateway.new_user(admin=True)
    admin = signed_in(gateway, admin=True)
    dead_email = verified_user(gateway, balance_usd=1)
    dead_user = Console(gateway)
    assert dead_user.signin(dead_email).status_code == 303

    async def dead_user_token(ops: Ops) -> str:
        return (await ops.create_token(dead_email, "soon-dead")).token

    dead_user_tok = gateway.ops(dead_user_token)
    other_response = httpx.post(
        f"{gateway.url}/v1/responses",
        headers={"authorization": f"Bearer {other_token}"},
        json={"model": "gpt-mock", "input": "mine"},
        timeout=30,
    ).json()["id"]
    dead_id = _token_id(gateway, dead_token)

    async def disable(ops: Ops) -> None:
        await ops.set_token_status(dead_id, "disabled")
        async with ops.db.begin() as conn:
            user_id = await conn.scalar(select(users.c.id).where(users.c.email == dead_email))
            await set_user_status(conn, int(user_id), "disabled")
            await bump_config_version(conn)

    gateway.ops(disable)
    headers = {"authorization": f"Bearer {dead_user_tok}"}
    assert wait_for(
        lambda: httpx.get(f"{gateway.url}/v1/models", headers=headers).status_code == 401, 10
    )
    yield Cast(
        user_token,
        _token_id(gateway, other_token),
        _token_id(gateway, spare),
        dead_token,
        dead_user_tok,
        admin_token,
        user,
        dead_user,
        admin,
        other_response,
    )


def _path(call: Call, cast: Cast, *, own: bool = True) -> str:
    path = call.template
    token_id = cast.spare_token_id if own else cast.other_token_id
    path = re.sub(r"/api/tokens/\{id:int\}", f"/api/tokens/{token_id}", path)
    path = (
        path.replace("{id:int}", "999999")
        .replace("{model:path}", "enum-no-such-model")
        .replace("{model}", "gemini-mock" if call.kind == "gemini" else "gpt-mock")
        .replace("{id}", cast.other_response)
        .replace("{batch}", "no-such-batch")
        .replace("{provider}", "github")
        .replace("{rest:path}", "no/such/endpoint")
        .replace("/console/static", "/console/static/app.css")
    )
    # Parameters of routes added later: any whole number, any name.
    return re.sub(r"\{[^}]+\}", "x", re.sub(r"\{[^}:]+:int\}", "0", path))


def _relay_headers(call: Call, token: str) -> dict[str, str]:
    if call.kind == "gemini":
        return {"x-goog-api-key": token}
    return {"authorization": f"Bearer {token}", "x-api-key": token}


def _send(http: httpx.Client, call: Call, path: str, **kw: Any) -> int:
    if call.method == "GET":
        return http.get(path, **kw).status_code
    return http.request(call.method, path, json={}, **kw).status_code


def _check(expected: Any, status: int, what: str) -> None:
    if expected == "ok":
        assert status not in (401, 403) and status < 500, f"{what}: {status}"
    elif expected == "not_ok":
        assert status not in (200, 201, 204) and status < 500, f"{what}: {status}"
    else:
        assert status == expected, f"{what}: expected {expected}, got {status}"


def _relay(gateway: Gateway, call: Call, cast: Cast) -> None:
    path = _path(call, cast)
    http = httpx.Client(base_url=gateway.url, timeout=30)
    rules = RULES[call.kind]
    what = f"{call.method} {path}"
    _check(rules["anon"], _send(http, call, path), what + " anonymous")
    cookie = cast.user.http.cookies
    _check(rules["cookie"], _send(http, call, path, cookies=cookie), what + " with a session")
    for caller, token in (("dead_token", cast.dead_token), ("dead_user", cast.dead_user_token)):
        _check(rules[caller], _send(http, call, path, headers=_relay_headers(call, token)), what)
    status = _send(http, call, path, headers=_relay_headers(call, cast.user_token))
    if call.template.startswith(RESPONSES):
        assert status == 404, f"{what}: another user's stored response answered {status}"
    else:
        _check(rules["user"], status, what + " as a user")


def _api(gateway: Gateway, call: Call, cast: Cast) -> None:
    path = _path(call, cast)
    rules = RULES[call.kind]
    what = f"{call.method} {path}"
    anon = httpx.Client(base_url=gateway.url, timeout=30)
    _check(rules["anon"], _send(anon, call, path), what + " anonymous")
    _check(rules["no_csrf"], _send(cast.user.http, call, path), what + " without CSRF")
    bearer = {"authorization": f"Bearer {cast.user_token}"}
    _check(rules["user_bearer"], _send(anon, call, path, headers=bearer), what + " user token")
    dead = {"x-csrf-token": cast.dead_user.csrf or ""}
    _check(401, _send(cast.dead_user.http, call, path, headers=dead), what + " disabled user")
    csrf = {"x-csrf-token": cast.user.csrf or ""}
    _check(rules["user"], _send(cast.user.http, call, path, headers=csrf), what + " as a user")
    admin = {"authorization": f"Bearer {cast.admin_token}"}
    _check(rules["admin"], _send(anon, call, path, headers=admin), what + " admin token")
    if "/api/tokens/{id:int}" in call.template:  # ownership: another user's token
        theirs = _path(call, cast, own=False)
        status = _send(cast.user.http, call, theirs, headers=csrf)
        assert status in (400, 404), f"{call.method} {theirs}: another user's token: {status}"


def _page(gateway: Gateway, call: Call, cast: Cast) -> None:
    path = _path(call, cast)
    rules = RULES[call.kind]
    anon = httpx.Client(base_url=gateway.url, timeout=30).get(path)
    assert anon.status_code == rules["anon"], path
    assert anon.headers["location"].startswith("/console/signin?next=")
    assert cast.dead_user.http.get(path).status_code == rules["dead_user"], path
    assert cast.user.http.get(path).status_code == rules["user"], path
    assert cast.admin.http.get(path).status_code == rules["admin"], path


def _web(gateway: Gateway, call: Call, cast: Cast) -> None:
    path = _path(call, cast)
    anon = httpx.Client(base_url=gateway.url, timeout=30)
    if call.method == "GET":
        status = anon.get(path).status_code
    else:  # forms: no CSRF field
        status = anon.post(path, data={"email": "x@example.com"}).status_code
    rules = RULES[call.kind]
    expected = rules.get("anon_post", rules["anon"]) if call.method == "POST" else rules["anon"]
    if call.kind == "metrics":
        assert status in (200, 403), path  # loopback or the metrics token (issue 16)
    elif call.kind == "oauth" and call.template.endswith("/callback"):
        assert status == 400, path  # no pending sign-in cookie: refused
    elif call.template == "/console/verify":
        assert status == 400, path  # no token
    else:
        _check(expected, status, f"{call.method} {path} anonymous")


async def _ws_status(url: str, token: str | None) -> str:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession() as session:
        try:
            async with session.ws_connect(url, headers=headers) as ws:
                message = await ws.receive(timeout=5)
                if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
                    return "denied" if ws.close_code == 1008 else "accepted"
                return "accepted"
        except aiohttp.WSServerHandshakeError as exc:
            return "denied" if exc.status in (401, 403) else f"status {exc.status}"


def _ws(gateway: Gateway, call: Call, cast: Cast) -> None:
    url = gateway.url.replace("http", "ws") + call.template + "?model=gpt-mock"
    rules = RULES[call.kind]
    assert asyncio.run(_ws_status(url, None)) == rules["anon"]
    assert asyncio.run(_ws_status(url, cast.dead_token)) == rules["dead_token"]
    assert asyncio.run(_ws_status(url, cast.user_token)) == rules["user"]


def test_every_route_answers_every_caller_as_the_table_says(
    gateway: Gateway, calls: list[Call], cast: Cast
) -> None:
    checks = {
        "relay": _relay,
        "gemini": _relay,
        "api_user": _api,
        "api_admin": _api,
        "page_user": _page,
        "page_admin": _page,
        "realtime": _ws,
    }
    for call in calls:
        checks.get(call.kind, _web)(gateway, call, cast)
    # The CSRF-less and foreign calls changed nothing: the other user's token still works.
    assert cast.user.api("GET", "/api/tokens").status_code == 200
