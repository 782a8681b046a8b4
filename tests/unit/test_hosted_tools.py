"""Which hosted tools each upstream gets and which are dropped (providers/hosted_tools.py)."""

import pytest

from switchgate import jsonutil
from switchgate.dialects.anthropic_messages import anthropic_to_core_request
from switchgate.dialects.gemini_generate.decode import gemini_to_core_request
from switchgate.dialects.openai_responses.decode import responses_to_core_request
from switchgate.providers.base import Target
from switchgate.providers.capabilities import HostedToolMapper, hosted_tool_map
from switchgate.providers.hosted_tools import (
    ANTHROPIC_TOOLS,
    DROPPED_HEADER,
    GEMINI_TOOLS,
    HostedToolMap,
    dropped,
    dropped_header,
    upstream_tools,
)
from switchgate.providers.registry import provider_kinds

HEADERS = {"anthropic-version": "2023-06-01"}
FUNCTION = {"type": "function", "name": "f", "parameters": {"type": "object"}}
KINDS = provider_kinds()


def to(kind: str, model: str = "m", **options: object) -> HostedToolMap | None:
    """What the registry's adapter of `kind` maps hosted tools to for `model`."""
    return hosted_tool_map(KINDS[kind].adapter, Target("http://up", "k", model, options=options))


def test_codex_web_search_maps_to_anthropic_and_is_dropped_elsewhere() -> None:
    request = responses_to_core_request(
        {"model": "m", "input": "x", "tools": [FUNCTION, {"type": "web_search"}]}
    )
    assert dropped(request, to("anthropic")) == []  # Anthropic's own web search tool
    assert dropped(request, to("openai")) == ["web_search"]
    # Gemini refuses Google Search grounding combined with function calling.
    assert dropped(request, to("gemini")) == ["web_search"]
    assert dropped_header(request, to("openai")) == [(DROPPED_HEADER, b"web_search")]


def test_other_hosted_tools_are_dropped_not_refused() -> None:
    request = responses_to_core_request(
        {"model": "m", "input": "x", "tools": [{"type": "file_search"}, {"type": "web_search"}]}
    )
    assert not request.extras["responses"].get("native_only")
    assert dropped(request, to("gemini")) == ["file_search"]
    assert dropped(request, to("anthropic")) == ["file_search"]


def test_claude_server_tools_are_named_when_dropped() -> None:
    body = {
        "model": "m",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "x"}],
        "tools": [
            {"type": "web_search_20250305", "name": "web_search"},
            {"type": "code_execution_20250825", "name": "code_execution"},
        ],
    }
    request = anthropic_to_core_request(body, HEADERS)
    assert dropped(request, to("anthropic")) == []  # passed through as they are
    assert dropped(request, to("openai")) == ["web_search", "code_execution"]
    assert dropped(request, to("gemini")) == ["code_execution"]


def test_gemini_cli_google_search_is_named_on_other_upstreams() -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "x"}]}],
        "tools": [{"googleSearch": {}}],
    }
    request = gemini_to_core_request(body, "m")
    assert dropped(request, to("gemini")) == []
    assert dropped(request, to("openai")) == ["googleSearch"]
    assert dropped(request, to("anthropic")) == []


def test_no_hosted_tools_no_header() -> None:
    request = responses_to_core_request({"model": "m", "input": "x", "tools": [FUNCTION]})
    assert dropped_header(request, to("openai")) == []


def test_hosted_tools_never_make_a_translated_channel_unusable() -> None:
    """Paid options (relay/paid_options.py): hosted tools need the channel's permission only
    where they pass through as written; translated, they are mapped (allowed) or dropped."""
    from switchgate.relay.paid_options import HOSTED_TOOLS, allows_hosted_tools, usable
    from switchgate.routing.channels import Channel

    def channel(kind: str, **extra: object) -> Channel:
        return Channel(1, f"c-{kind}", kind, "http://up", "k", ("m",), extra=extra)

    anthropic, gemini = channel("anthropic"), channel("gemini")
    assert usable([anthropic, gemini], [HOSTED_TOOLS], "m", "responses") == [anthropic, gemini]
    assert usable([anthropic, gemini], [HOSTED_TOOLS], "m", "gemini") == [anthropic]
    assert not allows_hosted_tools(anthropic)
    assert allows_hosted_tools(channel("anthropic", paid_options=[HOSTED_TOOLS]))
    request = responses_to_core_request(
        {"model": "m", "input": "x", "tools": [{"type": "web_search"}]}
    )
    assert dropped(request, to("anthropic"), mapped=False) == ["web_search"]


def test_a_native_responses_body_loses_only_its_hosted_tools() -> None:
    from switchgate.providers.hosted_tools import without_hosted_tools

    body = {"model": "m", "tools": [FUNCTION, {"type": "web_search"}, {"type": "namespace"}]}
    kept, header = without_hosted_tools(body)
    assert kept["tools"] == [FUNCTION, {"type": "namespace"}]
    assert header == [(DROPPED_HEADER, b"web_search")]
    assert without_hosted_tools({"model": "m", "tools": [FUNCTION]}) == (
        {"model": "m", "tools": [FUNCTION]},
        [],
    )


