"""A fake GitHub (OAuth 2) and Google (OpenID Connect) for tests: the real
authorization-code flow with PKCE, a consent page a browser fills in, client
authentication at the token endpoint, single-use codes, and RS256-signed id_tokens.

    python -m switchgate.testing.fake_oauth --port 9000

GitHub lives under /github (authorize: /github/login/oauth/authorize, token:
/github/login/oauth/access_token, API: /github/api); Google's issuer is /google (with
/.well-known/openid-configuration). Client ids and secrets are the Defaults below.
"""

import argparse
import base64
import hashlib
import html
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlencode

import uvicorn
from joserfc import jwt
from joserfc.jwk import RSAKey
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

CLIENTS: Final = {
    "github": ("fake-github-id", "fake-github-secret"),
    "google": ("fake-google-id", "fake-google-secret"),
}


@dataclass
class _Grant:
    provider: str
    client_id: str
    redirect_uri: str
    challenge: str | None
    nonce: str | None
    user: dict[str, Any]
    expires: float


@dataclass
class FakeProvider:
    base_url: str
    key: RSAKey = field(default_factory=lambda: RSAKey.generate_key(2048, auto_kid=True))
    codes: dict[str, _Grant] = field(default_factory=dict)
    access: dict[str, dict[str, Any]] = field(default_factory=dict)
    log: list[dict[str, Any]] = field(default_factory=list)


def _page(provider: str, params: dict[str, str]) -> str:
    hidden = "".join(
        f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
        for k, v in params.items()
    )
    who = "FakeHub" if provider == "github" else "Fake Google"
    return f"""<!doctype html><html><head><title>{who}: authorize</title></head>
<body style="font-family:sans-serif;max-width:420px;margin:3rem auto">
<h1>{who}</h1><p>An application asks to sign you in.</p>
<form method="post">{hidden}
<p><label>Login <input name="login" id="login" value="octocat"></label></p>
<p><label>E-mail <input name="email" id="email" value="octocat@example.com"></label></p>
<p><label><input type="checkbox" name="verified" value="1" checked> e-mail verified</label></p>
<p><button type="submit" id="authorize">Authorize</button>
<button type="submit" name="deny" value="1" id="deny">Deny</button></p></form></body></html>"""


def _error(status: int, error: str) -> JSONResponse:
    return JSONResponse({"error": error, "error_description": error}, status_code=status)


def _client_ok(provider: str, request: Request, form: Any) -> bool:
    client_id, secret = CLIENTS[provider]
    given_id, given_secret = form.get("client_id"), form.get("client_secret")
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("basic "):
        decoded = base64.b64decode(auth[6:]).decode()
        given_id, _, given_secret = decoded.partition(":")
    return bool(given_id == client_id and given_secret == secret)


