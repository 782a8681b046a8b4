"""OpenAI-compatible presets (providers/openai_compatible.py, openai_presets.py).

The goldens (tests/golden/<preset>_provider/) are run by the conformance suite
(tests/unit/test_provider_conformance.py). Here: the preset table, and every preset
against the fake upstream's preset mode (mock_upstream/presets.py),
which refuses what the vendor refuses: the adapter's requests must pass, and the plain
OpenAI body (what a preset without its quirks would send) must not.
"""

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from switchgate import jsonutil
from switchgate.core.events import StreamEvent, ThinkingDelta, ToolCallStart, UsageUpdate
from switchgate.core.response import ChatResponse
from switchgate.errors import GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.capabilities import ChatProvider, EmbeddingsProvider, NativeDialect
from switchgate.providers.openai import OpenAIProvider
from switchgate.providers.openai_compatible import PresetProvider
from switchgate.providers.openai_presets import PRESETS, preset
from switchgate.providers.openai_quirks import short_id
from switchgate.providers.registry import provider_kinds
from switchgate.testing import MockUpstream, start_mock_upstream
from tests.unit._golden_ir import cases, dump, load

AREA = "openai_compatible_provider"
DEFAULT_REQUEST: Any = load(
    {
        "_type": "ChatRequest",
        "model": "alias",
        "messages": [
            {"_type": "Message", "role": "user", "parts": [{"_type": "TextPart", "text": "q"}]}
        ],
    }
)


def _ids(prefix: str) -> list[Any]:
    return [pytest.param(case, id=name) for name, case in cases(AREA, prefix)]


def _provider(case: dict[str, Any]) -> PresetProvider:
    return PresetProvider(preset(case["input"]["preset"]))


def _error(err: GatewayError) -> dict[str, Any]:
    return {**dump(err), "status": err.status}


def _upstream(up: UpstreamRequest) -> dict[str, Any]:
    return {
        "method": up.method,
        "url": up.url,
        "headers": up.headers,
        "body": jsonutil.loads(up.body),
    }


# --- the preset table -------------------------------------------------------------------


def test_presets_are_distinct_and_sourced() -> None:
    kinds = [p.kind for p in PRESETS]
    assert len(kinds) == len(set(kinds)) == 13
    for item in PRESETS:
        assert item.sources, f"{item.kind}: every preset says where its facts come from"
        local = item.default_base_url.startswith("http://localhost")
        assert local == (not item.needs_key) == (item.auth == "optional"), item.kind
        assert local or item.default_base_url.startswith("https://"), item.kind


def test_registered_with_their_endpoints_and_no_passthrough() -> None:
    """One registry entry per preset; none is a client dialect, so every client goes
    through the quirk pass (no NativeDialect hooks)."""
    kinds = provider_kinds()
    for item in PRESETS:
        kind = kinds[item.kind]
        provider = kind.adapter
        assert isinstance(provider, PresetProvider) and provider.preset == item
        chat: ChatProvider = provider
        assert kind.chat() is chat and kind.native() is None
        assert not isinstance(provider, NativeDialect) and not hasattr(provider, "dialect")
        assert kind.endpoints == item.endpoints and kind.needs_key == item.needs_key
        embeddings: EmbeddingsProvider = provider
        assert (kind.embeddings() is embeddings) == ("embeddings" in item.endpoints)
        assert kind.openai_shaped("embeddings") is None
    assert kinds["mistral"].endpoints == {"chat", "embeddings"}
    assert kinds["ollama"].default_base_url == "http://localhost:11434/v1"


def test_short_ids_are_stable_nine_alphanumerics() -> None:
    ids = {short_id(f"toolu_{i:04d}") for i in range(2000)}
    assert len(ids) == 2000
    assert all(re.fullmatch(r"[A-Za-z0-9]{9}", s) for s in ids)
    assert short_id("call_abc") == short_id("call_abc") != short_id("call_abd")


