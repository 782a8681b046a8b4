"""The messages dialect end to end with the official anthropic SDK, against a model on an
Anthropic channel (passthrough) and on an OpenAI channel (translated); and the openai SDK
against the Anthropic channel."""

import json

import anthropic
import openai
import pytest
from anthropic.types import Message

from tests.conftest import Gateway
from tests.support import clear_mock_requests, http_json, mock_requests, wait_for

UNITS_PER_TOKEN_PER_USD_1M = 10**6  # $1 per 1M tokens = 10**6 units per token
MODELS = ["claude-mock", "gpt-mock"]
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Weather for a city",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


def client(gw: Gateway, token: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=gw.url, api_key=token, max_retries=0, timeout=30)


@pytest.mark.parametrize("model", MODELS)
def test_create_parses_into_sdk_types(gateway: Gateway, model: str) -> None:
    _, token = gateway.new_user()
    message = client(gateway, token).messages.create(
        model=model,
        max_tokens=256,
        system="You are terse.",
        messages=[{"role": "user", "content": "hello from anthropic"}],
    )
    Message.model_validate(message.model_dump())
    assert message.type == "message" and message.role == "assistant"
    assert message.content[0].type == "text"
    assert "hello from anthropic" in message.content[0].text
    assert message.stop_reason == "end_turn"
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0


@pytest.mark.parametrize("model", MODELS)
def test_stream_text(gateway: Gateway, model: str) -> None:
    _, token = gateway.new_user()
    with client(gateway, token).messages.stream(
        model=model, max_tokens=256, messages=[{"role": "user", "content": "stream please"}]
    ) as stream:
        events = [event.type for event in stream]
        final = stream.get_final_message()
    assert events[0] == "message_start" and "content_block_delta" in events
    assert events[-1] == "message_stop"
    assert "stream please" in final.content[0].text  # type: ignore[union-attr]
    assert final.usage.output_tokens > 0


@pytest.mark.parametrize("model", MODELS)
def test_stream_tool_use_with_input_json_delta(gateway: Gateway, model: str) -> None:
    _, token = gateway.new_user()
    with client(gateway, token).messages.stream(
        model=model,
        max_tokens=256,
        tools=[WEATHER_TOOL],  # type: ignore[list-item]
        tool_choice={"type": "any"},
        messages=[{"role": "user", "content": "weather in Oslo"}],
    ) as stream:
        deltas = [
            e
            for e in stream
            if e.type == "content_block_delta" and e.delta.type == "input_json_delta"
        ]
        final = stream.get_final_message()
    assert deltas
    tool_use = next(b for b in final.content if b.type == "tool_use")
    assert tool_use.name == "get_weather" and tool_use.input == {"city": "Oslo"}
    assert final.stop_reason == "tool_use"
    follow_up = client(gateway, token).messages.create(
        model=model,
        max_tokens=256,
        tools=[WEATHER_TOOL],  # type: ignore[list-item]
        messages=[
            {"role": "user", "content": "weather in Oslo"},
            {"role": "assistant", "content": [b.model_dump() for b in final.content]},  # type: ignore[misc]
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": tool_use.id, "content": "sunny"}
                ],
            },
        ],
    )
    assert "sunny" in follow_up.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("model", MODELS)
def test_stream_thinking(gateway: Gateway, model: str) -> None:
    _, token = gateway.new_user()
    with client(gateway, token).messages.stream(
        model=model,
        max_tokens=4096,
        thinking={"type": "enabled", "budget_tokens": 1024},
        messages=[{"role": "user", "content": "think first"}],
    ) as stream:
        kinds = [e.delta.type for e in stream if e.type == "content_block_delta"]
        final = stream.get_final_message()
    assert "thinking_delta" in kinds
    assert final.content[0].type == "thinking" and final.content[0].thinking
    if model == "claude-mock":
        assert "signature_delta" in kinds and final.content[0].signature


@pytest.mark.parametrize("model", MODELS)
def test_count_tokens(gateway: Gateway, model: str) -> None:
    _, token = gateway.new_user()
    counted = client(gateway, token).messages.count_tokens(
        model=model, messages=[{"role": "user", "content": "how many tokens is this"}]
    )
    if model == "claude-mock":  # asked of the Anthropic upstream: the fake one counts words
        assert counted.input_tokens == 5
    else:  # counted by the gateway's tokenizer
        assert counted.input_tokens > 5


