"""Issue 20 #10 over real sockets: paid upstream options are refused with a clear 400 in
each dialect unless the channel allows them (none of the test channels do)."""

import anthropic
import httpx
import openai
import pytest

from tests.conftest import Gateway
from tests.support import mock_requests


def test_paid_options_are_refused_in_each_dialect(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    sdk = openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=token, max_retries=0)
    hello = [{"role": "user", "content": "hi"}]
    with pytest.raises(openai.BadRequestError) as tier:
        sdk.chat.completions.create(model="gpt-mock", messages=hello, service_tier="priority")
    assert tier.value.code == "paid_option_not_allowed" and "service_tier" in tier.value.message
    sdk.chat.completions.create(model="gpt-mock", messages=hello, service_tier="auto")
    # Responses hosted tools (Codex sends web_search with every turn) are left out, never
    # refused (issue 13), even on a native channel: nothing unpriced reaches the vendor.
    raw = sdk.responses.with_raw_response.create(
        model="gpt-resp", input="hi", tools=[{"type": "web_search"}]
    )
    assert raw.headers["x-switchgate-dropped-tools"] == "web_search"
    sent = [r for r in mock_requests(gateway.mock_url) if r["path"] == "/v1/responses"][-1]
    assert sent["json"]["tools"] == []

    claude = anthropic.Anthropic(base_url=gateway.url, api_key=token, max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as server_tool:
        claude.messages.create(
            model="claude-mock",
            max_tokens=8,
            messages=[{"role": "user", "content": "x"}],
            tools=[{"type": "web_search_20250305", "name": "web_search"}],
        )
    assert "hosted_tools" in str(server_tool.value)
    with pytest.raises(anthropic.BadRequestError):
        claude.messages.create(
            model="claude-mock",
            max_tokens=8,
            messages=[{"role": "user", "content": "x"}],
            extra_headers={"anthropic-beta": "context-1m-2025-08-07"},
        )

    cached = httpx.post(
        f"{gateway.url}/v1beta/models/gemini-mock:generateContent",
        headers={"x-goog-api-key": token},
        json={"contents": [{"parts": [{"text": "hi"}]}], "cachedContent": "cachedContents/x"},
    )
    assert cached.status_code == 400 and "stored_content" in cached.text
