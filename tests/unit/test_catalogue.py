"""The shipped catalogue: well-formed, broad enough, and exact when turned into prices."""

import pytest

from switchgate.catalogue.entries import CatalogueError, parse_catalogue, shipped_catalogue
from switchgate.catalogue.importer import upstream_on
from switchgate.money import UNITS_PER_USD
from switchgate.providers.registry import kind_names, provider_kinds

VENDORS = {"openai", "anthropic", "google", "deepseek", "mistral", "xai", "qwen", "meta"}


def test_the_shipped_catalogue_covers_what_operators_expect() -> None:
    catalogue = shipped_catalogue()
    assert catalogue.as_of and catalogue.source_tag == f"catalogue:{catalogue.as_of}"
    assert len(catalogue.models) >= 65
    assert {m.vendor for m in catalogue.models} >= VENDORS
    kinds = {m.kind for m in catalogue.models}
    assert {"chat", "image", "tts", "embedding", "stt"} <= kinds
    assert any((m.context_window or 0) >= 256_000 for m in catalogue.models)
    for model in catalogue.models:
        assert model.channel_kind in kind_names(), model.id
        assert set(model.upstream_ids) <= set(kind_names()), model.id
        if model.kind == "chat":
            assert model.price.input > 0 and model.price.output > 0, model.id
            assert model.context_window and model.max_output, model.id


def test_prices_are_exact_integers_per_token() -> None:
    sonnet = shipped_catalogue().get("claude-sonnet-4-5")
    # 3 USD and 15 USD per 1M tokens, 0.30 cache read, 3.75 cache write.
    assert sonnet.price.input * 1_000_000 == 3 * UNITS_PER_USD
    assert sonnet.price.output * 1_000_000 == 15 * UNITS_PER_USD
    assert sonnet.price.cache_read == 300_000 and sonnet.price.cache_write == 3_750_000
    assert shipped_catalogue().get("tts-1").price.extra == {"per_character": 15_000_000}
    assert shipped_catalogue().get("whisper-1").price.extra == {"per_minute": 6_000_000_000}


def test_select_by_vendor_pattern_and_kind() -> None:
    catalogue = shipped_catalogue()
    claude = catalogue.select(vendor="anthropic")
    assert claude and all(m.id.startswith("claude-") for m in claude)
    both = catalogue.select(pattern="claude-haiku-*,gpt-4o")
    assert {m.id for m in both} >= {"claude-haiku-4-5", "gpt-4o"}
    assert all(m.kind == "tts" for m in catalogue.select(kind="tts"))
    with pytest.raises(CatalogueError, match="unknown provider 'nope'"):
        catalogue.select(vendor="nope")
    with pytest.raises(CatalogueError, match="not in the catalogue"):
        catalogue.get("no-such-model")


def _data(**model: object) -> dict[str, object]:
    entry = {"id": "m", "vendor": "v", "kind": "chat", "price": {"input": "1", "output": "2"}}
    entry.update(model)
    return {
        "as_of": "2026-01-01",
        "source": "test",
        "vendors": {"v": {"channel_kind": "openai", "base_url": "https://v.example/v1"}},
        "models": [entry],
    }


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"vendor": "w"}, "unknown vendor"),
        ({"kind": "video"}, "unknown kind"),
        ({"capabilities": ["telepathy"]}, "unknown capabilities"),
        ({"price": {"input": "0.0000001", "output": "1"}}, "finer than"),
        ({"price": {"input": "-1", "output": "1"}}, "must not be negative"),
    ],
)
def test_a_malformed_catalogue_is_refused_with_the_reason(
    change: dict[str, object], message: str
) -> None:
    with pytest.raises(CatalogueError, match=message):
        parse_catalogue(_data(**change))


KINDS = provider_kinds()


def _on(model_id: str, kind: str, base_url: str = "https://anywhere.example/v1") -> str | None:
    catalogue = shipped_catalogue()
    return upstream_on(catalogue, catalogue.get(model_id), KINDS[kind], base_url)


def test_which_channels_serve_a_catalogue_model_comes_from_the_registry() -> None:
    """The vendor's own kind anywhere; another kind that serves the endpoint at the
    vendor's host; the clouds where the catalogue names the model's id there."""
    assert _on("deepseek-chat", "deepseek") == "deepseek-chat"
    assert _on("deepseek-chat", "openai", "https://api.deepseek.com/v1") == "deepseek-chat"
    assert _on("deepseek-chat", "openai") is None
    assert _on("mistral-embed", "mistral") == "mistral-embed"
    # Gemini models keep their ids on Vertex; Claude and Llama are named per cloud.
    assert _on("gemini-2.5-pro", "vertex") == "gemini-2.5-pro"
    assert _on("gemini-embedding-001", "vertex") == "gemini-embedding-001"
    assert _on("claude-sonnet-4-5", "vertex") == "claude-sonnet-4-5@20250929"
    assert _on("claude-sonnet-4-5", "bedrock") == "anthropic.claude-sonnet-4-5-20250929-v1:0"
    assert _on("llama-3.3-70b", "bedrock") == "meta.llama3-3-70b-instruct-v1:0"
    assert _on("llama-3.3-70b", "together") == "meta-llama/Llama-3.3-70B-Instruct-Turbo"
    assert _on("claude-fable-5", "bedrock") is None  # no id known there: --channel
    assert _on("gemini-2.5-pro", "bedrock") is None
    # A kind must serve the model's endpoint: xAI's preset has no images endpoint.
    assert _on("grok-imagine-image", "xai") is None
    assert _on("grok-imagine-image", "openai", "https://api.x.ai/v1") == "grok-imagine-image"
    assert _on("gpt-image-1", "anthropic", "https://api.openai.com/v1") is None


def test_every_catalogue_model_has_a_kind_that_serves_it() -> None:
    catalogue = shipped_catalogue()
    for model in catalogue.models:
        vendor = catalogue.vendors[model.vendor]
        assert any(
            upstream_on(catalogue, model, kind, vendor.base_url) for kind in KINDS.values()
        ), model.id


def test_served_by_must_name_ids() -> None:
    entry = {
        "id": "m",
        "vendor": "v",
        "kind": "chat",
        "price": {"input": "1", "output": "2"},
        "served_by": {"bedrock": ""},
    }
    data = {
        "as_of": "2026-01-01",
        "source": "test",
        "vendors": {"v": {"channel_kind": "openai", "base_url": "https://v.example/v1"}},
        "models": [entry],
    }
    with pytest.raises(CatalogueError, match="served_by"):
        parse_catalogue(data)
