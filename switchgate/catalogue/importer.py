"""Importing catalogue models onto channels, with their prices, in one transaction.

Rules (docs/catalogue.md):
- Each model is added to the chosen channel, or, without one, to every channel whose
  kind speaks the model's vendor API (the vendor's preset kind, e.g. `deepseek`, at any
  address), and to `openai`-kind channels at the vendor's own host.
- Its price is set from the catalogue and marked `catalogue:<date>`, unless the operator
  has set their own price for that model: the operator's price is kept (reported).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate.billing.prices import price_sources, set_price
from switchgate.catalogue.entries import Catalogue, CatalogueError, CatalogueModel
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


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def _matches(catalogue: Catalogue, model: CatalogueModel, channel: _ChannelRow) -> bool:
    """A channel of the model's own kind (a preset kind such as `deepseek` names its vendor
    wherever its address is), or an `openai`-kind channel at the vendor's host."""
    if channel.kind == model.channel_kind:
        return True
    vendor = catalogue.vendors[model.vendor]
    return (
        channel.kind == "openai"
        and vendor.api_host is not None
        and _host(channel.base_url) == vendor.api_host
    )


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
) -> dict[str, list[CatalogueModel]]:
    if channel is not None:
        chosen = next((r for r in rows if r.name == channel), None)
        if chosen is None:
            raise CatalogueError(f"no channel named {channel!r}")
        return {chosen.name: list(models)}
    targets: dict[str, list[CatalogueModel]] = {}
    homeless: list[CatalogueModel] = []
    for model in models:
        matching = [r for r in rows if _matches(catalogue, model, r)]
        if not matching:
            homeless.append(model)
        for row in matching:
            targets.setdefault(row.name, []).append(model)
    if homeless:
        vendor = catalogue.vendors[homeless[0].vendor]
        where = f" at {vendor.base_url}" if vendor.api_host else ""
        raise CatalogueError(
            f"no channel can serve {homeless[0].id} ({len(homeless)} model(s) in all): "
            f"add a channel of kind {vendor.channel_kind}{where}, e.g. "
            f"`switchgate channels add {homeless[0].vendor} --kind {vendor.channel_kind} "
            f"--base-url {vendor.base_url} --key ... --models {homeless[0].id}`, "
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
) -> ImportReport:
    """`on_model()` is called after each model's price is handled (a progress bar)."""
    if not models:
        raise CatalogueError("no catalogue model matches; see `switchgate catalogue list`")
    report = ImportReport()
    targets = _targets(catalogue, models, await _channel_rows(conn), channel)
    for name, chosen in targets.items():
        aliases = {m.id: m.upstream_id for m in chosen if m.upstream_id != m.id}
        report.channels[name] = await add_models(conn, name, [m.id for m in chosen], aliases)
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
