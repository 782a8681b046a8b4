"""The in-memory snapshot the hot path reads: channels by model, prices, the model list.

Built from the database at start and rebuilt whenever the config version changes
(the CLI and the console bump it), so a request never touches the database to route.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field

from switchgate.billing.pricing import Price
from switchgate.catalogue.entries import shipped_catalogue
from switchgate.catalogue.limits import ModelLimits, limits_for
from switchgate.routing.channels import Channel


@dataclass(frozen=True)
class Catalog:
    channels_by_model: Mapping[str, tuple[Channel, ...]] = field(default_factory=dict)
    prices: Mapping[str, Price] = field(default_factory=dict)
    channels: tuple[Channel, ...] = ()
    created_at: int = 0
    # What the shipped model catalogue says about served models it knows (by model id).
    limits: Mapping[str, ModelLimits] = field(default_factory=dict)
    # The operator's fallback models, by model (routing/fallbacks.py).
    fallbacks: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        channels: list[Channel],
        prices: Mapping[str, Price],
        created_at: int,
        fallbacks: Mapping[str, tuple[str, ...]] | None = None,
    ) -> "Catalog":
        by_model: dict[str, list[Channel]] = {}
        for channel in channels:
            if channel.status != "enabled":
                continue
            for model in channel.models:
                by_model.setdefault(model, []).append(channel)
        return cls(
            channels_by_model={m: tuple(cs) for m, cs in by_model.items()},
            prices=dict(prices),
            channels=tuple(channels),
            created_at=created_at,
            limits=limits_for(list(by_model), shipped_catalogue()),
            fallbacks=dict(fallbacks or {}),
        )

    def is_served(self, model: str) -> bool:
        """A model is offered when a channel serves it AND it has a price."""
        return model in self.channels_by_model and model in self.prices

    def models(self) -> list[str]:
        return sorted(m for m in self.channels_by_model if m in self.prices)

    def owner(self, model: str) -> str:
        channels = self.channels_by_model.get(model, ())
        return channels[0].kind if channels else "switchgate"
