"""Issue 20 #10: options the upstream bills on top of the token price are found, and a
channel carries them only when its `paid_options` allow them."""

import pytest

from switchgate.errors import GatewayError
from switchgate.relay.paid_options import (
    HOSTED_TOOLS,
    LONG_CONTEXT,
    SERVICE_TIER,
    STORED_CONTENT,
    check_paid_options,
    paid_options,
    usable,
)
from switchgate.routing.channels import Channel

NONE: dict[str, str] = {}


@pytest.mark.parametrize(
    ("dialect", "body", "headers", "expected"),
    [
        ("openai", {"service_tier": "priority"}, NONE, [SERVICE_TIER]),
        ("openai", {"service_tier": "auto"}, NONE, []),
        ("openai", {"web_search_options": {}}, NONE, [HOSTED_TOOLS]),
        ("openai", {"tools": [{"type": "function", "function": {"name": "f"}}]}, NONE, []),
        ("openai", {"prompt": "legacy completions text"}, NONE, []),
        ("responses", {"tools": [{"type": "web_search"}]}, NONE, [HOSTED_TOOLS]),
        ("responses", {"conversation": "conv_1"}, NONE, [STORED_CONTENT]),
        ("responses", {"prompt": {"id": "pmpt_1"}}, NONE, [STORED_CONTENT]),
        (
            "anthropic",
            {"tools": [{"type": "web_search_20250305", "name": "w"}]},
            NONE,
            [HOSTED_TOOLS],
        ),
        ("anthropic", {"tools": [{"name": "f", "input_schema": {}}]}, NONE, []),
        ("anthropic", {}, {"anthropic-beta": "context-1m-2025-08-07"}, [LONG_CONTEXT]),
        ("anthropic", {}, {"anthropic-beta": "prompt-caching-2024-07-31"}, []),
        ("gemini", {"cachedContent": "cachedContents/x"}, NONE, [STORED_CONTENT]),
        ("gemini", {"tools": [{"googleSearch": {}}]}, NONE, [HOSTED_TOOLS]),
        ("gemini", {"tools": [{"functionDeclarations": []}]}, NONE, []),
    ],
)
def test_paid_options_are_found(
    dialect: str, body: dict[str, object], headers: dict[str, str], expected: list[str]
) -> None:
    assert paid_options(dialect, body, headers) == expected


def _channel(kind: str, **extra: object) -> Channel:
    return Channel(1, f"c-{kind}", kind, "http://up", "k", ("m",), extra=extra)


def test_channels_carry_only_what_they_allow() -> None:
    closed, star = _channel("anthropic"), _channel("anthropic", paid_options=["*"])
    tools_only = _channel("gemini", paid_options=[HOSTED_TOOLS])
    assert usable([closed, star], [HOSTED_TOOLS], "m") == [star]
    assert usable([closed, tools_only], [HOSTED_TOOLS], "m") == [tools_only]
    with pytest.raises(GatewayError) as refused:
        usable([closed, tools_only], [SERVICE_TIER], "m")
    assert (
        refused.value.code == "paid_option_not_allowed" and "service_tier" in refused.value.message
    )
    assert usable([closed], [], "m") == [closed]


def test_hosted_tools_are_free_where_they_are_dropped() -> None:
    """A plain OpenAI Chat channel drops hosted tools (providers/hosted_tools.py)."""
    chat, native = _channel("openai"), _channel("openai", responses=True)
    assert usable([chat, native], [HOSTED_TOOLS], "m") == [chat]
    with pytest.raises(GatewayError):
        usable([native], [HOSTED_TOOLS], "m")


def test_the_setting_is_checked() -> None:
    assert check_paid_options(["hosted_tools", "*"]) == ["hosted_tools", "*"]
    with pytest.raises(ValueError, match="unknown paid option"):
        check_paid_options(["free_lunch"])
    with pytest.raises(ValueError):
        check_paid_options("hosted_tools")
