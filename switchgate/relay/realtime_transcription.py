"""Input-audio transcription in one Realtime session: which model transcribes, and what each
`conversation.item.input_audio_transcription.completed` costs (billing/realtime_transcription.py).

- The model is learned from the session objects that set it: the client's `session.update`
  (provisional) and the upstream's `session.created` / `session.updated` (authoritative,
  they come after). The gateway never rewrites it: the upstream gets the client's name.
- Its price: the catalog's price for that name, else the price of a model that a channel
  maps to that upstream name (the session's channel first, then every channel in order),
  so an operator's alias (`whisper-mock` -> `whisper-1`) prices it.
- Each (item_id, content_index) is charged once, however often the upstream repeats it.
- No price (or no model, or no readable usage): the transcription is recorded at cost 0,
  and a warning is logged once per session for each such model (or missing usage).
"""

import logging
from dataclasses import dataclass
from typing import Any, Final

from switchgate import jsonutil
from switchgate.billing.pricing import Price
from switchgate.billing.realtime_transcription import (
    session_transcription,
    transcription_charge,
    transcription_usage,
)
from switchgate.catalog import Catalog
from switchgate.core.usage import Usage
from switchgate.routing.channels import Channel
from switchgate.tokenizer import Tokenizer

log = logging.getLogger("switchgate.realtime")

ENDPOINT: Final = "realtime.transcription"


@dataclass(frozen=True, slots=True)
class TranscriptionCharge:
    model: str | None  # the priced model (the session's name or an alias of it)
    upstream_model: str | None  # the name in the session
    cost: int
    usage: Usage | None


def transcription_price(
    catalog: Catalog, channel: Channel | None, name: str
) -> tuple[str, Price] | None:
    """(priced model, its price) for the transcription model `name`; None when unpriced."""
    price = catalog.prices.get(name)
    if price is not None:
        return name, price
    channels = [channel] if channel is not None else []
    channels += [c for c in catalog.channels if c is not channel]
    for candidate in channels:
        for model in candidate.models:
            if candidate.upstream_model(model) == name and model in catalog.prices:
                return model, catalog.prices[model]
    return None


class TranscriptionMeter:
    """Per session: the transcription model, what was charged, what was warned about."""

    def __init__(self, context: str) -> None:
        self.model: str | None = None
        self._context = context  # for log lines: the realtime model and the user
        self._charged: set[tuple[str, int]] = set()
        self._warned: set[str | None] = set()

    def learn(self, session: Any) -> None:
        """A session object (client `session.update`, upstream `session.created/updated`)."""
        mentioned, model = session_transcription(session)
        if mentioned:
            self.model = model

    def learn_from_client(self, text: str) -> None:
        """A client frame that may be a `session.update`."""
        try:
            event = jsonutil.loads(text)
        except jsonutil.JSONDecodeError:
            return
        if isinstance(event, dict) and event.get("type") == "session.update":
            self.learn(event.get("session"))

    def _warn_once(self, key: str | None, message: str, *args: object) -> None:
        if key not in self._warned:
            self._warned.add(key)
            log.warning(message + " (%s); further ones in this session are not logged", *args)

    def charge(
        self,
        event: dict[str, Any],
        catalog: Catalog,
        channel: Channel | None,
        tokenizer: Tokenizer,
    ) -> TranscriptionCharge | None:
        """The charge for one completed transcription; None when it was charged already."""
        item_id, index = event.get("item_id"), event.get("content_index")
        if isinstance(item_id, str):
            key = (item_id, index if isinstance(index, int) else 0)
            if key in self._charged:
                return None
            self._charged.add(key)
        name = self.model
        usage = transcription_usage(event.get("usage"))
        if usage is None:
            self._warn_once(
                "\0no-usage",
                "realtime transcription without readable usage, recorded at cost 0",
                self._context,
            )
            return TranscriptionCharge(name, name, 0, None)
        found = transcription_price(catalog, channel, name) if name else None
        if found is None:
            self._warn_once(
                name,
                "realtime transcription model %r has no price: recorded at cost 0",
                name,
                self._context,
            )
            return TranscriptionCharge(name, name, 0, usage.tokens)
        model, price = found
        transcript = event.get("transcript")
        words = transcript if isinstance(transcript, str) else ""
        transcript_tokens = tokenizer.count(words) if usage.seconds is not None else 0
        cost, recorded = transcription_charge(price, usage, transcript_tokens)
        return TranscriptionCharge(model, name, cost, recorded)