class _Handlers:
    def __init__(self, fake: FakeProvider) -> None:
        self.fake = fake
        self.issuer = f"{self.fake.base_url}/google"

    async def authorize(self, request: Request) -> Response:
        provider = str(request.path_params["provider"])
        if request.method == "GET":
            params = dict(request.query_params)
            if params.get("client_id") != CLIENTS[provider][0]:
                return HTMLResponse("unknown client_id", status_code=400)
            if not params.get("redirect_uri") or params.get("response_type") != "code":
                return HTMLResponse("redirect_uri and response_type=code are required", 400)
            return HTMLResponse(_page(provider, params))
        form = await request.form()
        redirect_uri = str(form.get("redirect_uri"))
        state = str(form.get("state") or "")
        if form.get("deny"):
            return RedirectResponse(
                f"{redirect_uri}?{urlencode({'error': 'access_denied', 'state': state})}", 302
            )
        login = str(form.get("login") or "octocat")
        code = secrets.token_urlsafe(16)
        self.fake.codes[code] = _Grant(
            provider=provider,
            client_id=str(form.get("client_id")),
            redirect_uri=redirect_uri,
            challenge=str(form.get("code_challenge") or "") or None,
            nonce=str(form.get("nonce") or "") or None,
            user={
                "login": login,
                "email": str(form.get("email") or ""),
                "verified": bool(form.get("verified")),
                "id": int(hashlib.sha256(login.encode()).hexdigest()[:8], 16),
            },
            expires=time.time() + 300,
        )
        return RedirectResponse(f"{redirect_uri}?{urlencode({'code': code, 'state': state})}", 302)

    async def token(self, request: Request) -> Response:
        provider = str(request.path_params["provider"])
        form = await request.form()
        self.fake.log.append({"provider": provider, "form": {k: str(v) for k, v in form.items()}})
        if not _client_ok(provider, request, form):
            return _error(401, "invalid_client")
        grant = self.fake.codes.pop(str(form.get("code") or ""), None)  # single use
        if grant is None or grant.provider != provider or grant.expires < time.time():
            return _error(400, "invalid_grant")
        if form.get("redirect_uri") and form.get("redirect_uri") != grant.redirect_uri:
            return _error(400, "invalid_grant")
        if grant.challenge:
            verifier = str(form.get("code_verifier") or "")
            digest = hashlib.sha256(verifier.encode()).digest()
            if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != grant.challenge:
                return _error(400, "invalid_grant")
        access = secrets.token_urlsafe(24)
        self.fake.access[access] = grant.user
        body: dict[str, Any] = {"access_token": access, "token_type": "bearer", "scope": ""}
        if provider == "google":
            now = int(time.time())
            claims = {
                "iss": self.issuer,
                "aud": grant.client_id,
                "sub": f"g-{grant.user['id']}",
                "email": grant.user["email"],
                "email_verified": grant.user["verified"],
                "nonce": grant.nonce,
                "iat": now,
                "exp": now + 600,
            }
            header = {"alg": "RS256", "kid": self.fake.key.kid}
            body["id_token"] = jwt.encode(header, claims, self.fake.key)
            body["expires_in"] = 3600
        return JSONResponse(body)

    def _user(self, request: Request) -> dict[str, Any] | None:
        auth = request.headers.get("authorization", "")
        return self.fake.access.get(auth.partition(" ")[2])

    async def github_user(self, request: Request) -> Response:
        user = self._user(request)
        if user is None:
            return _error(401, "bad credentials")
        return JSONResponse({"id": user["id"], "login": user["login"], "name": user["login"]})

    async def github_emails(self, request: Request) -> Response:
        user = self._user(request)
        if user is None:
            return _error(401, "bad credentials")
        return JSONResponse(
            [
                {
                    "email": f"{user['login']}@users.noreply.example",
                    "primary": False,
                    "verified": True,
                },
                {"email": user["email"], "primary": True, "verified": user["verified"]},
            ]
        )

    async def google_userinfo(self, request: Request) -> Response:
        user = self._user(request)
        if user is None:
            return _error(401, "invalid_token")
        return JSONResponse(
            {
                "sub": f"g-{user['id']}",
                "email": user["email"],
                "name": user["login"],
                "email_verified": user["verified"],
            }
        )

    async def discovery(self, _: Request) -> Response:
        return JSONResponse(
            {
                "issuer": self.issuer,
                "authorization_endpoint": f"{self.issuer}/authorize",
                "token_endpoint": f"{self.issuer}/token",
                "userinfo_endpoint": f"{self.issuer}/userinfo",
                "jwks_uri": f"{self.issuer}/jwks",
                "response_types_supported": ["code"],
                "id_token_signing_alg_values_supported": ["RS256"],
                "code_challenge_methods_supported": ["S256"],
            }
        )

    async def jwks(self, _: Request) -> Response:
        return JSONResponse({"keys": [self.fake.key.as_dict(private=False)]})

    async def healthz(self, _: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def token_log(self, _: Request) -> Response:
        return JSONResponse(self.fake.log)


def create_app(base_url: str) -> Starlette:
    h = _Handlers(FakeProvider(base_url.rstrip("/")))
    return Starlette(
        routes=[
            Route("/healthz", h.healthz),
            Route("/_fake/token-requests", h.token_log),
            Route("/{provider:str}/login/oauth/authorize", h.authorize, methods=["GET", "POST"]),
            Route("/{provider:str}/login/oauth/access_token", h.token, methods=["POST"]),
            Route("/github/api/user", h.github_user),
            Route("/github/api/user/emails", h.github_emails),
            Route("/google/.well-known/openid-configuration", h.discovery),
            Route("/{provider:str}/authorize", h.authorize, methods=["GET", "POST"]),
            Route("/{provider:str}/token", h.token, methods=["POST"]),
            Route("/google/userinfo", h.google_userinfo),
            Route("/google/jwks", h.jwks),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="A fake GitHub and Google sign-in provider.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9000)
    args = parser.parse_args()
    app = create_app(f"http://{args.host}:{args.port}")
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
