"""The foundation, end to end: the official openai SDK against the real gateway
(SQLite and PostgreSQL) relaying to the fake OpenAI upstream."""

import json

import openai
import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from tests.conftest import Gateway
from tests.support import clear_mock_requests, http_json, mock_requests, wait_for

UNITS = 10**12
IN_PRICE = UNITS // 10**6  # gpt-mock: $1 per 1M input tokens, in units per token
OUT_PRICE = 2 * UNITS // 10**6


def client(gw: Gateway, token: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0, timeout=30)


def expected_cost(prompt: int, completion: int, cached: int = 0) -> int:
    return (prompt - cached) * IN_PRICE + cached * (IN_PRICE // 2) + completion * OUT_PRICE


def test_models_lists_priced_models_only(gateway_any: Gateway) -> None:
    _, token = gateway_any.new_user()
    ids = {m.id for m in client(gateway_any, token).models.list()}
    assert {"gpt-mock", "gpt-alias", "claude-mock", "gemini-mock"} <= ids
    assert "unpriced-model" not in ids


def test_chat_charges_exactly_the_reported_usage(gateway_any: Gateway) -> None:
    email, token = gateway_any.new_user(balance_usd=5)
    before = gateway_any.balance(email)
    reply = client(gateway_any, token).chat.completions.create(
        model="gpt-mock", messages=[{"role": "user", "content": "hello there gateway"}]
    )
    assert isinstance(reply, ChatCompletion)
    ChatCompletion.model_validate(reply.model_dump())
    assert reply.choices[0].message.content == "Hello from mock! You said: hello there gateway"
    assert reply.usage is not None
    cost = expected_cost(reply.usage.prompt_tokens, reply.usage.completion_tokens)
    assert cost > 0
    assert wait_for(lambda: gateway_any.balance(email) == before - cost)


def test_stream_with_usage_is_relayed_chunk_by_chunk(gateway_any: Gateway) -> None:
    email, token = gateway_any.new_user()
    before = gateway_any.balance(email)
    stream = client(gateway_any, token).chat.completions.create(
        model="gpt-mock",
        messages=[{"role": "user", "content": "stream me [[mock:chunks=5]]"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    for chunk in chunks:
        ChatCompletionChunk.model_validate(chunk.model_dump())
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.startswith("Hello from mock! You said: stream me")
    usage_chunks = [c for c in chunks if not c.choices]
    assert len(usage_chunks) == 1 and usage_chunks[0].usage is not None
    usage = usage_chunks[0].usage
    cost = expected_cost(usage.prompt_tokens, usage.completion_tokens)
    assert wait_for(lambda: gateway_any.balance(email) == before - cost)


def test_stream_without_usage_hides_the_usage_chunk_but_still_bills(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    sdk = client(gateway, token)
    messages = [{"role": "user", "content": "count this please"}]
    reference = sdk.chat.completions.create(model="gpt-mock", messages=messages)  # type: ignore[arg-type]
    assert reference.usage is not None
    after_first = wait_for(lambda: gateway.balance(email) < 10 * UNITS and gateway.balance(email))
    clear_mock_requests(gateway.mock_url)
    chunks = list(sdk.chat.completions.create(model="gpt-mock", messages=messages, stream=True))  # type: ignore[arg-type]
    assert chunks and all(c.choices for c in chunks), (
        "no choices:[] chunk the client didn't ask for"
    )
    sent = [r for r in mock_requests(gateway.mock_url) if r["path"].endswith("/chat/completions")]
    assert sent[-1]["json"]["stream_options"]["include_usage"] is True
    cost = expected_cost(reference.usage.prompt_tokens, reference.usage.completion_tokens)
    assert wait_for(lambda: gateway.balance(email) == after_first - cost)


def test_tool_calling_round_trip(gateway_any: Gateway) -> None:
    _, token = gateway_any.new_user()
    sdk = client(gateway_any, token)
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            },
        }
    ]
    messages: list[dict[str, object]] = [{"role": "user", "content": "weather in Oslo?"}]
    first = sdk.chat.completions.create(
        model="gpt-mock",
        messages=messages,
        tools=tools,
        tool_choice="required",  # type: ignore[arg-type]
    )
    call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
    assert first.choices[0].finish_reason == "tool_calls"
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Oslo"}
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "12 degrees and rain"},
    ]
    second = sdk.chat.completions.create(model="gpt-mock", messages=messages, tools=tools)  # type: ignore[arg-type]
    assert "12 degrees and rain" in (second.choices[0].message.content or "")


