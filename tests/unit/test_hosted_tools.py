"""Which hosted tools each upstream gets and which are dropped (providers/hosted_tools.py)."""

from switchgate.dialects.anthropic_messages import anthropic_to_core_request
from switchgate.dialects.gemini_generate.decode import gemini_to_core_request
from switchgate.dialects.openai_responses.decode import responses_to_core_request
from switchgate.providers.hosted_tools import DROPPED_HEADER, dropped, dropped_header

HEADERS = {"anthropic-version": "2023-06-01"}
FUNCTION = {"type": "function", "name": "f", "parameters": {"type": "object"}}


def test_codex_web_search_maps_to_anthropic_and_is_dropped_elsewhere() -> None:
    request = responses_to_core_request(
        {"model": "m", "input": "x", "tools": [FUNCTION, {"type": "web_search"}]}
    )
    assert dropped(request, "anthropic") == []  # Anthropic's own web search tool
    assert dropped(request, "openai") == ["web_search"]
    # Gemini refuses Google Search grounding combined with function calling.
    assert dropped(request, "gemini") == ["web_search"]
    assert dropped_header(request, "openai") == [(DROPPED_HEADER, b"web_search")]


def test_other_hosted_tools_are_dropped_not_refused() -> None:
    request = responses_to_core_request(
        {"model": "m", "input": "x", "tools": [{"type": "file_search"}, {"type": "web_search"}]}
    )
    assert not request.extras["responses"].get("native_only")
    assert dropped(request, "gemini") == ["file_search"]
    assert dropped(request, "anthropic") == ["file_search"]


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
    assert dropped(request, "anthropic") == []  # passed through as they are
    assert dropped(request, "openai") == ["web_search", "code_execution"]
    assert dropped(request, "gemini") == ["code_execution"]


def test_gemini_cli_google_search_is_named_on_other_upstreams() -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "x"}]}],
        "tools": [{"googleSearch": {}}],
    }
    request = gemini_to_core_request(body, "m")
    assert dropped(request, "gemini") == []
    assert dropped(request, "openai") == ["googleSearch"]
    assert dropped(request, "anthropic") == []


def test_no_hosted_tools_no_header() -> None:
    request = responses_to_core_request({"model": "m", "input": "x", "tools": [FUNCTION]})
    assert dropped_header(request, "openai") == []


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
    assert dropped(request, "anthropic", mapped=False) == ["web_search"]


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