def _decode(provider: PresetProvider, chunks: list[bytes]) -> list[StreamEvent]:
    decoder = provider.chat_stream_decoder(DEFAULT_REQUEST)
    return [e for chunk in chunks for e in decoder.feed(chunk)] + decoder.finish()


# --- against the fake upstream's preset modes ---------------------------------------------


@pytest.fixture(scope="module")
async def upstream() -> AsyncIterator[MockUpstream]:
    up = await start_mock_upstream()
    yield up
    await up.close()


def _target(up: MockUpstream, kind: str, model: str, **options: Any) -> Target:
    key = "" if not preset(kind).needs_key else "mock-key"
    return Target(f"{up.base_url}/presets/{kind}/v1", key, model, options=options)


async def _send(up: UpstreamRequest) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.request(up.method, up.url, headers=up.headers, content=up.body)


def _ir(*messages: dict[str, Any], **fields: Any) -> Any:
    return load({"_type": "ChatRequest", "model": "alias", "messages": list(messages), **fields})


def _user(text: str) -> dict[str, Any]:
    return {"_type": "Message", "role": "user", "parts": [{"_type": "TextPart", "text": text}]}


TOOL_TURN = (
    _user("weather in Oslo?"),
    {
        "_type": "Message",
        "role": "assistant",
        "parts": [
            {"_type": "ThinkingPart", "text": "Use the tool."},
            {
                "_type": "ToolCallPart",
                "id": "toolu_01XyZ",
                "name": "get_weather",
                "arguments": "{}",
            },
        ],
    },
    {
        "_type": "Message",
        "role": "user",
        "parts": [
            {
                "_type": "ToolResultPart",
                "tool_call_id": "toolu_01XyZ",
                "content": [{"_type": "TextPart", "text": "4 C"}],
            }
        ],
    },
)
TOOLS = [{"_type": "ToolSpec", "name": "get_weather", "parameters": {"type": "object"}}]


@pytest.mark.parametrize("item", PRESETS, ids=lambda p: p.kind)
async def test_every_preset_round_trips_through_its_mode(upstream: MockUpstream, item: Any) -> None:
    provider = PresetProvider(item)
    request = _ir(_user("hello"), sampling=load({"_type": "Sampling", "temperature": 0.5}))
    reply = await _send(provider.build_chat_request(request, _target(upstream, item.kind, "m-1")))
    assert reply.status_code == 200, reply.text
    parsed: ChatResponse = provider.parse_chat_response(reply.content, request)
    assert dump(parsed.parts) == [{"_type": "TextPart", "text": "Hello from mock! You said: hello"}]
    assert parsed.usage.input_tokens > 0 and parsed.usage.output_tokens > 0
    streamed = _ir(_user("hello"), stream=True)
    body = await _send(provider.build_chat_request(streamed, _target(upstream, item.kind, "m-1")))
    events = _decode(provider, [body.content])
    usage = [e for e in events if isinstance(e, UsageUpdate)]
    assert usage and usage[-1].usage.output_tokens > 0, f"{item.kind}: usage is billed"


async def test_mistral_tool_ids_pass_only_when_rewritten(upstream: MockUpstream) -> None:
    request = _ir(*TOOL_TURN, tools=TOOLS, stream=True)
    target = _target(upstream, "mistral", "mistral-large-latest", safe_prompt=True)
    plain = await _send(OpenAIProvider().build_chat_request(request, target))
    assert plain.status_code == 422  # what the real Mistral answers unrewritten ids
    mistral = PresetProvider(preset("mistral"))
    upstream.clear_requests()
    reply = await _send(mistral.build_chat_request(request, target))
    assert reply.status_code == 200, reply.text
    sent = upstream.requests[-1]["json"]
    assert sent["messages"][1]["tool_calls"][0]["id"] == sent["messages"][2]["tool_call_id"]
    assert sent["safe_prompt"] is True and "stream_options" not in sent
    events = _decode(mistral, [reply.content])
    assert any(isinstance(e, UsageUpdate) for e in events), "usage in the last chunk"


