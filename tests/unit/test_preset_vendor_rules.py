"""Vendor rules of single presets, against the fake upstream's preset modes: what the real
service refuses is refused there, and the preset's quirks keep the call valid."""

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from switchgate import jsonutil
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.capabilities import ModelBatchLimit
from switchgate.providers.openai import OpenAIProvider
from switchgate.providers.openai_compatible import PresetProvider
from switchgate.providers.openai_presets import preset
from switchgate.testing import MockUpstream, start_mock_upstream
from tests.unit._golden_ir import load


@pytest.fixture(scope="module")
async def upstream() -> AsyncIterator[MockUpstream]:
    up = await start_mock_upstream()
    yield up
    await up.close()


def _target(up: MockUpstream, kind: str, model: str) -> Target:
    return Target(f"{up.base_url}/presets/{kind}/v1", "mock-key", model)


async def _send(up: UpstreamRequest) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.request(up.method, up.url, headers=up.headers, content=up.body)


def _ir(text: str, **fields: Any) -> Any:
    message = {"_type": "Message", "role": "user", "parts": [{"_type": "TextPart", "text": text}]}
    return load({"_type": "ChatRequest", "model": "alias", "messages": [message], **fields})


# --- Qwen (DashScope) ---------------------------------------------------------------------


async def test_qwen_thinking_only_in_streams(upstream: MockUpstream) -> None:
    qwen = PresetProvider(preset("qwen"))
    target = _target(upstream, "qwen", "qwen-plus")
    thinking = load({"_type": "Reasoning", "enabled": True, "budget_tokens": 2048})
    plain = _ir("think", reasoning=thinking)
    refused = OpenAIProvider().build_chat_request(plain, target)
    body = {**jsonutil.loads(refused.body), "enable_thinking": True}
    refused = UpstreamRequest("POST", refused.url, refused.headers, jsonutil.dumps(body))
    answer = await _send(refused)
    assert answer.status_code == 400 and "non-streaming" in answer.text  # what DashScope says
    upstream.clear_requests()
    reply = await _send(qwen.build_chat_request(plain, target))
    assert reply.status_code == 200, reply.text
    sent = upstream.requests[-1]["json"]
    assert sent["enable_thinking"] is False and "thinking_budget" not in sent
    streamed = _ir("think", reasoning=thinking, stream=True)
    reply = await _send(qwen.build_chat_request(streamed, target))
    assert reply.status_code == 200, reply.text
    sent = upstream.requests[-1]["json"]
    assert sent["enable_thinking"] is True and sent["thinking_budget"] == 2048


@pytest.mark.parametrize(
    ("model", "limit"),
    [("text-embedding-v4", 10), ("text-embedding-v3", 10), ("text-embedding-v2", 25)],
)
async def test_qwen_embeddings_batch_limit(upstream: MockUpstream, model: str, limit: int) -> None:
    qwen = PresetProvider(preset("qwen"))
    assert isinstance(qwen, ModelBatchLimit)
    assert qwen.embeddings_batch_limit_for(model) == limit
    assert qwen.embeddings_batch_limit == 10  # what fits every model
    target = _target(upstream, "qwen", model)
    texts = [f"text {i}" for i in range(limit + 1)]
    over = await _send(qwen.build_embeddings_request(texts, None, target))
    assert over.status_code == 400 and f"larger than {limit}" in over.text  # DashScope refuses
    fits = await _send(qwen.build_embeddings_request(texts[:limit], None, target))
    assert fits.status_code == 200, fits.text
    assert len(qwen.parse_embeddings_response(fits.content).vectors) == limit


def test_other_presets_keep_one_limit() -> None:
    mistral = PresetProvider(preset("mistral"))
    assert mistral.embeddings_batch_limit_for("mistral-embed") == 512


# --- xAI ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "takes_effort"),
    [
        ("grok-3-mini", True),
        ("grok-3-mini-fast", True),
        ("grok-4-0709", False),
        ("grok-4-1-fast-reasoning", False),
        ("grok-code-fast-1", False),
    ],
)
async def test_xai_reasoning_effort_only_where_taken(
    upstream: MockUpstream, model: str, takes_effort: bool
) -> None:
    xai = PresetProvider(preset("xai"))
    target = _target(upstream, "xai", model)
    request = _ir("think", reasoning=load({"_type": "Reasoning", "effort": "high"}))
    plain = await _send(OpenAIProvider().build_chat_request(request, target))
    assert (plain.status_code == 200) is takes_effort, plain.text  # what xAI answers
    upstream.clear_requests()
    reply = await _send(xai.build_chat_request(request, target))
    assert reply.status_code == 200, reply.text
    sent = upstream.requests[-1]["json"]
    assert ("reasoning_effort" in sent) is takes_effort
