"""Everything under /console and /api, as Starlette routes for the gateway's web app."""

from collections.abc import Awaitable, Callable
from typing import Final

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from switchgate.console.api import (
    audit,
    billing,
    catalogue,
    channel_keys,
    channels,
    logs,
    me,
    prices,
    redemptions,
    settings,
    stats,
    tokens,
    users,
)
from switchgate.console.api import openapi as openapi_doc
from switchgate.console.api.registry import ApiRoute
from switchgate.console.deps import JSON, api_endpoint, error_response
from switchgate.console.pages import page_routes
from switchgate.console.render import STATIC_DIR
from switchgate.console.routes.auth import auth_routes
from switchgate.console.routes.oauth import oauth_routes
from switchgate.console.routes.pricing import pricing_routes

API_ROUTES: Final[list[ApiRoute]] = [
    *me.ROUTES,
    *tokens.ROUTES,
    *logs.ROUTES,
    *billing.ROUTES,
    *prices.ROUTES,
    *catalogue.ROUTES,
    *channels.ROUTES,
    *channel_keys.ROUTES,
    *users.ROUTES,
    *redemptions.ROUTES,
    *settings.ROUTES,
    *stats.ROUTES,
    *audit.ROUTES,
]


def _openapi() -> Callable[[Request], Awaitable[Response]]:
    spec = openapi_doc.build(API_ROUTES)

    async def endpoint(_: Request) -> Response:
        return JSON(spec)

    return endpoint


async def _api_not_found(request: Request) -> Response:
    return error_response(404, f"no API endpoint {request.method} {request.url.path}", "not_found")


def _audit_action(route: ApiRoute) -> str | None:
    """Every admin write is audited, under its route ("POST /api/users/{id:int}/balance")."""
    if route.admin and route.method not in ("GET", "HEAD"):
        return f"{route.method} {route.path}"
    return None


def console_routes() -> list[BaseRoute]:
    api: list[BaseRoute] = [
        Route(
            r.path,
            api_endpoint(r.handler, admin=r.admin, audit=_audit_action(r)),
            methods=[r.method],
        )
        for r in API_ROUTES
    ]
    return [
        Mount("/console/static", StaticFiles(directory=STATIC_DIR), name="static"),
        *page_routes(),
        *auth_routes(),
        *oauth_routes(),
        *pricing_routes(),
        Route("/api/openapi.json", _openapi(), methods=["GET"]),
        *api,
        Route(
            "/api/{rest:path}",
            _api_not_found,
            methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
        ),
    ]
