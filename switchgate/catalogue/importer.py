"""Importing catalogue models onto channels, with their prices, in one transaction.

Rules (docs/catalogue.md):
- Each model is added to the chosen channel, or, without one, to every channel that can
  serve it: its kind (providers/registry.py) serves the model's endpoint (chat,
  embeddings, images...) and either the catalogue names the model's id on that kind (the
  vendor's own kind, e.g. `deepseek` at any address; Gemini on `vertex`; Claude and Llama
  on `bedrock`...) or the channel is at the vendor's own host (an `openai`-kind channel at
  api.deepseek.com). The model's id on that kind becomes the channel's alias when it
  differs from the catalogue's.
- Its price is set from the catalogue and marked `catalogue:<date>`, unless the operator
  has set their own price for that model: the operator's price is kept (reported).
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate.billing.prices import price_sources, set_price
from switchgate.catalogue.entries import Catalogue, CatalogueError, CatalogueModel
from switchgate.providers import registry
from switchgate.providers.registry import ProviderKind, provider_kinds
from switchgate.routing.channels import add_models
from switchgate.storage.tables import channels


@dataclass
class ImportReport:
    channels: dict[str, list[str]] = field(default_factory=dict)  # channel -> models added
    priced: list[str] = field(default_factory=list)  # prices set from the catalogue
    kept: list[str] = field(default_factory=list)  # the operator's own price was kept

    def lines(self, catalogue: Catalogue) -> list[str]:
        out = []
        for name, added in self.channels.items():
            already = "" if added else " (all were already served)"
            out.append(f"channel {name}: {len(added)} model(s) added{already}")
        out.append(f"{len(self.priced)} price(s) set from the catalogue of {catalogue.as_of}")
        if self.kept:
            out.append(
                f"{len(self.kept)} operator price(s) kept (not overwritten): "
                + ", ".join(self.kept)
            )
        return out


@dataclass(frozen=True)
class _ChannelRow:
    name: str
    kind: str
    base_url: str


# The endpoint a catalogue model of each kind is called through.
_ENDPOINTS: Mapping[str, str] = {
    "chat": registry.CHAT,
    "embedding": registry.EMBEDDINGS,
    "image": registry.IMAGES,
    "tts": registry.AUDIO,
    "stt": registry.AUDIO,
    "rerank": registry.RERANK,
    "realtime": registry.REALTIME,
}


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def upstream_on(
    catalogue: Catalogue,
    model: CatalogueModel,
    kind: ProviderKind | None,
    base_url: str,
) -> str | None:
    """The model's id on a channel of `kind` at `base_url`, or None when that channel
    cannot serve it (the module docstring)."""
    if kind is None or not kind.serves(_ENDPOINTS[model.kind]):
        return None
    named = model.upstream_ids.get(kind.name)
    if named is not None:
        return named
    vendor = catalogue.vendors[model.vendor]
    at_vendor = vendor.api_host is not None and _host(base_url) == vendor.api_host
    return model.upstream_id if at_vendor else None


def _suggested_kind(model: CatalogueModel, kinds: Mapping[str, ProviderKind]) -> str:
    """The kind to add a channel of: the vendor's own, unless it can't serve the model's
    endpoint (then the first kind that can, at the vendor's host)."""
    own = kinds.get(model.channel_kind)
    if own is not None and own.serves(_ENDPOINTS[model.kind]):
        return model.channel_kind
    endpoint = _ENDPOINTS[model.kind]
    return next((n for n, k in kinds.items() if k.serves(endpoint)), model.channel_kind)


async def _channel_rows(conn: AsyncConnection) -> list[_ChannelRow]:
    rows = await conn.execute(
        select(channels.c.name, channels.c.kind, channels.c.base_url).order_by(channels.c.id)
    )
    return [_ChannelRow(r.name, r.kind, r.base_url) for r in rows]


def _targets(
    catalogue: Catalogue,
    models: Sequence[CatalogueModel],
    rows: list[_ChannelRow],
    channel: str | None,
    kinds: Mapping[str, ProviderKind],
) -> dict[str, dict[str, str]]:
    """Channel name -> {catalogue model id: its id upstream}."""
    if channel is not None:
        chosen = next((r for r in rows if r.name == channel), None)
        if chosen is None:
            raise CatalogueError(f"no channel named {channel!r}")
        kind = kinds.get(chosen.kind)
        return {
            chosen.name: {
                m.id: upstream_on(catalogue, m, kind, chosen.base_url) or m.upstream_id
                for m in models
            }
        }
    targets: dict[str, dict[str, str]] = {}
    homeless: list[CatalogueModel] = []
    for model in models:
        served = False
        for row in rows:
            upstream = upstream_on(catalogue, model, kinds.get(row.kind), row.base_url)
            if upstream is not None:
                targets.setdefault(row.name, {})[model.id] = upstream
                served = True
        if not served:
            homeless.append(model)
    if homeless:
        first = homeless[0]
        vendor = catalogue.vendors[first.vendor]
        suggested = _suggested_kind(first, kinds)
        where = f" at {vendor.base_url}" if vendor.api_host else ""
        raise CatalogueError(
            f"no channel can serve {first.id} ({len(homeless)} model(s) in all): "
            f"add a channel of kind {suggested}{where}, e.g. "
            f"`switchgate channels add {first.vendor} --kind {suggested} "
            f"--base-url {vendor.base_url} --key ... --models {first.id}`, "
            f"or pass --channel NAME"
        )
    return targets


async def import_models(
    conn: AsyncConnection,
    catalogue: Catalogue,
    models: Sequence[CatalogueModel],
    *,
    channel: str | None = None,
    on_model: Callable[[], None] | None = None,
    kinds: Mapping[str, ProviderKind] | None = None,
) -> ImportReport:
    """`on_model()` is called after each model's price is handled (a progress bar).
    `kinds`: the registry (AppState's; the CLI builds its own)."""
    if not models:
        raise CatalogueError("no catalogue model matches; see `switchgate catalogue list`")
    kinds = provider_kinds() if kinds is None else kinds
    report = ImportReport()
    targets = _targets(catalogue, models, await _channel_rows(conn), channel, kinds)
    for name, chosen in targets.items():
        aliases = {model: upstream for model, upstream in chosen.items() if upstream != model}
        report.channels[name] = await add_models(conn, name, list(chosen), aliases)
    sources = await price_sources(conn, [m.id for m in models])
    for model in models:
        if on_model is not None:
            on_model()
        if model.id in sources and sources[model.id] is None:
            report.kept.append(model.id)
            continue
        price = model.price
        await set_price(
            conn,
            model.id,
            kind=price.kind,
            input=price.input,
            output=price.output,
            cache_read=price.cache_read,
            cache_write=price.cache_write,
            per_request=price.per_request,
            extra=price.extra,
            source=catalogue.source_tag,
        )
        report.priced.append(model.id)
    return report
