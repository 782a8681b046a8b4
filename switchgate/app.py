"""The ASGI application: a fast path table for the relay, everything else to Starlette."""

import logging

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from switchgate.console.body_limit import read_limited
from switchgate.lifecycle import Lifecycle
from switchgate.observability.endpoint import allowed_on_main_port
from switchgate.readiness import healthz, readiness
from switchgate.relay import realtime, routes_gemini, routes_openai, routes_responses
from switchgate.relay.asgi import Receive, Scope, Send
from switchgate.relay.routes import Handler, route_table
from switchgate.settings import Settings
from switchgate.state import AppState
from switchgate.storage.notify import publish_with

log = logging.getLogger("switchgate")
_WRITES = frozenset(("POST", "PUT", "PATCH", "DELETE"))


def _is_api_write(scope: Scope, path: str) -> bool:
    return path.startswith("/api/") and scope["method"] in _WRITES


def _is_gemini(scope: Scope, path: str) -> bool:
    if path.startswith("/v1beta/models"):
        return True
    if path != "/v1/models" and not path.startswith("/v1/models/"):
        return False
    # /v1/models is OpenAI's (and Anthropic's) unless it names a Gemini action or
    # carries Gemini's credentials (google-genai lists models at GET /v1/models).
    if ":" in path.rsplit("/", 1)[-1] or b"key=" in scope.get("query_string", b""):
        return True
    return any(name == b"x-goog-api-key" for name, _ in scope["headers"])


def _web_app(state: AppState) -> Starlette:
    async def readyz(_: Request) -> Response:
        return await readiness(state)

    async def metrics(request: Request) -> Response:
        client = request.client.host if request.client is not None else None
        authorization = request.headers.get("authorization")
        if not allowed_on_main_port(state.settings, authorization, client):
            if state.settings.metrics_address:
                return JSONResponse({"error": "not found"}, status_code=404)
            return JSONResponse({"error": "forbidden"}, status_code=403)
        return Response(state.metrics.render(), media_type="text/plain; version=0.0.4")

    from switchgate.console.app import console_routes
    from switchgate.console.render import templates

    web = Starlette(
        routes=[
            Route("/healthz", healthz),
            Route("/readyz", readyz),
            Route("/metrics", metrics),
            *console_routes(),
        ]
    )
    web.state.gateway = state
    web.state.templates = templates()
    return web


class GatewayApp:
    def __init__(self, state: AppState, *, run_migrations: bool = True) -> None:
        self.state = state
        self.lifecycle = Lifecycle(state, run_migrations=run_migrations)
        self.routes: dict[tuple[str, str], Handler] = route_table()
        self.web = _web_app(state)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            path: str = scope["path"]
            if path.startswith("/v1/models") and _is_gemini(scope, path):
                await routes_gemini.dispatch(self.state, scope, receive, send)
            elif (handler := self.routes.get((scope["method"], path))) is not None:
                await handler(self.state, scope, receive, send)
            elif _is_gemini(scope, path):
                await routes_gemini.dispatch(self.state, scope, receive, send)
            elif path.startswith("/v1/models/") and scope["method"] == "GET":
                await routes_openai.list_models(self.state, scope, receive, send)
            elif path.startswith(routes_responses.PREFIX):
                await routes_responses.by_id(self.state, scope, receive, send)
            elif path.startswith("/v1/"):
                await routes_openai.not_found(self.state, scope, receive, send)
            else:
                limited = await read_limited(
                    scope, receive, send, self.state.settings.console_max_body_bytes
                )
                if limited is None:
                    return  # answered 413
                await self.web(scope, limited, send)
                if self.state.redis is not None and _is_api_write(scope, path):
                    # A console change (token, channel, price, user, setting): tell every
                    # replica now instead of at its next poll. Harmless when nothing
                    # changed: listeners only compare the config version.
                    await publish_with(self.state.redis)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket" and scope["path"] == realtime.PATH:
            await realtime.serve(self.state, scope, receive, send)
        else:
            await self.web(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.lifecycle.startup()
                except Exception as exc:
                    log.exception("start-up failed")
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.lifecycle.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return


def create_app(settings: Settings | None = None, *, run_migrations: bool = True) -> GatewayApp:
    return GatewayApp(
        AppState.create(settings or Settings.from_env()), run_migrations=run_migrations
    )


def create_app_from_env() -> GatewayApp:
    """The factory `switchgate serve` hands to uvicorn (each worker calls it)."""
    import os

    return create_app(run_migrations=os.environ.get("SWITCHGATE_SKIP_MIGRATIONS") != "1")
