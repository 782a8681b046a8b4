"""Server-rendered HTML: the Jinja2 environment and the console's security headers."""

from pathlib import Path
from typing import Any, Final

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

HERE: Final = Path(__file__).parent
STATIC_DIR: Final = HERE / "static"
TEMPLATES_DIR: Final = HERE / "templates"

SECURITY_HEADERS: Final = {
    "content-security-policy": (
        "default-src 'self'; img-src 'self' data: blob:; media-src 'self' data: blob:; "
        "style-src 'self'; script-src 'self'; connect-src 'self'; object-src 'none'; "
        "base-uri 'none'; form-action 'self' https: http:; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}


def templates() -> Environment:
    return Environment(
        loader=FileSystemLoader(str(TEMPLATES_DIR)),
        autoescape=select_autoescape(["html"]),
        auto_reload=False,
    )


def render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    env: Environment = request.app.state.templates
    html = env.get_template(name).render(request=request, **context)
    return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)
