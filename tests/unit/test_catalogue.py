"""The shipped catalogue: well-formed, broad enough, and exact when turned into prices."""

import pytest

from switchgate.catalogue.entries import CatalogueError, parse_catalogue, shipped_catalogue
from switchgate.money import UNITS_PER_USD
from switchgate.providers.registry import kind_names

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