def test_prompt_cache_usage_is_priced_with_cache_prices(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    before = gateway.balance(email)
    message = client(gateway, token).messages.create(
        model="claude-mock",
        max_tokens=128,
        system=[
            {
                "type": "text",
                "text": "a long cached system prompt " * 5,
                "cache_control": {"type": "ephemeral"},
            }
        ],
        messages=[{"role": "user", "content": "use the cache"}],
    )
    usage = message.usage
    assert usage.cache_read_input_tokens, "the fake upstream reports cache reads for cache_control"
    unit = UNITS_PER_TOKEN_PER_USD_1M
    cost = (
        usage.input_tokens * 3 * unit
        + (usage.cache_read_input_tokens or 0) * unit * 3 // 10
        + (usage.cache_creation_input_tokens or 0) * unit * 375 // 100
        + usage.output_tokens * 15 * unit
    )
    assert wait_for(lambda: gateway.balance(email) == before - cost)


def test_same_dialect_is_passed_through_byte_faithful(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    clear_mock_requests(gateway.mock_url)
    body = {
        "model": "claude-mock",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "pass me through"}],
        "metadata": {"user_id": "u-1"},
        "some_future_field": {"kept": True},
    }
    status, reply = http_json(
        "POST",
        f"{gateway.url}/v1/messages",
        body,
        {
            "x-api-key": token,
            "anthropic-version": "2023-06-01",
            "anthropic-beta": "tools-2024-04-04",
        },
    )
    assert status == 200, reply
    sent = [r for r in mock_requests(gateway.mock_url) if r["path"] == "/v1/messages"][-1]
    assert sent["json"] == body
    headers = {k.lower(): v for k, v in sent["headers"].items()}
    assert headers["anthropic-beta"] == "tools-2024-04-04"


@pytest.mark.parametrize(
    ("change", "headers"),
    [
        ({"max_tokens": 0}, None),
        ({"temperature": 1.5}, None),
        ({}, {"anthropic-version": None}),
        ({"messages": None}, None),
    ],
)
def test_validation_errors_use_the_messages_error_shape(
    gateway: Gateway, change: dict[str, object], headers: dict[str, str | None] | None
) -> None:
    email, token = gateway.new_user()
    body: dict[str, object] = {
        "model": "claude-mock",
        "max_tokens": 16,
        "messages": [{"role": "user", "content": "x"}],
    }
    for key, value in change.items():
        if value is None:
            body.pop(key)
        else:
            body[key] = value
    sent_headers = {"x-api-key": token, "anthropic-version": "2023-06-01"}
    for key, value in (headers or {}).items():
        if value is None:
            sent_headers.pop(key)
    status, reply = http_json("POST", f"{gateway.url}/v1/messages", body, sent_headers)
    assert status == 400
    assert reply["type"] == "error" and reply["error"]["type"] == "invalid_request_error"
    assert gateway.balance(email) == 10 * 10**12


def test_whitespace_around_the_key_is_401(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    status, reply = http_json(
        "POST",
        f"{gateway.url}/v1/messages",
        {"model": "claude-mock", "max_tokens": 16, "messages": [{"role": "user", "content": "x"}]},
        {"x-api-key": f"{token} ", "anthropic-version": "2023-06-01"},
    )
    assert status == 401 and reply["error"]["type"] == "authentication_error"
    with pytest.raises(anthropic.NotFoundError):
        client(gateway, token).messages.create(
            model="nope", max_tokens=8, messages=[{"role": "user", "content": "x"}]
        )


def test_openai_sdk_on_an_anthropic_channel(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    sdk = openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=token, max_retries=0)
    reply = sdk.chat.completions.create(
        model="claude-mock",
        messages=[
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi claude"},
        ],
    )
    assert "hi claude" in (reply.choices[0].message.content or "")
    assert reply.usage is not None and reply.usage.prompt_tokens > 0
    tools = [
        {
            "type": "function",
            "function": {"name": "get_weather", "parameters": WEATHER_TOOL["input_schema"]},
        }
    ]
    with sdk.chat.completions.stream(
        model="claude-mock",
        messages=[{"role": "user", "content": "weather?"}],
        tools=tools,
        tool_choice="required",  # type: ignore[arg-type]
    ) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    call = final.choices[0].message.tool_calls[0]  # type: ignore[index]
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {
        "city": "Oslo"
    }
    assert final.choices[0].finish_reason == "tool_calls"
    assert wait_for(lambda: gateway.balance(email) < 10 * 10**12)


def test_upstream_errors_are_translated_into_the_messages_shape(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    sdk = client(gateway, token)
    with pytest.raises(anthropic.RateLimitError) as limited:
        sdk.messages.create(
            model="gpt-mock",
            max_tokens=16,
            messages=[{"role": "user", "content": "[[mock:error=429]]"}],
        )
    assert limited.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
    with pytest.raises(anthropic.InternalServerError) as failed:
        sdk.messages.create(
            model="gpt-mock",
            max_tokens=16,
            messages=[{"role": "user", "content": "[[mock:error=500]]"}],
        )
    assert failed.value.body["error"]["type"] == "api_error"  # type: ignore[index]


def test_a_stream_that_breaks_midway_ends_with_an_error_event(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    with (
        pytest.raises(anthropic.APIStatusError),
        client(gateway, token).messages.stream(
            model="gpt-mock",
            max_tokens=64,
            messages=[{"role": "user", "content": "go [[mock:midstream_error]]"}],
        ) as stream,
    ):
        for _ in stream:
            pass
