"""The Responses API end to end: the official openai SDK against the real gateway, passed
through natively (gpt-resp: an OpenAI channel with `responses = true`) or translated through
the IR to chat (gpt-mock on OpenAI, claude-mock on Anthropic, gemini-mock on Gemini)."""

from decimal import Decimal
from typing import Any

import openai
import pytest
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from tests.conftest import PRICES, Gateway
from tests.support import clear_mock_requests, http_json, mock_requests, wait_for

MODELS = ["gpt-resp", "gpt-mock", "claude-mock", "gemini-mock"]
EVENTS: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather for a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


def client(gw: Gateway, token: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0, timeout=30)


def unit_price(model: str, kind: str) -> int:
    spec = PRICES[model]
    value = spec.get(kind, spec["input"])
    return int(Decimal(value) * 10**6)  # USD per 1M tokens -> pico-USD per token


def cost_of(model: str, response: Response) -> int:
    usage = response.usage
    assert usage is not None
    cached = usage.input_tokens_details.cached_tokens
    written = usage.input_tokens_details.cache_write_tokens
    return (
        (usage.input_tokens - cached - written) * unit_price(model, "input")
        + cached * unit_price(model, "cache_read")
        + written * unit_price(model, "cache_write")
        + usage.output_tokens * unit_price(model, "output")
    )


def last_upstream_body(gw: Gateway) -> dict[str, Any]:
    requests = mock_requests(gw.mock_url)
    assert requests
    body = requests[-1]["json"]
    assert isinstance(body, dict)
    return body


@pytest.mark.parametrize("model", MODELS)
def test_create_text_bills_exactly(gateway_any: Gateway, model: str) -> None:
    email, token = gateway_any.new_user()
    before = gateway_any.balance(email)
    response = client(gateway_any, token).responses.create(
        model=model, input="hello there gateway", instructions="Be brief."
    )
    Response.model_validate(response.model_dump())
    assert response.status == "completed"
    assert response.output_text == "Hello from mock! You said: hello there gateway"
    assert response.instructions == "Be brief."
    assert response.usage is not None and response.usage.output_tokens > 0
    if model == "gpt-resp":
        assert response.id.startswith("resp_mock")  # the upstream's own object, untouched
    else:
        assert response.id.startswith("resp_") and response.model == model
    cost = cost_of(model, response)
    assert cost > 0
    assert wait_for(lambda: gateway_any.balance(email) == before - cost)


@pytest.mark.parametrize("model", MODELS)
def test_stream_events_are_typed_and_complete(gateway: Gateway, model: str) -> None:
    email, token = gateway.new_user()
    before = gateway.balance(email)
    sdk = client(gateway, token)
    with sdk.responses.stream(model=model, input="stream me please [[mock:chunks=4]]") as stream:
        events = list(stream)
        final = stream.get_final_response()
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    for event in events:
        EVENTS.validate_python(event.model_dump(warnings=False))
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert len(deltas) >= 2
    assert "".join(deltas) == final.output_text
    assert final.output_text.startswith("Hello from mock! You said: stream me please")
    cost = cost_of(model, final)
    assert wait_for(lambda: gateway.balance(email) == before - cost)


@pytest.mark.parametrize("model", MODELS)
def test_function_call_round_trip_streamed(gateway: Gateway, model: str) -> None:
    _, token = gateway.new_user()
    sdk = client(gateway, token)
    first_input: list[Any] = [{"role": "user", "content": "weather in Paris?"}]
    with sdk.responses.stream(
        model=model, input=first_input, tools=[WEATHER], tool_choice="required"
    ) as stream:
        events = list(stream)
        first = stream.get_final_response()
    calls = [item for item in first.output if item.type == "function_call"]
    assert len(calls) == 1 and calls[0].name == "get_weather"
    args_deltas = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert "".join(args_deltas) == calls[0].arguments
    assert "city" in calls[0].arguments
    replay = [
        *first_input,
        *(item.model_dump(exclude_none=True, warnings=False) for item in first.output),
    ]
    second = sdk.responses.create(
        model=model,
        input=[
            *replay,
            {"type": "function_call_output", "call_id": calls[0].call_id, "output": "sunny"},
        ],
        tools=[WEATHER],
        store=False,
    )
    assert second.output_text == "Tool result received: sunny"


@pytest.mark.parametrize("model", MODELS)
def test_previous_response_id_continues_the_stored_conversation(
    gateway_any: Gateway, model: str
) -> None:
    _, token = gateway_any.new_user()
    sdk = client(gateway_any, token)
    first = sdk.responses.create(
        model=model, input="what is the weather in Oslo?", tools=[WEATHER], tool_choice="required"
    )
    [call] = [item for item in first.output if item.type == "function_call"]
    clear_mock_requests(gateway_any.mock_url)
    second = sdk.responses.create(
        model=model,
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "rainy"}],
        tools=[WEATHER],
    )
    assert second.output_text == "Tool result received: rainy"
    assert second.previous_response_id in (first.id, None)  # None: the upstream's echo
    body = last_upstream_body(gateway_any)
    assert "previous_response_id" not in body  # resolved by the gateway, never forwarded
    third = sdk.responses.create(
        model=model, previous_response_id=second.id, input="thanks, and tomorrow?"
    )
    assert third.output_text == "Hello from mock! You said: thanks, and tomorrow?"
    assert third.usage is not None and second.usage is not None
    assert third.usage.input_tokens > second.usage.input_tokens


