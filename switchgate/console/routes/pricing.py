"""The public pricing page (/console/pricing): every offered model with its prices and
context window, readable without signing in, so people can choose before they sign up.
Operators turn it off with the site setting `pricing_page` (Settings page, or
SWITCHGATE_PRICING_PAGE=off)."""

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from switchgate.catalog import Catalog
from switchgate.catalogue.entries import shipped_catalogue
from switchgate.console.api.prices import catalog_items
from switchgate.console.deps import current_session, gw
from switchgate.console.render import render
from switchgate.console.routes.common import site

KIND_LABEL = {
    "chat": "Chat",
    "embedding": "Embeddings",
    "image": "Images",
    "tts": "Text to speech",
    "stt": "Speech to text",
    "rerank": "Rerank",
    "realtime": "Realtime",
}


def context_window(catalog: Catalog, model: str) -> int | None:
    """From the shipped catalogue, by the model's name or the name its channel uses."""
    known = shipped_catalogue()
    names = [model, *(c.upstream_model(model) for c in catalog.channels_by_model.get(model, ()))]
    for name in names:
        found = known.find(name)
        if found is not None and found.context_window:
            return found.context_window
    return None


def pricing_rows(catalog: Catalog) -> list[dict[str, Any]]:
    rows = []
    for item in catalog_items(catalog, include_unserved=False):
        if not item["priced"]:
            continue
        window = context_window(catalog, item["model"])
        rows.append(
            {
                **item,
                "kind_label": KIND_LABEL.get(item["kind"], item["kind"]),
                "context": f"{window:,}" if window else None,
            }
        )
    return sorted(rows, key=lambda r: (list(KIND_LABEL).index(r["kind"]), r["model"]))


async def pricing(request: Request) -> Response:
    current = await site(request)
    signed_in = await current_session(request) is not None
    if current.get("pricing_page") == "off":
        return render(
            request,
            "message.html",
            404,
            title="No public pricing",
            message="The operator of this gateway does not publish its prices. "
            "Sign in to see the models and prices available to you.",
            signin_link=not signed_in,
        )
    return render(
        request,
        "pricing.html",
        title="Models and prices",
        rows=pricing_rows(gw(request).catalog),
        signed_in=signed_in,
        signup_open=current.signup_open,
    )


def pricing_routes() -> list[Route]:
    return [Route("/console/pricing", pricing, methods=["GET"])]
