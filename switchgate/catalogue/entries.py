"""Loading and querying the shipped catalogue (pure: no database, no network)."""

import fnmatch
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from switchgate.billing.media_pricing import describe_extra, media_extra
from switchgate.billing.prices import PRICE_KINDS
from switchgate.billing.pricing import Price
from switchgate.money import (
    MoneyError,
    format_usd_exact,
    per_million_to_unit_price,
    unit_price_to_per_million,
)

CAPABILITIES = ("tools", "vision", "reasoning", "json_schema", "audio")
DATA_FILE = "models.json"


class CatalogueError(ValueError):
    """The data file is malformed, or a lookup named nothing in it."""


@dataclass(frozen=True, slots=True)
class Vendor:
    """Who makes the models, and how a channel reaches them.

    `channel_kind` is the switchgate channel kind that speaks the vendor's API (a preset
    kind such as `deepseek` for OpenAI-compatible vendors); `api_host` is set for vendors
    reached over an OpenAI-compatible API at their own address, so an import without
    `--channel` also recognises channels of other kinds there by host (an `openai`-kind
    channel at api.deepseek.com); `also_served_by`: other kinds that serve every model of
    the vendor under the same id (Gemini models on `vertex`)."""

    name: str
    channel_kind: str
    base_url: str
    api_host: str | None = None
    also_served_by: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CatalogueModel:
    id: str
    vendor: str
    channel_kind: str
    upstream_id: str
    kind: str
    price: Price
    context_window: int | None = None
    max_output: int | None = None
    capabilities: frozenset[str] = field(default_factory=frozenset)
    note: str = ""
    # Channel kind -> the model's id there: its vendor's kind (`upstream_id`), the kinds
    # that serve the whole vendor, and the clouds that name it otherwise (`served_by` in
    # the data file: Claude on `vertex` and `bedrock`, Llama on `bedrock`).
    upstream_ids: Mapping[str, str] = field(default_factory=dict, hash=False)

    def describe_price(self) -> str:
        """One line, in the units operators type (USD per 1M tokens, per image, ...)."""
        parts = []
        if self.price.input or self.kind in ("chat", "embedding", "rerank"):
            parts.append(f"input {unit_price_to_per_million(self.price.input)}")
        if self.price.output:
            parts.append(f"output {unit_price_to_per_million(self.price.output)}")
        if self.price.cache_read is not None:
            parts.append(f"cache read {unit_price_to_per_million(self.price.cache_read)}")
        if self.price.cache_write is not None:
            parts.append(f"cache write {unit_price_to_per_million(self.price.cache_write)}")
        text = " ".join(parts) + (" USD/1M" if parts else "")
        if self.price.per_request:
            text += f" per request {format_usd_exact(self.price.per_request)}"
        if self.price.extra:
            text = (text + " " + describe_extra(self.price.extra)).strip()
        return text


@dataclass(frozen=True, slots=True)
class Catalogue:
    as_of: str
    source: str
    vendors: Mapping[str, Vendor]
    models: tuple[CatalogueModel, ...]

    @property
    def source_tag(self) -> str:
        """What imported prices are marked with: the catalogue and its date."""
        return f"catalogue:{self.as_of}"

    def get(self, model_id: str) -> CatalogueModel:
        for model in self.models:
            if model.id == model_id:
                return model
        raise CatalogueError(f"{model_id!r} is not in the catalogue (as of {self.as_of})")

    def find(self, model_id: str) -> CatalogueModel | None:
        return next((m for m in self.models if m.id == model_id), None)

    def select(
        self,
        *,
        vendor: str | None = None,
        pattern: str | None = None,
        kind: str | None = None,
    ) -> list[CatalogueModel]:
        """Models of a vendor, whose id matches a shell-style pattern (`claude-*`), of a
        kind; comma-separated patterns match any of them."""
        if vendor is not None and vendor not in self.vendors:
            known = ", ".join(sorted(self.vendors))
            raise CatalogueError(f"unknown provider {vendor!r}; the catalogue has: {known}")
        patterns = [p.strip() for p in (pattern or "").split(",") if p.strip()]
        return [
            m
            for m in self.models
            if (vendor is None or m.vendor == vendor)
            and (kind is None or m.kind == kind)
            and (not patterns or any(fnmatch.fnmatchcase(m.id, p) for p in patterns))
        ]


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _price(model_id: str, kind: str, raw: Mapping[str, Any]) -> Price:
    def per_m(name: str) -> int | None:
        value = raw.get(name)
        return None if value is None else per_million_to_unit_price(str(value))

    image_prices = raw.get("image_prices") or {}
    extra = media_extra(
        per_image=_text(raw.get("per_image")),
        image_prices={str(size): str(usd) for size, usd in image_prices.items()},
        per_1m_characters=_text(raw.get("per_1m_characters")),
        per_minute=_text(raw.get("per_minute")),
    )
    return Price(
        model=model_id,
        kind=kind,
        input=per_m("input") or 0,
        output=per_m("output") or 0,
        cache_read=per_m("cache_read"),
        cache_write=per_m("cache_write"),
        extra=extra,
    )


