"""Rerank end to end over raw HTTP (no official SDK speaks it): Cohere-, Jina- and
OpenAI-compatible channels behind /v1/rerank, /rerank and /v2/rerank, one answer shape."""

from typing import Any

import pytest

from tests.conftest import Gateway
from tests.e2e.media_helpers import PER_TOKEN, log_rows, usd
from tests.support import clear_mock_requests, http_json, mock_requests, wait_for

START = 10 * 10**12
DOCUMENTS = ["the cat sat", {"text": "a dog barked at the cat"}, "nothing relevant", "cat cat"]


def rerank(gw: Gateway, token: str, path: str, body: dict[str, object]) -> tuple[int, Any]:
    return http_json("POST", f"{gw.url}{path}", body, {"authorization": f"Bearer {token}"})


def test_cohere_channel_billed_per_request(gateway_any: Gateway) -> None:
    email, token = gateway_any.new_user()
    clear_mock_requests(gateway_any.mock_url)
    status, reply = rerank(
        gateway_any,
        token,
        "/v1/rerank",
        {"model": "rerank-mock", "query": "the cat", "documents": DOCUMENTS, "top_n": 3,
         "return_documents": True},
    )  # fmt: skip
    assert status == 200, reply
    results = reply["results"]
    assert len(results) == 3 and reply["model"] == "rerank-mock"
    scores = [r["relevance_score"] for r in results]
    assert scores == sorted(scores, reverse=True), "best first"
    assert results[0]["index"] == 0 and results[0]["document"] == {"text": "the cat sat"}
    sent = [r for r in mock_requests(gateway_any.mock_url) if "rerank" in r["path"]]
    assert sent[-1]["path"] == "/v2/rerank"
    assert sent[-1]["json"]["documents"][1] == "a dog barked at the cat"
    assert "return_documents" not in sent[-1]["json"], "Cohere v2 has no return_documents"
    assert wait_for(lambda: gateway_any.balance(email) == START - usd("0.002"))
    rows = wait_for(lambda: log_rows(gateway_any, email))
    assert rows[0]["endpoint"] == "rerank" and rows[0]["cost"] == usd("0.002")


def test_jina_channel_billed_per_reported_token(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    clear_mock_requests(gateway.mock_url)
    status, reply = rerank(
        gateway, token, "/rerank", {"model": "rerank-jina", "query": "dog", "documents": DOCUMENTS}
    )
    assert status == 200, reply
    assert reply["results"][0]["index"] == 1
    assert all("document" not in r for r in reply["results"])
    tokens = reply["usage"]["total_tokens"]
    sent = [r for r in mock_requests(gateway.mock_url) if "rerank" in r["path"]]
    assert sent[-1]["path"] == "/v1/rerank"
    assert wait_for(lambda: gateway.balance(email) == START - tokens * PER_TOKEN * 2 // 100)


def test_openai_compatible_channel_on_v2_path(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    status, reply = rerank(
        gateway,
        token,
        "/v2/rerank",
        {"model": "rerank-oai", "query": "cat", "documents": DOCUMENTS},
    )
    assert status == 200, reply
    assert len(reply["results"]) == len(DOCUMENTS)
    tokens = reply["usage"]["total_tokens"]
    cost = tokens * PER_TOKEN // 100 + usd("0.001")
    assert wait_for(lambda: gateway.balance(email) == START - cost)


@pytest.mark.parametrize(
    ("body", "status", "param"),
    [
        ({"model": "rerank-mock", "documents": ["a"]}, 400, "query"),
        ({"model": "rerank-mock", "query": "q", "documents": []}, 400, "documents"),
        ({"model": "rerank-mock", "query": "q", "documents": [1]}, 400, "documents"),
        ({"model": "claude-mock", "query": "q", "documents": ["a"]}, 404, "model"),
    ],
)
def test_rerank_errors(gateway: Gateway, body: dict[str, object], status: int, param: str) -> None:
    email, token = gateway.new_user()
    got, reply = rerank(gateway, token, "/v1/rerank", body)
    assert got == status and reply["error"]["param"] == param
    assert gateway.balance(email) == START