async def test_mistral_new_tool_calls_and_thinking_chunks(upstream: MockUpstream) -> None:
    mistral = PresetProvider(preset("mistral"))
    request = _ir(_user("weather? [[mock:tool]]"), tools=TOOLS)
    target = _target(upstream, "mistral", "magistral-medium-latest")
    reply = await _send(mistral.build_chat_request(request, target))
    parsed = mistral.parse_chat_response(reply.content, request)
    kinds = [type(p).__name__ for p in parsed.parts]
    assert kinds == ["ThinkingPart", "ToolCallPart"]
    assert re.fullmatch(r"[A-Za-z0-9]{9}", parsed.parts[1].id)  # type: ignore[union-attr]


async def test_deepseek_thinking_rules(upstream: MockUpstream) -> None:
    deepseek = PresetProvider(preset("deepseek"))
    target = _target(upstream, "deepseek", "deepseek-reasoner")
    request = _ir(_user("why?"), stream=True, extras={"openai": {"logprobs": True}})
    plain = await _send(OpenAIProvider().build_chat_request(request, target))
    assert plain.status_code == 400  # logprobs in thinking mode
    reply = await _send(deepseek.build_chat_request(request, target))
    events = _decode(deepseek, [reply.content])
    assert any(isinstance(e, ThinkingDelta) for e in events)
    tool_turn = _ir(*TOOL_TURN, tools=TOOLS)
    reply = await _send(deepseek.build_chat_request(tool_turn, target))
    assert reply.status_code == 200, reply.text  # reasoning_content was sent back


async def test_groq_usage_under_x_groq_and_refusals(upstream: MockUpstream) -> None:
    groq = PresetProvider(preset("groq"))
    target = _target(upstream, "groq", "llama-3.3-70b-versatile")
    request = _ir(_user("hi"), stream=True, extras={"openai": {"logprobs": True}})
    assert (await _send(OpenAIProvider().build_chat_request(request, target))).status_code == 400
    reply = await _send(groq.build_chat_request(request, target))
    assert b"x_groq" in reply.content
    usage = [e for e in _decode(groq, [reply.content]) if isinstance(e, UsageUpdate)]
    assert usage and usage[-1].usage.input_tokens > 0


async def test_groq_history_without_reasoning_content(upstream: MockUpstream) -> None:
    """Groq refuses `reasoning_content` on a past assistant turn (a 400): the preset strips
    it; the plain O body (which sends it back) is what Groq refuses."""
    groq = PresetProvider(preset("groq"))
    target = _target(upstream, "groq", "openai/gpt-oss-120b")
    request = _ir(*TOOL_TURN, tools=TOOLS)
    plain = await _send(OpenAIProvider().build_chat_request(request, target))
    assert plain.status_code == 400 and "reasoning_content" in plain.text
    upstream.clear_requests()
    reply = await _send(groq.build_chat_request(request, target))
    assert reply.status_code == 200, reply.text
    assert "reasoning_content" not in upstream.requests[-1]["json"]["messages"][1]


async def test_moonshot_temperature_is_clamped(upstream: MockUpstream) -> None:
    moonshot = PresetProvider(preset("moonshot"))
    target = _target(upstream, "moonshot", "kimi-k2")
    request = _ir(_user("hi"), sampling=load({"_type": "Sampling", "temperature": 1.8}))
    assert (await _send(OpenAIProvider().build_chat_request(request, target))).status_code == 400
    assert (await _send(moonshot.build_chat_request(request, target))).status_code == 200


