"""Every price kind edited through the console API, then a billed request per kind with the
official SDK: an edit that leaves fields out keeps them (the per-image price survives a
token-only save), and a model whose price charges nothing is a clear 404, never a 500 or a
free answer. Uses its own channel and model names, so the shared catalogue is untouched."""

from typing import Any

import httpx
import openai
import pytest

from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Gateway
from tests.e2e.console_client import Console
from tests.e2e.media_helpers import PER_TOKEN, client, log_rows, usd, wav
from tests.support import http_json, wait_for

MAP = {
    "rt-chat": "gpt-mock",
    "rt-embed": "embed-mock",
    "rt-image": "dall-e-3",
    "rt-tts": "tts-mock",
    "rt-stt": "whisper-1",
    "rt-rerank": "rerank-oai",
    "rt-free-image": "dall-e-3",
    "gpt-5.5": "gpt-mock",  # in the shipped catalogue: the pricing page shows its context
}


@pytest.fixture(scope="module")
def admin(gateway: Gateway) -> Console:
    console = Console(gateway)
    assert console.signin(ADMIN_EMAIL, ADMIN_PASSWORD).status_code == 303
    console.ok(
        "POST",
        "/api/channels",
        {"name": "price-round-trip", "kind": "openai", "base_url": f"{gateway.mock_url}/v1",
         "api_key": "mock-key", "models": list(MAP), "model_map": MAP},
    )  # fmt: skip
    return console


def set_price(admin: Console, model: str, body: dict[str, Any]) -> dict[str, Any]:
    saved: dict[str, Any] = admin.ok("PUT", f"/api/prices/{model}", body)["price"]
    assert wait_for(lambda: live(admin, model) == saved), (live(admin, model), saved)
    return saved


def live(admin: Console, model: str) -> dict[str, Any] | None:
    for item in admin.ok("GET", "/api/models")["items"]:
        if item["model"] == model:
            return {k: v for k, v in item.items() if k != "served"}
    return None


def last_cost(gateway: Gateway, email: str, count: int) -> int:
    rows = wait_for(lambda: len(log_rows(gateway, email)) >= count and log_rows(gateway, email))
    assert rows, "no log row"
    assert rows[-1]["status"] == 200, rows[-1]
    return int(rows[-1]["cost"])


def test_every_price_kind_round_trips_and_bills(gateway: Gateway, admin: Console) -> None:
    email, token = gateway.new_user()
    sdk = client(gateway, token)

    set_price(admin, "rt-image", {"kind": "image", "per_image_usd": "0.05",
                                  "image_prices": {"1024x1024:hd": "0.09"}})  # fmt: skip
    # A save that sends only the token fields (as the old form did) keeps the image prices.
    image = set_price(admin, "rt-image", {"input_per_1m": "", "output_per_1m": ""})
    assert image["per_image_usd"] == "0.05" and image["image_prices"] == {"1024x1024:hd": "0.09"}
    sdk.images.generate(model="rt-image", prompt="x", size="1024x1024", quality="hd")
    assert last_cost(gateway, email, 1) == usd("0.09")

    set_price(admin, "rt-tts", {"kind": "tts", "per_1m_characters": "20"})
    sdk.audio.speech.create(model="rt-tts", voice="alloy", input="wave").read()
    assert last_cost(gateway, email, 2) == 4 * 20 * PER_TOKEN

    set_price(admin, "rt-stt", {"kind": "stt", "per_minute_usd": "0.012"})
    sdk.audio.transcriptions.create(model="rt-stt", file=("a.wav", wav(2.5), "audio/wav"))
    assert last_cost(gateway, email, 3) == -(-usd("0.012") * 3 // 60)

    set_price(admin, "rt-embed", {"kind": "embedding", "input_per_1m": "0.3"})
    embedded = sdk.embeddings.create(model="rt-embed", input="hello there")
    assert last_cost(gateway, email, 4) == embedded.usage.prompt_tokens * 3 * PER_TOKEN // 10

    set_price(admin, "rt-rerank", {"kind": "rerank", "per_request_usd": "0.003"})
    status, reply = http_json(
        "POST", f"{gateway.url}/v1/rerank",
        {"model": "rt-rerank", "query": "cat", "documents": ["cat", "dog"]},
        {"authorization": f"Bearer {token}"},
    )  # fmt: skip
    assert status == 200, reply
    assert last_cost(gateway, email, 5) == usd("0.003")

    chat_price = {"kind": "chat", "input_per_1m": "2", "output_per_1m": "4",
                  "cache_read_per_1m": "1", "cache_write_per_1m": "2.5"}  # fmt: skip
    saved = set_price(admin, "rt-chat", chat_price)
    assert {k: saved[k] for k in chat_price} == chat_price
    hi = [{"role": "user", "content": "hi"}]
    reply = sdk.chat.completions.create(model="rt-chat", messages=hi)  # type: ignore[arg-type]
    assert reply.usage is not None
    expected = (reply.usage.prompt_tokens * 2 + reply.usage.completion_tokens * 4) * PER_TOKEN
    assert last_cost(gateway, email, 6) == expected


def test_a_model_whose_price_charges_nothing_is_a_clear_404(
    gateway: Gateway, admin: Console
) -> None:
    set_price(admin, "rt-free-image", {"kind": "image", "per_image_usd": "0"})
    email, token = gateway.new_user()
    with pytest.raises(openai.NotFoundError) as caught:
        client(gateway, token).images.generate(model="rt-free-image", prompt="x")
    assert caught.value.code == "model_not_priced"
    assert "no price" in caught.value.message
    assert gateway.balance(email) == 10 * 10**12
    view = live(admin, "rt-free-image")
    assert view is not None and view["priced"] is False


def test_the_public_pricing_page_lists_prices_and_context_and_can_be_turned_off(
    gateway: Gateway, admin: Console
) -> None:
    set_price(admin, "gpt-5.5", {"kind": "chat", "input_per_1m": "1.25", "output_per_1m": "10"})
    page = httpx.get(f"{gateway.url}/console/pricing")  # no session
    assert page.status_code == 200
    row = page.text[page.text.index("<b>gpt-5.5</b>") :].split("</tr>")[0]
    assert "$1.25 in / $10 out per 1M tokens" in row and "1,050,000" in row
    dall = page.text[page.text.index("<b>dall-mock</b>") :].split("</tr>")[0]
    assert "$0.04 per image" in dall and "$0 /" not in dall
    assert "rt-free-image" not in page.text  # a model that charges nothing is not offered
    assert 'id="pricing-link"' in httpx.get(f"{gateway.url}/console/signin").text
    admin.ok("PUT", "/api/settings", {"pricing_page": "off"})
    try:
        off = httpx.get(f"{gateway.url}/console/pricing")
        assert off.status_code == 404 and "does not publish its prices" in off.text
        assert 'id="pricing-link"' not in httpx.get(f"{gateway.url}/console/signin").text
    finally:
        admin.ok("PUT", "/api/settings", {"pricing_page": None})
    assert httpx.get(f"{gateway.url}/console/pricing").status_code == 200