def test_previous_response_id_is_scoped_to_its_user(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    _, other = gateway.new_user()
    first = client(gateway, token).responses.create(model="gpt-mock", input="secret stuff")
    for sdk, previous in ((client(gateway, other), first.id), (client(gateway, token), "resp_x")):
        with pytest.raises(openai.BadRequestError) as info:
            sdk.responses.create(model="gpt-mock", previous_response_id=previous, input="more")
        assert "not found" in str(info.value)
        assert info.value.body["param"] == "previous_response_id"  # type: ignore[index]


@pytest.mark.parametrize("model", ["gpt-mock", "gpt-resp"])
def test_retrieve_and_delete(gateway_any: Gateway, model: str) -> None:
    _, token = gateway_any.new_user()
    _, other = gateway_any.new_user()
    sdk = client(gateway_any, token)
    created = sdk.responses.create(model=model, input="keep this")
    got = sdk.responses.retrieve(created.id)
    assert got.id == created.id and got.output_text == created.output_text
    assert got.usage == created.usage
    with pytest.raises(openai.NotFoundError):
        client(gateway_any, other).responses.retrieve(created.id)
    status, body = http_json(
        "DELETE",
        f"{gateway_any.url}/v1/responses/{created.id}",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert (status, body) == (200, {"id": created.id, "object": "response", "deleted": True})
    with pytest.raises(openai.NotFoundError):
        sdk.responses.retrieve(created.id)
    with pytest.raises(openai.NotFoundError):
        sdk.responses.delete(created.id)


def test_store_false_is_not_kept(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    sdk = client(gateway, token)
    created = sdk.responses.create(model="gpt-mock", input="forget me", store=False)
    assert created.store is False
    with pytest.raises(openai.NotFoundError):
        sdk.responses.retrieve(created.id)


@pytest.mark.parametrize("model", ["gpt-mock", "claude-mock", "gpt-resp"])
def test_max_output_tokens_gives_an_incomplete_response(gateway: Gateway, model: str) -> None:
    _, token = gateway.new_user()
    response = client(gateway, token).responses.create(
        model=model, input="one two three four five six seven", max_output_tokens=3
    )
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"


def test_translated_request_reaches_chat_upstream_in_chat_form(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    clear_mock_requests(gateway.mock_url)
    client(gateway, token).responses.create(
        model="gpt-mock",
        input=[{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        instructions="sys",
        max_output_tokens=50,
        reasoning={"effort": "low"},
        text={"format": {"type": "json_object"}},
    )
    requests = mock_requests(gateway.mock_url)
    assert requests[-1]["path"] == "/v1/chat/completions"
    body = requests[-1]["json"]
    assert body["messages"] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi"},
    ]
    assert body["max_tokens"] == 50 and body["reasoning_effort"] == "low"
    assert body["response_format"] == {"type": "json_object"}


def test_hosted_tools_are_dropped_and_named_on_chat_channels(gateway: Gateway) -> None:
    """Codex sends `web_search` with every turn: an OpenAI Chat upstream has no search tool,
    so it is left out (never refused) and named in x-switchgate-dropped-tools."""
    _, token = gateway.new_user()
    sdk = client(gateway, token)
    raw = sdk.responses.with_raw_response.create(
        model="gpt-mock", input="x", tools=[{"type": "web_search"}]
    )
    assert raw.headers["x-switchgate-dropped-tools"] == "web_search"
    assert raw.parse().output_text.startswith("Hello from mock!")
    with sdk.responses.with_streaming_response.create(
        model="gpt-mock", input="x", tools=[{"type": "web_search"}], stream=True
    ) as streamed:
        assert streamed.headers["x-switchgate-dropped-tools"] == "web_search"
        assert any(event.type == "response.completed" for event in streamed.parse())
    # Translated to Anthropic, web search would be Anthropic's paid server tool: the test
    # channel doesn't allow paid hosted tools (paid_options), so it is dropped, not refused.
    raw = sdk.responses.with_raw_response.create(
        model="claude-mock", input="x", tools=[{"type": "web_search"}]
    )
    assert raw.headers["x-switchgate-dropped-tools"] == "web_search"
    sent = [r for r in mock_requests(gateway.mock_url) if r["path"] == "/v1/messages"][-1]["json"]
    assert "tools" not in sent


def test_errors_use_the_openai_shape(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    with pytest.raises(openai.AuthenticationError):
        client(gateway, "sk-wrong").responses.create(model="gpt-mock", input="x")
    with pytest.raises(openai.NotFoundError):
        client(gateway, token).responses.create(model="no-such-model", input="x")
    with pytest.raises(openai.BadRequestError) as info:
        client(gateway, token).responses.create(model="gpt-mock", input=5)  # type: ignore[arg-type]
    assert info.value.body["param"] == "input"  # type: ignore[index]
    _, poor = gateway.new_user(balance_usd=0)
    with pytest.raises(openai.APIStatusError) as denied:
        client(gateway, poor).responses.create(model="gpt-mock", input="x")
    assert denied.value.status_code == 402


def test_midstream_upstream_failure_ends_with_an_error_event(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    for model, directive in [
        ("gpt-mock", "[[mock:midstream_error]]"),
        ("gpt-resp", "[[mock:midstream_error]]"),
        ("gpt-mock", "[[mock:drop_after=4]]"),
        ("gpt-resp", "[[mock:drop_after=4]]"),
    ]:
        stream = client(gateway, token).responses.create(
            model=model, input=f"cut me {directive} [[mock:chunks=6]]", stream=True
        )
        events = list(stream)
        assert events[-1].type == "error", (model, directive)
        assert [e.sequence_number for e in events] == list(range(len(events)))