@pytest.mark.parametrize("kind", ["openrouter", "vllm", "groq", "qwen", "siliconflow"])
async def test_reasoning_fields_become_thinking(upstream: MockUpstream, kind: str) -> None:
    provider = PresetProvider(preset(kind))
    reasoning = load({"_type": "Reasoning", "effort": "high"})
    for stream in (False, True):
        request = _ir(_user("think"), reasoning=reasoning, stream=stream)
        reply = await _send(provider.build_chat_request(request, _target(upstream, kind, "r1")))
        assert reply.status_code == 200, reply.text
        if stream:
            assert any(isinstance(e, ThinkingDelta) for e in _decode(provider, [reply.content]))
        else:
            parts = provider.parse_chat_response(reply.content, request).parts
            # Qwen (DashScope) thinks only in streams: an unstreamed call has it off
            first = "TextPart" if kind == "qwen" else "ThinkingPart"
            assert type(parts[0]).__name__ == first, kind


async def test_keyless_presets_send_no_authorization(upstream: MockUpstream) -> None:
    for kind in ("ollama", "vllm", "lmstudio"):
        upstream.clear_requests()
        provider = PresetProvider(preset(kind))
        await _send(provider.build_chat_request(_ir(_user("hi")), _target(upstream, kind, "m")))
        assert "authorization" not in upstream.requests[-1]["headers"]
    deepseek = PresetProvider(preset("deepseek"))
    wrong = Target(f"{upstream.base_url}/presets/deepseek/v1", "wrong-key", "deepseek-chat")
    reply = await _send(deepseek.build_chat_request(_ir(_user("hi")), wrong))
    assert reply.status_code == 401  # a keyed vendor's mode checks the key


async def test_embeddings_through_the_preset(upstream: MockUpstream) -> None:
    for kind in ("mistral", "ollama", "qwen"):
        provider = PresetProvider(preset(kind))
        built = provider.build_embeddings_request(["a b", "c"], 8, _target(upstream, kind, "e-1"))
        reply = await _send(built)
        assert reply.status_code == 200, (kind, reply.text)
        result = provider.parse_embeddings_response(reply.content)
        assert [len(v) for v in result.vectors] == [8, 8] and result.input_tokens == 3
    plain = jsonutil.loads(built.body)
    assert plain["dimensions"] == 8  # mistral sent output_dimension instead (a 422 otherwise)


def test_tool_call_start_keeps_vendor_ids() -> None:
    """A Mistral id the request never rewrote reaches the client as it is."""
    mistral = PresetProvider(preset("mistral"))
    chunk = {
        "id": "s",
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "Ab3dE6gH9",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ]
                },
            }
        ],
    }
    events = _decode(mistral, [b"data: " + jsonutil.dumps(chunk) + b"\n\n"])
    assert [e.id for e in events if isinstance(e, ToolCallStart)] == ["Ab3dE6gH9"]


def test_catalogue_imports_onto_preset_channels() -> None:
    """`catalogue import --provider deepseek` finds deepseek-kind channels wherever they
    point, and channels of other chat kinds (openai) only at the vendor's own host."""
    from switchgate.catalogue.entries import shipped_catalogue
    from switchgate.catalogue.importer import upstream_on
    from switchgate.providers.registry import provider_kinds

    catalogue = shipped_catalogue()
    model = catalogue.get("deepseek-chat")
    assert model.channel_kind == "deepseek"
    kinds = provider_kinds()

    def serves(kind: str, url: str) -> bool:
        return upstream_on(catalogue, model, kinds[kind], url) is not None

    assert serves("deepseek", "https://proxy.example/deepseek/v1")
    assert serves("openai", "https://api.deepseek.com/v1")
    assert not serves("openai", "https://api.openai.com/v1")
    assert not serves("mistral", "https://api.mistral.ai/v1")
    assert not serves("jina", "https://api.deepseek.com/v1")  # no chat endpoint
    for vendor, kind in {
        "mistral": "mistral",
        "xai": "xai",
        "qwen": "qwen",
        "meta": "together",
    }.items():
        assert catalogue.vendors[vendor].channel_kind == kind
