"""Embeddings larger than one upstream batch, end to end: the official openai SDK against
the real gateway, a Gemini channel on the fake upstream (which, like Gemini, refuses more
than 100 requests per `:batchEmbedContents`), and the Gemini dialect's own limit."""

from typing import Any

import openai
import pytest

from switchgate.testing.mock_upstream.assets import embed_vector
from switchgate.tokenizer import Tokenizer
from tests.conftest import Gateway
from tests.e2e.media_helpers import PER_TOKEN, client, log_rows
from tests.support import clear_mock_requests, http_json, mock_requests, wait_for

GEMINI_EMBED = PER_TOKEN * 15 // 100  # gemini-embed: $0.15 per 1M tokens, no per_request
START = 10 * 10**12  # a new user's balance, in units
TOKENIZER = Tokenizer()
TOO_MANY = "* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch"


def texts(count: int) -> list[str]:
    """Distinct texts of varied token counts."""
    return [f"document {i}: " + "lorem ipsum " * (i % 7) + f"end{i}" for i in range(count)]


def batch_calls(gw: Gateway) -> list[list[str]]:
    """The texts of each `:batchEmbedContents` the fake upstream received, by first text."""
    calls = [
        [r["content"]["parts"][0]["text"] for r in sent["json"]["requests"]]
        for sent in mock_requests(gw.mock_url)
        if sent["path"].endswith(":batchEmbedContents")
    ]
    return sorted(calls, key=lambda call: int(call[0].split(":")[0].split()[1]))


def test_250_inputs_are_split_into_batches_and_merged_in_order(gateway_any: Gateway) -> None:
    email, token = gateway_any.new_user()
    inputs = texts(250)
    clear_mock_requests(gateway_any.mock_url)
    reply = client(gateway_any, token).embeddings.create(
        model="gemini-embed", input=inputs, dimensions=8
    )
    assert [d.index for d in reply.data] == list(range(250))
    assert [d.embedding for d in reply.data] == [embed_vector(t, 8) for t in inputs]
    assert reply.model == "gemini-embed"

    calls = batch_calls(gateway_any)
    assert [len(call) for call in calls] == [100, 100, 50]
    assert [text for call in calls for text in call] == inputs

    counted = sum(TOKENIZER.count(t) for t in inputs)
    assert reply.usage.prompt_tokens == reply.usage.total_tokens == counted
    cost = counted * GEMINI_EMBED
    assert wait_for(lambda: gateway_any.balance(email) == START - cost)
    rows = wait_for(lambda: log_rows(gateway_any, email))
    assert len(rows) == 1, "one call, one log row"
    row = rows[0]
    assert (row["endpoint"], row["dialect"], row["status"]) == ("embeddings", "openai", 200)
    assert (row["model"], row["upstream_model"]) == ("gemini-embed", "gemini-embedding-001")
    assert (row["cost"], row["input_tokens"], row["output_tokens"]) == (cost, counted, 0)
    assert row["usage_estimated"] is True and row["error"] is None


def test_2048_inputs_are_accepted_and_2049_are_400(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    sdk = client(gateway, token)
    inputs = [f"item {i}" for i in range(2049)]
    clear_mock_requests(gateway.mock_url)
    with pytest.raises(openai.BadRequestError) as err:
        sdk.embeddings.create(model="gemini-embed", input=inputs)
    assert err.value.status_code == 400
    assert err.value.param == "input"
    assert "2048" in err.value.message
    assert batch_calls(gateway) == [], "refused before anything is sent upstream"

    reply = sdk.embeddings.create(
        model="gemini-embed", input=inputs[:2048], dimensions=4, encoding_format="float"
    )
    assert len(reply.data) == 2048 and reply.data[2047].index == 2047
    assert reply.data[2047].embedding == embed_vector("item 2047", 4)
    counted = sum(TOKENIZER.count(t) for t in inputs[:2048])
    assert reply.usage.prompt_tokens == counted
    assert wait_for(lambda: gateway.balance(email) == START - counted * GEMINI_EMBED)
    rows = wait_for(lambda: len(log_rows(gateway, email)) == 2 and log_rows(gateway, email))
    assert [(r["status"], r["cost"]) for r in rows] == [(400, 0), (200, counted * GEMINI_EMBED)]


@pytest.mark.parametrize(
    ("upstream_status", "position", "client_status"),
    [(400, 150, 400), (503, 249, 503), (500, 50, 502)],
    ids=["400-in-batch-2", "503-in-batch-3", "500-in-batch-1"],
)
def test_a_failing_batch_fails_the_whole_call_and_charges_nothing(
    gateway: Gateway, upstream_status: int, position: int, client_status: int
) -> None:
    email, token = gateway.new_user()
    inputs = texts(250)
    inputs[position] += f" [[mock:error={upstream_status}]]"
    with pytest.raises(openai.APIStatusError) as err:
        client(gateway, token).embeddings.create(model="gemini-embed", input=inputs)
    assert err.value.status_code == client_status
    body: Any = err.value.body
    assert set(body) == {"message", "type", "param", "code"}, "the OpenAI error shape"
    assert gateway.balance(email) == START
    rows = wait_for(lambda: log_rows(gateway, email))
    assert [(r["status"], r["cost"], r["input_tokens"]) for r in rows] == [(client_status, 0, 0)]
    assert rows[0]["error"]


# ---------------------------------------------------------------- Gemini dialect


def _gemini_batch(gw: Gateway, token: str, model: str, count: int) -> tuple[int, Any]:
    body = {
        "requests": [
            {"model": f"models/{model}", "content": {"parts": [{"text": t}]}} for t in texts(count)
        ]
    }
    url = f"{gw.url}/v1beta/models/{model}:batchEmbedContents"
    return http_json("POST", url, body, {"x-goog-api-key": token})


@pytest.mark.parametrize("model", ["gemini-embed", "embed-mock"])  # Gemini / OpenAI channel
def test_the_gemini_dialect_refuses_more_than_100_requests_on_any_channel(
    gateway: Gateway, model: str
) -> None:
    email, token = gateway.new_user()
    clear_mock_requests(gateway.mock_url)
    status, reply = _gemini_batch(gateway, token, model, 101)
    assert status == 400
    assert reply == {"error": {"code": 400, "message": TOO_MANY, "status": "INVALID_ARGUMENT"}}
    assert mock_requests(gateway.mock_url) == [], "refused before anything is sent upstream"
    assert gateway.balance(email) == START

    status, reply = _gemini_batch(gateway, token, model, 100)
    assert status == 200 and len(reply["embeddings"]) == 100
    assert len(mock_requests(gateway.mock_url)) == 1, "100 requests: one upstream call"
    rows = wait_for(lambda: len(log_rows(gateway, email)) == 2 and log_rows(gateway, email))
    assert [(r["endpoint"], r["status"]) for r in rows] == [
        ("batchEmbedContents", 400),
        ("batchEmbedContents", 200),
    ]
    assert rows[1]["cost"] > 0 and gateway.balance(email) == START - rows[1]["cost"]
