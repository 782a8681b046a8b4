"""The console's pages: a server-rendered shell per page; each page's script fills it in
from the JSON API (/api), sending the session's CSRF token with every call."""

from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from switchgate.console.deps import base_url, current_session
from switchgate.console.render import render


@dataclass(frozen=True)
class Page:
    slug: str  # /console/<slug>; "" is the dashboard
    title: str
    admin: bool = False

    @property
    def path(self) -> str:
        return "/console" + (f"/{self.slug}" if self.slug else "")

    @property
    def script(self) -> str:
        return self.slug or "dashboard"


PAGES: Final = (
    Page("", "Dashboard"),
    Page("token", "Tokens"),
    Page("playground", "Playground"),
    Page("log", "Logs"),
    Page("topup", "Top up"),
    Page("models", "Models"),
    Page("account", "Account"),
    Page("channel", "Channels", admin=True),
    Page("catalogue", "Catalogue", admin=True),
    Page("user", "Users", admin=True),
    Page("redemption", "Redemption codes", admin=True),
    Page("setting", "Settings", admin=True),
    Page("audit", "Audit log", admin=True),
)


def _page_endpoint(page: Page) -> Route:
    async def endpoint(request: Request) -> Response:
        session = await current_session(request)
        if session is None:
            query = f"?{request.url.query}" if request.url.query else ""
            target = quote(request.url.path + query)
            return RedirectResponse(f"/console/signin?next={target}", status_code=303)
        if page.admin and not session.is_admin:
            return render(
                request,
                "message.html",
                403,
                title="Not allowed",
                message="This page is for admins.",
                session=session,
                pages=PAGES,
            )
        return render(
            request,
            "page.html",
            page=page,
            pages=PAGES,
            session=session,
            csrf=session.csrf,
            base_url=base_url(request),
        )

    return Route(page.path, endpoint, methods=["GET"])


async def root(request: Request) -> Response:
    return RedirectResponse("/console", status_code=307)


def page_routes() -> list[Route]:
    return [Route("/", root, methods=["GET"]), *(_page_endpoint(p) for p in PAGES)]