def _model(raw: Mapping[str, Any], vendors: Mapping[str, Vendor]) -> CatalogueModel:
    model_id = str(raw["id"])
    vendor_name = str(raw["vendor"])
    vendor = vendors.get(vendor_name)
    if vendor is None:
        raise CatalogueError(f"{model_id}: unknown vendor {vendor_name!r}")
    kind = str(raw["kind"])
    if kind not in PRICE_KINDS:
        raise CatalogueError(f"{model_id}: unknown kind {kind!r}")
    capabilities = frozenset(raw.get("capabilities", ()))
    unknown = capabilities - set(CAPABILITIES)
    if unknown:
        raise CatalogueError(f"{model_id}: unknown capabilities {sorted(unknown)}")
    try:
        price = _price(model_id, kind, raw["price"])
    except MoneyError as exc:
        raise CatalogueError(f"{model_id}: {exc}") from exc
    channel_kind = str(raw.get("channel_kind") or vendor.channel_kind)
    upstream_id = str(raw.get("upstream_id") or model_id)
    served_by = raw.get("served_by") or {}
    if not isinstance(served_by, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) and v for k, v in served_by.items()
    ):
        raise CatalogueError(f"{model_id}: served_by must map channel kinds to model ids")
    return CatalogueModel(
        id=model_id,
        vendor=vendor_name,
        channel_kind=channel_kind,
        upstream_id=upstream_id,
        kind=kind,
        price=price,
        context_window=raw.get("context_window"),
        max_output=raw.get("max_output"),
        capabilities=capabilities,
        note=str(raw.get("note") or ""),
        upstream_ids={
            **dict.fromkeys(vendor.also_served_by, upstream_id),
            **served_by,
            channel_kind: upstream_id,
        },
    )


def parse_catalogue(data: Mapping[str, Any]) -> Catalogue:
    vendors = {
        name: Vendor(
            name=name,
            channel_kind=str(v["channel_kind"]),
            base_url=str(v["base_url"]),
            api_host=v.get("api_host"),
            also_served_by=tuple(v.get("also_served_by") or ()),
        )
        for name, v in data["vendors"].items()
    }
    models = tuple(_model(raw, vendors) for raw in data["models"])
    seen: set[str] = set()
    for model in models:
        if model.id in seen:
            raise CatalogueError(f"{model.id} is listed twice")
        seen.add(model.id)
    return Catalogue(
        as_of=str(data["as_of"]), source=str(data["source"]), vendors=vendors, models=models
    )


@cache
def shipped_catalogue() -> Catalogue:
    """The catalogue in the package. Immutable, so reading it once per process is safe."""
    text = resources.files("switchgate.catalogue").joinpath(DATA_FILE).read_text("utf-8")
    return parse_catalogue(json.loads(text))


def vendors_of(models: Iterable[CatalogueModel]) -> list[str]:
    return sorted({m.vendor for m in models})
