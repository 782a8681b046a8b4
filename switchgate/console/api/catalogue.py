"""Admin: the shipped model catalogue, and importing models with their prices onto a
channel in one step (the same import as `switchgate catalogue import`)."""

from typing import Any

from sqlalchemy import select
from starlette.requests import Request

from switchgate import jsonutil
from switchgate.billing.prices import price_sources
from switchgate.catalogue.entries import CatalogueError, CatalogueModel, shipped_catalogue
from switchgate.catalogue.importer import import_models
from switchgate.console.api.prices import price_view
from switchgate.console.api.registry import STR, STR_LIST, ApiRoute, obj
from switchgate.console.deps import Actor, ApiError, gw, json_body
from switchgate.storage.tables import channels


def _item(model: CatalogueModel, served: bool, source: str | None, priced: bool) -> dict[str, Any]:
    return {
        "id": model.id,
        "vendor": model.vendor,
        "kind": model.kind,
        "channel_kind": model.channel_kind,
        "upstream_id": model.upstream_id,
        "context_window": model.context_window,
        "max_output": model.max_output,
        "capabilities": sorted(model.capabilities),
        "price": price_view(model.price),
        "note": model.note,
        "served": served,
        # "catalogue:<date>", "operator" (the operator's own price) or None (no price yet)
        "price_source": (source or "operator") if priced else None,
    }


async def list_catalogue(request: Request, actor: Actor) -> dict[str, Any]:
    catalogue = shipped_catalogue()
    query = request.query_params
    try:
        models = catalogue.select(
            vendor=query.get("provider") or None,
            pattern=query.get("models") or None,
            kind=query.get("kind") or None,
        )
    except CatalogueError as exc:
        raise ApiError(400, str(exc), "invalid") from exc
    state = gw(request)
    async with state.db.connect() as conn:
        sources = await price_sources(conn, [m.id for m in models])
        rows = (
            await conn.execute(
                select(
                    channels.c.name, channels.c.kind, channels.c.base_url, channels.c.models
                ).order_by(channels.c.id)
            )
        ).all()
    # Read from the database, not the running snapshot, so an import shows at once.
    served = {m for r in rows for m in jsonutil.loads(r.models)}
    channel_list = [{"name": r.name, "kind": r.kind, "base_url": r.base_url} for r in rows]
    return {
        "as_of": catalogue.as_of,
        "source": catalogue.source,
        "vendors": sorted(catalogue.vendors),
        "channels": channel_list,
        "items": [_item(m, m.id in served, sources.get(m.id), m.id in sources) for m in models],
    }


async def import_catalogue(request: Request, actor: Actor) -> dict[str, Any]:
    body = await json_body(request)
    catalogue = shipped_catalogue()
    wanted = body.get("models")
    if not isinstance(wanted, list) or not wanted:
        raise ApiError(400, "models must be a non-empty list of catalogue model ids", "invalid")
    channel = body.get("channel") or None
    state = gw(request)
    try:
        models = [catalogue.get(str(m)) for m in wanted]
        async with state.db.begin() as conn:
            report = await import_models(
                conn,
                catalogue,
                models,
                channel=str(channel) if channel else None,
                kinds=state.kinds,
            )
    except CatalogueError as exc:
        raise ApiError(400, str(exc), "invalid") from exc
    return {
        "channels": report.channels,
        "priced": report.priced,
        "kept": report.kept,
        "summary": report.lines(catalogue),
    }


ROUTES = [
    ApiRoute(
        "GET",
        "/api/catalogue",
        list_catalogue,
        "The shipped model catalogue (filter with provider, models=GLOB, kind), whether each "
        "model is served, where its current price came from, and the channels to import onto",
        "catalogue",
        admin=True,
        query=("provider", "models", "kind"),
    ),
    ApiRoute(
        "POST",
        "/api/catalogue/import",
        import_catalogue,
        "Add catalogue models to a channel (or every matching channel) and set their "
        "catalogue prices; an operator's own price is kept",
        "catalogue",
        admin=True,
        body=obj("models", models=STR_LIST, channel=STR),
    ),
]