def test_each_adapter_says_which_hosted_tools_it_maps_for_the_model() -> None:
    """No kind string decides it: Claude and Gemini get their search tool wherever they
    are served (vertex too); Bedrock's Converse and OpenAI-shaped upstreams get none."""
    assert to("anthropic") is ANTHROPIC_TOOLS
    assert to("gemini") is GEMINI_TOOLS
    assert to("vertex", "claude-sonnet-4-5@20250929") is ANTHROPIC_TOOLS
    assert to("vertex", "gemini-2.5-pro") is GEMINI_TOOLS
    assert to("vertex", "my-tuned-claude", publisher="anthropic") is ANTHROPIC_TOOLS
    assert to("bedrock", "anthropic.claude-sonnet-4-5-20250929-v1:0") is None
    mappers = {name for name, kind in KINDS.items() if isinstance(kind.adapter, HostedToolMapper)}
    assert mappers == {"anthropic", "gemini", "vertex"}


def test_codex_web_search_becomes_the_search_tool_of_claude_and_gemini_on_vertex() -> None:
    request = responses_to_core_request(
        {"model": "m", "input": "x", "tools": [{"type": "web_search"}]}
    )
    claude = to("vertex", "claude-opus-4-1@20250805")
    gemini = to("vertex", "gemini-2.5-flash")
    assert upstream_tools(request, claude) == [dict(ANTHROPIC_TOOLS.web_search)]
    assert upstream_tools(request, gemini) == [{"googleSearch": {}}]
    assert dropped(request, claude) == dropped(request, gemini) == []
    assert dropped(request, to("bedrock")) == ["web_search"]


def test_claude_code_server_tools_stay_claudes_own_on_vertex() -> None:
    body = {
        "model": "m",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "x"}],
        "tools": [{"type": "web_search_20250305", "name": "web_search"}],
    }
    request = anthropic_to_core_request(body, HEADERS)
    assert dropped(request, to("vertex", "claude-sonnet-4@20250514")) == []
    assert upstream_tools(request, to("vertex", "claude-sonnet-4@20250514")) == []
    assert dropped(request, to("vertex", "gemini-2.5-pro")) == []  # web search -> Google's


def test_a_channel_without_paid_hosted_tools_sends_none_not_even_the_clients_own() -> None:
    """Claude Code's server tools ride to Claude on Vertex as written (translated, not
    passed through); where the channel may not run paid hosted tools they are taken out
    and named, like every other dialect's."""
    from switchgate.providers.hosted_tools import without_hosted
    from switchgate.providers.vertex import anthropic_vertex_body

    body = {
        "model": "m",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "x"}],
        "tools": [{"name": "f", "input_schema": {"type": "object"}}, *_SERVER_TOOLS],
    }
    request = anthropic_to_core_request(body, HEADERS)
    claude = to("vertex", "claude-sonnet-4@20250514")
    allowed = anthropic_vertex_body(request, "claude-sonnet-4@20250514")
    assert [t.get("type") for t in allowed["tools"]] == [None, *(t["type"] for t in _SERVER_TOOLS)]
    assert dropped(request, claude, mapped=False) == ["web_search", "code_execution"]
    bare = without_hosted(request)
    assert bare.hosted_tools == () and bare.tools == request.tools
    sent = anthropic_vertex_body(bare, "claude-sonnet-4@20250514")
    assert [t["name"] for t in sent["tools"]] == ["f"]
    gemini_cli = gemini_to_core_request(
        {"contents": [{"role": "user", "parts": [{"text": "x"}]}], "tools": [{"googleSearch": {}}]},
        "m",
    )
    assert "tools" not in without_hosted(gemini_cli).extras.get("gemini", {})


_SERVER_TOOLS = [
    {"type": "web_search_20250305", "name": "web_search"},
    {"type": "code_execution_20250825", "name": "code_execution"},
]


@pytest.mark.parametrize(
    ("name", "model"),
    [
        (name, model)
        for name, kind in KINDS.items()
        if isinstance(kind.adapter, HostedToolMapper)
        for model in ("claude-sonnet-4-5@20250929", "gemini-2.5-flash")
    ],
)
def test_what_an_adapter_says_it_maps_is_what_its_request_carries(name: str, model: str) -> None:
    """For every HostedToolMapper of the registry: the search tool of its map is in the
    body it builds for a client's web search."""
    chat = KINDS[name].chat()
    assert chat is not None
    target = Target(
        "http://up",
        "k",
        model,
        extra_headers={"authorization": "Bearer t"},
        options={"project": "p", "location": "us-east5"},
    )
    request = responses_to_core_request(
        {"model": model, "input": "x", "tools": [{"type": "web_search"}]}
    )
    sent = jsonutil.loads(chat.build_chat_request(request, target).body)
    tools = hosted_tool_map(chat, target)
    assert tools is not None
    assert dict(tools.web_search) in sent["tools"]
