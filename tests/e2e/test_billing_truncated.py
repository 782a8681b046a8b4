"""Issue 18, point 1: an Anthropic stream that ends before `message_delta` (the upstream
closes after content_block_stop, the client leaves, the upstream errs mid-stream) is
billed the larger of what was reported and the tokenizer's count of what was delivered,
marked estimated; passed through and translated, on SQLite and PostgreSQL with two
workers. Before, `message_start`'s `output_tokens: 1` was taken as final."""

import json
import time
from typing import Any

import httpx
import pytest

from switchgate.money import UNITS_PER_USD
from switchgate.tokenizer import Tokenizer
from tests.conftest import Gateway
from tests.e2e.billing_support import (  # noqa: F401 - two_workers is a fixture
    charges,
    expected_cost,
    logs,
    two_workers_fixture,
)
from tests.support import wait_for

WORDS = 300  # the mock reports one token per word; cl100k counts about two
PROMPT = f"[[mock:words={WORDS}]] tell me a long story"


def _request(path: str, text: str, token: str) -> tuple[str, dict[str, Any], dict[str, str]]:
    headers = {"authorization": f"Bearer {token}", "x-api-key": token}
    messages = [{"role": "user", "content": text}]
    body: dict[str, Any] = {"model": "claude-mock", "stream": True, "messages": messages}
    if path == "anthropic":
        headers["anthropic-version"] = "2023-06-01"
        return "/v1/messages", {**body, "max_tokens": 2000}, headers
    return "/v1/chat/completions", {**body, "max_tokens": 2000}, headers


def _text_of(line: str, anthropic: bool) -> str:
    if not line.startswith("data: ") or line == "data: [DONE]":
        return ""
    data = json.loads(line[6:])
    if anthropic:
        delta = data.get("delta") if data.get("type") == "content_block_delta" else None
        return str(delta.get("text", "")) if isinstance(delta, dict) else ""
    choices = data.get("choices") or [{}]
    return str((choices[0].get("delta") or {}).get("content") or "")


def _stream(gw: Gateway, path: str, text: str, token: str, leave: bool = False) -> str:
    """The text the client received. `leave`: hang up once the whole answer is in (right
    after content_block_stop on Anthropic; after the last word on OpenAI), before the
    upstream's message_delta."""
    url, body, headers = _request(path, text, token)
    anthropic = path == "anthropic"
    received: list[str] = []
    last = f"w{WORDS}"
    with (
        httpx.Client(timeout=30) as client,
        client.stream("POST", f"{gw.url}{url}", json=body, headers=headers) as response,
    ):
        assert response.status_code == 200
        for line in response.iter_lines():
            received.append(_text_of(line, anthropic))
            done = "content_block_stop" in line if anthropic else last in "".join(received)
            if leave and done:
                break
    return "".join(received)


PATHS = ["anthropic", "openai"]  # passed through; translated (OpenAI client, A upstream)


def _check_estimated(gw: Gateway, email: str, delivered: list[str]) -> None:
    assert wait_for(lambda: charges(gw, email)[0] == len(delivered), timeout=15)
    rows = logs(gw, email)
    counter = Tokenizer()
    expected = sorted(max(1, counter.count(text)) for text in delivered)
    assert sorted(r.output_tokens for r in rows) == expected
    for row in rows:
        assert row.usage_estimated, row
        assert row.input_tokens > 1  # message_start's input count is kept
        assert row.cost == expected_cost("claude-mock", row) > 0
    _, total = charges(gw, email)
    assert total == sum(r.cost for r in rows)
    assert gw.balance(email) == 10 * UNITS_PER_USD - total  # and == sum(ledger)


@pytest.mark.parametrize("path", PATHS)
def test_upstream_closing_after_content_block_stop(two_workers: Gateway, path: str) -> None:
    email, token = two_workers.new_user(balance_usd=10)
    text = _stream(two_workers, path, PROMPT + " [[mock:close_after_content]]", token)
    assert text.endswith(f"w{WORDS}")  # the whole answer was delivered
    _check_estimated(two_workers, email, [text])
    # It was the whole answer: billed at least its WORDS tokens, not 1.
    assert logs(two_workers, email)[0].output_tokens >= WORDS


@pytest.mark.parametrize("path", PATHS)
def test_client_leaving_before_message_delta(two_workers: Gateway, path: str) -> None:
    email, token = two_workers.new_user(balance_usd=10)
    started = time.monotonic()
    text = _stream(two_workers, path, PROMPT + " [[mock:tail_delay=5000]]", token, leave=True)
    assert time.monotonic() - started < 4, "left before message_delta"
    assert text.endswith(f"w{WORDS}")
    _check_estimated(two_workers, email, [text])
    assert logs(two_workers, email)[0].output_tokens >= WORDS


@pytest.mark.parametrize("path", PATHS)
def test_upstream_error_mid_stream(two_workers: Gateway, path: str) -> None:
    email, token = two_workers.new_user(balance_usd=10)
    text = _stream(two_workers, path, PROMPT + " [[mock:chunks=20]][[mock:midstream_error]]", token)
    assert "w1 " in text and not text.endswith(f"w{WORDS}")  # a part of the answer
    _check_estimated(two_workers, email, [text])


@pytest.mark.parametrize("path", PATHS)
def test_a_whole_stream_is_billed_as_reported(two_workers: Gateway, path: str) -> None:
    email, token = two_workers.new_user(balance_usd=10)
    _stream(two_workers, path, PROMPT, token)
    assert wait_for(lambda: charges(two_workers, email)[0] == 1, timeout=15)
    [row] = logs(two_workers, email)
    assert not row.usage_estimated and row.output_tokens == WORDS
    assert row.cost == expected_cost("claude-mock", row)