def test_streamed_tool_call_arguments_arrive_in_pieces(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    tools = [
        {
            "type": "function",
            "function": {
                "name": "lookup",
                "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
            },
        }
    ]
    with client(gateway, token).chat.completions.stream(
        model="gpt-mock",
        messages=[{"role": "user", "content": "find it [[mock:tool]]"}],
        tools=tools,  # type: ignore[arg-type]
    ) as stream:
        deltas = [e for e in stream if e.type == "tool_calls.function.arguments.delta"]
        final = stream.get_final_completion()
    assert len(deltas) >= 2
    call = final.choices[0].message.tool_calls[0]  # type: ignore[index]
    assert call.function.name == "lookup" and json.loads(call.function.arguments) == {"q": "Oslo"}


@pytest.mark.parametrize(
    "header",
    [None, "Bearer  {token}", "Bearer {token} ", "Bearer sk-wrong-token", "Basic {token}"],
)
def test_bad_credentials_get_401_and_no_charge(gateway: Gateway, header: str | None) -> None:
    email, token = gateway.new_user()
    before = gateway.balance(email)
    headers = {"authorization": header.format(token=token)} if header else {}
    status, body = http_json(
        "POST",
        f"{gateway.url}/v1/chat/completions",
        {"model": "gpt-mock", "messages": [{"role": "user", "content": "hi"}]},
        headers,
    )
    assert status == 401
    assert set(body["error"]) >= {"message", "type", "param", "code"}
    assert gateway.balance(email) == before


def test_unknown_and_unpriced_models_get_404(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    for model in ("no-such-model", "unpriced-model"):
        with pytest.raises(openai.NotFoundError) as info:
            client(gateway, token).chat.completions.create(
                model=model, messages=[{"role": "user", "content": "hi"}]
            )
        assert info.value.code == "model_not_found"
    assert gateway.balance(email) == 10 * UNITS


def test_malformed_and_invalid_requests_get_400(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    auth = {"authorization": f"Bearer {token}"}
    url = f"{gateway.url}/v1/chat/completions"
    import urllib.request

    request = urllib.request.Request(url, data=b"{not json", method="POST", headers=auth)
    try:
        urllib.request.urlopen(request, timeout=10)
        raise AssertionError("expected 400")
    except urllib.error.HTTPError as exc:
        assert exc.code == 400
        assert json.loads(exc.read())["error"]["type"] == "invalid_request_error"
    status, body = http_json(
        "POST",
        url,
        {"model": "gpt-mock", "messages": [{"role": "user", "content": "x"}], "temperature": 7},
        auth,
    )
    assert status == 400 and body["error"]["param"] == "temperature"
    status, body = http_json("POST", url, {"model": "gpt-mock"}, auth)
    assert status == 400 and body["error"]["param"] == "messages"


def test_upstream_failure_is_5xx_without_leaking_the_upstream(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    with pytest.raises(openai.InternalServerError) as info:
        client(gateway, token).chat.completions.create(
            model="gpt-mock", messages=[{"role": "user", "content": "boom [[mock:error=500]]"}]
        )
    text = json.dumps(info.value.body) + str(info.value)
    assert "mock-key" not in text and "127.0.0.1" not in text
    assert gateway.balance(email) == 10 * UNITS


def test_client_errors_from_upstream_keep_their_status(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    with pytest.raises(openai.RateLimitError):
        client(gateway, token).chat.completions.create(
            model="gpt-mock", messages=[{"role": "user", "content": "slow down [[mock:error=429]]"}]
        )


def test_stream_cut_midway_ends_with_an_error_and_bills_what_was_delivered(
    gateway: Gateway,
) -> None:
    email, token = gateway.new_user()
    stream = client(gateway, token).chat.completions.create(
        model="gpt-mock",
        messages=[
            {"role": "user", "content": "cut me off [[mock:chunks=8]] [[mock:drop_after=3]]"}
        ],
        stream=True,
    )
    received = []
    with pytest.raises(openai.APIError):
        for chunk in stream:
            received.append(chunk)
    assert received, "the first chunks were delivered before the cut"
    assert wait_for(lambda: gateway.balance(email) < 10 * UNITS)


def test_failover_to_the_next_channel_before_the_first_byte(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    reply = client(gateway, token).chat.completions.create(
        model="fallback-model", messages=[{"role": "user", "content": "are you there"}]
    )
    assert reply.choices[0].message.content


def test_model_alias_is_rewritten_for_the_upstream(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    clear_mock_requests(gateway.mock_url)
    client(gateway, token).chat.completions.create(
        model="gpt-alias", messages=[{"role": "user", "content": "alias"}]
    )
    sent = [r for r in mock_requests(gateway.mock_url) if r["path"].endswith("/chat/completions")]
    assert sent[-1]["json"]["model"] == "gpt-mock-upstream"


def test_insufficient_balance_is_refused_before_the_upstream(gateway: Gateway) -> None:
    email, token = gateway.new_user(balance_usd=0)
    clear_mock_requests(gateway.mock_url)
    with pytest.raises(openai.APIStatusError) as info:
        client(gateway, token).chat.completions.create(
            model="gpt-mock", messages=[{"role": "user", "content": "free lunch?"}]
        )
    assert info.value.status_code == 402
    assert info.value.code == "insufficient_quota"
    assert not [
        r for r in mock_requests(gateway.mock_url) if r["path"].endswith("/chat/completions")
    ]
    assert gateway.balance(email) == 0


def test_metrics_count_requests(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    client(gateway, token).chat.completions.create(
        model="gpt-mock", messages=[{"role": "user", "content": "measure me"}]
    )
    import urllib.request

    def scrape() -> str:
        with urllib.request.urlopen(f"{gateway.url}/metrics", timeout=5) as response:
            return str(response.read().decode())

    text = wait_for(
        lambda: (
            'switchgate_requests_total{channel="mock-openai",code="200",dialect="openai",'
            'endpoint="chat.completions",model="gpt-mock",status_class="2xx"}'
            in scrape()
            and scrape()
        )
    )
    assert "switchgate_request_duration_seconds_bucket" in text
    assert "switchgate_tokens_total" in text
    rss = [line for line in text.splitlines() if line.startswith("process_resident_memory_bytes{")]
    assert len(rss) == 1 and float(rss[0].split()[-1]) > 10_000_000  # this worker, in bytes
    pooled = [line for line in text.splitlines() if line.startswith("switchgate_upstream_conn")]
    assert len(pooled) == 1 and float(pooled[0].split()[-1]) >= 1  # the call above left one open


def test_retrieve_one_model(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    model = client(gateway, token).models.retrieve("gpt-mock")
    assert model.id == "gpt-mock" and model.object == "model"
    with pytest.raises(openai.NotFoundError):
        client(gateway, token).models.retrieve("unpriced-model")
    import anthropic

    claude = anthropic.Anthropic(base_url=gateway.url, api_key=token, max_retries=0)
    assert claude.models.retrieve("claude-mock").id == "claude-mock"
    assert "claude-mock" in {m.id for m in claude.models.list()}
