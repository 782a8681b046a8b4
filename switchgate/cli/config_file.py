"""`--config FILE`: channels, prices and settings declared in TOML, applied idempotently.

[settings]                 # any Settings field, e.g. port = 8080
[[channels]]
name = "openai-main"
kind = "openai"            # openai | azure | anthropic | gemini | bedrock | vertex | cohere ...
base_url = "https://api.openai.com/v1"
key_env = "OPENAI_API_KEY" # or: key = "sk-..."; none for ollama, vllm, lmstudio
# or many keys, used in turn by weight: keys = ["sk-1", { key = "sk-2", weight = 3 }]
# a key may be capped: { key = "sk-3", max_concurrency = 4, rpm = 60 }
models = ["gpt-4o-mini"]
priority = 0
weight = 1
map = { "mini" = "gpt-4o-mini" }
headers = { "X-Org" = "abc" }
responses = true           # openai kind: also serves the Responses API (passthrough);
                           # default: on for api.openai.com, off for other base URLs
timeouts = { stream_first_byte = 10, stream_idle = 15 }  # this channel's limits, seconds
options = { region = "us-east-1" }  # kind-specific settings (bedrock: region; vertex:
                                     # project, location; mistral: safe_prompt), docs/providers.md
[fallbacks]                # other models tried in order when a model's channels all fail
"gpt-5" = ["claude-sonnet-4-5", "gpt-4.1"]   # (docs/routing.md); [] removes them
[prices."gpt-4o-mini"]     # USD per 1M tokens, as strings or numbers
input = "0.15"
output = "0.60"
cache_read = "0.075"
per_request = "0.001"   # USD per call, optional
[prices."dall-e-3"]        # media prices (docs/endpoints.md)
kind = "image"             # chat | embedding | image | tts | stt | rerank
per_image = "0.04"         # USD per image, any size/quality
image_prices = { "1024x1024:hd" = "0.08", "1792x1024" = "0.08" }
[prices."tts-1"]
kind = "tts"
per_1m_characters = "15"
[prices."whisper-1"]
kind = "stt"
per_minute = "0.006"
"""

import os
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from switchgate.billing.media_pricing import media_extra
from switchgate.billing.prices import set_price
from switchgate.money import per_million_to_unit_price, usd_to_units
from switchgate.relay.paid_options import check_paid_options
from switchgate.routing import fallbacks
from switchgate.routing.channels import channel_options, upsert_channel
from switchgate.routing.keys import KeySpec, parse_keys
from switchgate.routing.limits import check_timeouts
from switchgate.storage.db import Database
from switchgate.storage.secrets import SecretBox


class ConfigError(ValueError):
    pass


def read_config(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc


def _keys(entry: dict[str, Any]) -> list[KeySpec]:
    """`keys = ["k1", { key = "k2", weight = 3, max_concurrency = 4, rpm = 60 }]` (many
    keys), else `key` / `key_env`."""
    if "keys" not in entry:
        return [KeySpec(_key(entry))]
    raw = entry["keys"]
    try:
        if not isinstance(raw, list) or not raw:
            raise ValueError("`keys` must be a non-empty list")
        return parse_keys(raw)
    except ValueError as exc:
        raise ConfigError(f"channel {entry.get('name')!r}: {exc}") from exc


def _key(entry: dict[str, Any]) -> str:
    if "key_env" in entry:
        value = os.environ.get(str(entry["key_env"]))
        if not value:
            raise ConfigError(f"channel {entry.get('name')!r}: ${entry['key_env']} is not set")
        return value
    # No key: fine for a kind that needs none (a local server); the others are refused
    # with "a channel needs at least one API key" (routing/channels.py).
    return str(entry.get("key", ""))


def _price(value: Any) -> int:
    return per_million_to_unit_price(str(value))


def _media_extra(spec: dict[str, Any]) -> dict[str, int]:
    """per_image, image_prices = {"SIZE:QUALITY" = USD}, per_1m_characters, per_minute."""
    images = spec.get("image_prices", {})
    if not isinstance(images, dict):
        raise ConfigError("image_prices must be a table of SIZE:QUALITY = USD")

    def usd(key: str) -> str | None:
        return str(spec[key]) if key in spec else None

    return media_extra(
        per_image=usd("per_image"),
        image_prices={str(k): str(v) for k, v in images.items()},
        per_1m_characters=usd("per_1m_characters"),
        per_minute=usd("per_minute"),
    )


async def apply_config(
    db: Database,
    box: SecretBox,
    config: dict[str, Any],
    step: Callable[[], object] | None = None,
) -> list[str]:
    """Upsert every declared channel, price and fallback model; returns a line per change
    for the log.
    `step()` after each item (the CLI's progress bar)."""
    done: list[str] = []
    async with db.begin() as conn:
        for entry in config.get("channels", []):
            extra: dict[str, Any] = {}
            if "headers" in entry:
                extra["headers"] = dict(entry["headers"])
            if "api_version" in entry:
                extra["api_version"] = str(entry["api_version"])
            if isinstance(entry.get("responses"), bool):  # serves POST {base}/responses
                extra["responses"] = entry["responses"]  # (unset: responses_passthrough.py)
            if "timeouts" in entry:
                extra["timeouts"] = check_timeouts(dict(entry["timeouts"]))
            if "paid_options" in entry:
                extra["paid_options"] = check_paid_options(entry["paid_options"])
            if "options" in entry:  # a kind's own settings (Target.options)
                extra.update(channel_options(entry["options"]))
            _, created = await upsert_channel(
                conn,
                box,
                name=str(entry["name"]),
                kind=str(entry["kind"]),
                base_url=str(entry["base_url"]),
                api_key="",
                keys=_keys(entry),
                models=[str(m) for m in entry["models"]],
                model_map={str(k): str(v) for k, v in entry.get("map", {}).items()},
                priority=int(entry.get("priority", 0)),
                weight=int(entry.get("weight", 1)),
                status="disabled" if entry.get("disabled") else "enabled",
                extra=extra,
            )
            done.append(f"channel {entry['name']} {'created' if created else 'updated'}")
            if step is not None:
                step()
        if "fallbacks" in config:
            try:
                declared = fallbacks.from_table(config["fallbacks"])
            except ValueError as exc:
                raise ConfigError(str(exc)) from exc
            value = await fallbacks.apply(conn, declared, "config file")
            done.append(f"fallback models: {value or '(none)'}")
        for model, spec in config.get("prices", {}).items():
            await set_price(
                conn,
                model,
                kind=str(spec.get("kind", "chat")),
                input=_price(spec.get("input", 0)),
                output=_price(spec.get("output", 0)),
                cache_read=_price(spec["cache_read"]) if "cache_read" in spec else None,
                cache_write=_price(spec["cache_write"]) if "cache_write" in spec else None,
                per_request=usd_to_units(str(spec["per_request"])) if "per_request" in spec else 0,
                extra=_media_extra(spec),
            )
            done.append(f"price {model} set")
            if step is not None:
                step()
    return done
