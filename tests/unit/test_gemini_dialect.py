"""The Gemini generate-content dialect: goldens, plus round trips through the real
google-genai SDK (its requests decoded by us, our responses parsed by it)."""

from pathlib import Path
from typing import Any

import httpx2
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as gtypes

from switchgate import jsonutil
from switchgate.core.content import TextPart, ThinkingPart, ToolCallPart, ToolResultPart
from switchgate.core.events import (
    Finish,
    Start,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolArgsDelta,
    ToolCallStart,
    UsageUpdate,
)
from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse, FinishReason
from switchgate.core.usage import Usage
from switchgate.dialects.base import ChatDialect
from switchgate.dialects.gemini_generate import (
    GeminiGenerateDialect,
    GeminiStreamEncoder,
    core_to_gemini_response,
    gemini_count_tokens_request,
    gemini_to_core_request,
    render_gemini_error,
    render_gemini_stream_error,
)
from switchgate.errors import ErrorKind, GatewayError
from tests.unit.gemini_golden_support import cases, check, from_json, ids, load, to_json

AREA = "gemini_generate"


def sdk_response(obj: dict[str, Any]) -> gtypes.GenerateContentResponse:
    """Parse a response the way google-genai does (strict model: unknown fields fail)."""
    return gtypes.GenerateContentResponse.model_validate(obj)


def decode_case(item: dict[str, Any]) -> Any:
    decode = gemini_count_tokens_request if item.get("count_tokens") else gemini_to_core_request
    try:
        return to_json(decode(item["body"], item["model"]))
    except GatewayError as err:
        return {"error": {"kind": err.kind.value, "message": err.message, "param": err.param}}


# ---------------------------------------------------------------- decode


@pytest.mark.parametrize("path", cases(AREA, "decode_"), ids=ids(cases(AREA, "decode_")))
def test_decode_golden(path: Path) -> None:
    case = load(path)
    inp = case["input"]
    actual = [decode_case(i) for i in inp] if isinstance(inp, list) else decode_case(inp)
    check(path, case, actual)


def test_decode_errors_are_all_errors() -> None:
    case = load(Path(cases(AREA, "decode_errors")[0]))
    for item in case["input"]:
        result = decode_case(item)
        assert "error" in result and result["error"]["kind"] == "invalid_request", item


def test_decode_is_deterministic_and_ids_match() -> None:
    body = load(cases(AREA, "decode_function_calling")[0])["input"]["body"]
    first = gemini_to_core_request(body, "gemini-2.5-flash")
    assert first == gemini_to_core_request(body, "gemini-2.5-flash")
    parts = [p for m in first.messages for p in m.parts]
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    results = [p for p in parts if isinstance(p, ToolResultPart)]
    assert len({c.id for c in calls}) == len(calls) == 4
    assert all(c.id == "fc-7" or (c.id.startswith("call_") and len(c.id) == 29) for c in calls)
    assert {c.id for c in calls} <= {r.tool_call_id for r in results}
    assert [r.name for r in results[:2]] == ["get_weather", "get_weather"]
    assert [r.tool_call_id for r in results[:2]] == [calls[0].id, calls[1].id]


# ---------------------------------------------------------------- encode


def _request(case: dict[str, Any]) -> ChatRequest:
    request: ChatRequest = from_json(ChatRequest, case["input"]["request"])
    return request


@pytest.mark.parametrize("path", cases(AREA, "encode_"), ids=ids(cases(AREA, "encode_")))
def test_encode_golden(path: Path) -> None:
    case = load(path)
    response = from_json(ChatResponse, case["input"]["response"])
    body = jsonutil.loads(core_to_gemini_response(response, _request(case)))
    check(path, case, body)
    parsed = sdk_response(body)
    assert parsed.usage_metadata is not None
    assert parsed.usage_metadata.prompt_token_count == response.usage.input_tokens
    assert parsed.candidates and parsed.candidates[0].finish_reason is not None


def test_encode_parses_in_sdk() -> None:
    request = ChatRequest(model="gemini-2.5-flash", messages=())
    response = from_json(
        ChatResponse, load(cases(AREA, "encode_function_calls")[0])["input"]["response"]
    )
    parsed = sdk_response(jsonutil.loads(core_to_gemini_response(response, request)))
    assert parsed.text == "Checking."
    calls = parsed.function_calls or []
    assert [c.name for c in calls] == ["get_weather", "get_weather", "noop", "listy"]
    assert calls[0].args == {"city": "Paris"} and calls[0].id == "call_a"
    assert calls[1].args == {"_raw": '{"city":'}
    assert parsed.candidates and parsed.candidates[0].content and parsed.candidates[0].content.parts
    assert parsed.candidates[0].content.parts[1].thought_signature == b"SIG1"
    assert parsed.candidates[0].content.parts[2].thought_signature is None
    usage = parsed.usage_metadata
    assert usage is not None and usage.prompt_token_count == 100
    assert usage.cached_content_token_count == 64 and usage.total_token_count == 130
    assert parsed.model_version == "gemini-2.5-flash" and parsed.response_id == "resp-2"


# ---------------------------------------------------------------- stream


def _encode_stream(case: dict[str, Any]) -> list[str]:
    encoder = GeminiStreamEncoder(_request(case), sse=case["input"]["sse"])
    out = [encoder.encode(from_json(StreamEvent, e)).decode() for e in case["input"]["events"]]
    return [*out, encoder.close().decode()]


@pytest.mark.parametrize("path", cases(AREA, "stream_"), ids=ids(cases(AREA, "stream_")))
def test_stream_golden(path: Path) -> None:
    case = load(path)
    chunks = _encode_stream(case)
    check(path, case, chunks)
    whole = "".join(chunks)
    if case["input"]["sse"]:
        for block in whole.split("\n\n")[:-1]:
            assert block.startswith("data: ")
            obj = jsonutil.loads(block[len("data: ") :])
            if "error" not in obj:
                sdk_response(obj)
    else:
        for obj in jsonutil.loads(whole):  # the concatenation is one JSON array
            if "error" not in obj:
                sdk_response(obj)


def test_stream_error_matches_render() -> None:
    err = GatewayError(ErrorKind.RATE_LIMITED, "slow down", retry_after=30)
    encoder = GeminiStreamEncoder(ChatRequest(model="m", messages=()), sse=True)
    assert encoder.encode(StreamError(err)) == render_gemini_stream_error(err)


# ---------------------------------------------------------------- errors


def test_errors_golden() -> None:
    path = cases(AREA, "errors_render")[0]
    case = load(path)
    actual = []
    for item in case["input"]:
        status, headers, body = render_gemini_error(from_json(GatewayError, item))
        actual.append({"status": status, "headers": headers, "body": jsonutil.loads(body)})
        assert status != 529
    check(path, case, actual)


# ---------------------------------------------------------------- dialect object


def test_dialect_reads_pseudo_headers() -> None:
    dialect: ChatDialect = GeminiGenerateDialect()  # mypy checks the protocol
    assert dialect.name == "gemini"
    body = {"contents": [{"parts": [{"text": "hi"}]}], "safetySettings": []}
    plain = dialect.decode_request(body, {":model": "models/gemini-2.5-flash"})
    assert plain.model == "gemini-2.5-flash" and not plain.stream
    assert plain.extras == {"gemini": {"safetySettings": []}}
    sse = dialect.decode_request(
        body, {":model": "gemini-2.5-flash", ":action": "streamGenerateContent", ":alt": "sse"}
    )
    arr = dialect.decode_request(body, {":model": "m", ":action": "streamGenerateContent"})
    assert sse.stream and arr.stream
    assert dialect.stream_encoder(sse).close() == b""
    assert dialect.stream_encoder(arr).close() == b"[]"
    with pytest.raises(GatewayError) as info:
        dialect.decode_request(body, {})
    assert info.value.kind is ErrorKind.INVALID_REQUEST


# ---------------------------------------------------------------- the real SDK, end to end


def _sdk_client(handler: Any) -> genai.Client:
    transport = httpx2.MockTransport(handler)
    return genai.Client(
        api_key="client-key", http_options=gtypes.HttpOptions(client_args={"transport": transport})
    )


def _model_and_action(url: str) -> tuple[str, str]:
    tail = url.split("/models/", 1)[1].split("?", 1)[0]
    model, action = tail.split(":", 1)
    return model, action


def test_sdk_round_trip_generate() -> None:
    dialect = GeminiGenerateDialect()
    seen: list[ChatRequest] = []

    def handler(http: httpx2.Request) -> httpx2.Response:
        model, action = _model_and_action(str(http.url))
        request = dialect.decode_request(
            jsonutil.loads(http.content), {":model": model, ":action": action}
        )
        seen.append(request)
        response = ChatResponse(
            id="r1",
            model="x",
            parts=(
                ThinkingPart(text="pondering"),
                TextPart("It is sunny."),
                ToolCallPart("call_1", "get_weather", '{"city":"Paris"}', "gemini:U0lH"),
            ),
            finish_reason=FinishReason.TOOL_CALLS,
            usage=Usage(input_tokens=10, output_tokens=7, reasoning_tokens=3),
        )
        return httpx2.Response(200, content=dialect.encode_response(response, request))

    client = _sdk_client(handler)
    weather = gtypes.FunctionDeclaration(
        name="get_weather",
        parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}}},
    )
    result = client.models.generate_content(
        model="gemini-2.5-flash",
        contents=[
            gtypes.Content(role="user", parts=[gtypes.Part(text="Weather?")]),
            gtypes.Content(
                role="model",
                parts=[
                    gtypes.Part(
                        function_call=gtypes.FunctionCall(
                            name="get_weather", args={"city": "Rome"}
                        ),
                        thought_signature=b"old",
                    )
                ],
            ),
            gtypes.Content(
                role="user",
                parts=[
                    gtypes.Part(
                        function_response=gtypes.FunctionResponse(
                            name="get_weather", response={"output": "rain"}
                        )
                    )
                ],
            ),
        ],
        config=gtypes.GenerateContentConfig(
            system_instruction="Be brief.",
            temperature=0.3,
            max_output_tokens=50,
            tools=[gtypes.Tool(function_declarations=[weather])],
            thinking_config=gtypes.ThinkingConfig(thinking_budget=512, include_thoughts=True),
        ),
    )
    request = seen[0]
    assert request.model == "gemini-2.5-flash"
    assert [t.text for t in request.system] == ["Be brief."]
    assert request.sampling.temperature == 0.3 and request.sampling.max_tokens == 50
    assert request.tools[0].name == "get_weather"
    assert request.reasoning is not None and request.reasoning.budget_tokens == 512
    call = request.messages[1].parts[0]
    result_part = request.messages[2].parts[0]
    assert getattr(call, "signature", None) == "gemini:b2xk"  # base64 of b"old"
    assert getattr(result_part, "tool_call_id", None) == getattr(call, "id", "")
    assert result.text == "It is sunny."
    assert result.function_calls and result.function_calls[0].args == {"city": "Paris"}
    assert result.candidates and result.candidates[0].content and result.candidates[0].content.parts
    assert result.candidates[0].content.parts[0].thought is True
    assert result.candidates[0].content.parts[2].thought_signature == b"SIG"
    usage = result.usage_metadata
    assert usage is not None and usage.prompt_token_count == 10
    assert usage.candidates_token_count == 4 and usage.thoughts_token_count == 3


def test_sdk_round_trip_stream() -> None:

    dialect = GeminiGenerateDialect()

    def handler(http: httpx2.Request) -> httpx2.Response:
        model, action = _model_and_action(str(http.url))
        alt = http.url.params.get("alt")
        request = dialect.decode_request(
            jsonutil.loads(http.content), {":model": model, ":action": action, ":alt": alt or ""}
        )
        encoder = dialect.stream_encoder(request)
        events: list[StreamEvent] = [
            Start("r2", "x"),
            TextDelta("Hel"),
            TextDelta("lo"),
            ToolCallStart(0, "call_9", "lookup"),
            ToolArgsDelta(0, '{"q":'),
            ToolArgsDelta(0, '"x"}'),
            Finish(FinishReason.TOOL_CALLS),
            UsageUpdate(Usage(input_tokens=5, output_tokens=6)),
        ]
        body = b"".join(encoder.encode(e) for e in events) + encoder.close()
        return httpx2.Response(200, content=body, headers={"content-type": "text/event-stream"})

    client = _sdk_client(handler)  # keep a reference: the SDK closes its transport on __del__
    chunks = list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi"))
    assert "".join(c.text or "" for c in chunks if c.text) == "Hello"
    calls = [fc for c in chunks for fc in (c.function_calls or [])]
    assert [(fc.name, fc.args, fc.id) for fc in calls] == [("lookup", {"q": "x"}, "call_9")]
    last = chunks[-1]
    assert last.candidates and last.candidates[0].finish_reason == gtypes.FinishReason.STOP
    assert last.usage_metadata is not None and last.usage_metadata.total_token_count == 11


def test_sdk_sees_error_fields() -> None:
    dialect = GeminiGenerateDialect()

    def handler(http: httpx2.Request) -> httpx2.Response:
        err = GatewayError(ErrorKind.RATE_LIMITED, "quota exceeded", retry_after=7)
        status, headers, body = dialect.render_error(err)
        return httpx2.Response(status, content=body, headers=headers)

    client = _sdk_client(handler)
    client._api_client._http_options.retry_options = gtypes.HttpRetryOptions(attempts=1)
    with pytest.raises(genai_errors.ClientError) as info:
        client.models.generate_content(model="gemini-2.5-flash", contents="hi")
    assert info.value.code == 429
    assert info.value.status == "RESOURCE_EXHAUSTED"
    assert info.value.message == "quota exceeded"


@pytest.mark.parametrize("sse", [True, False])
def test_text_chunks_from_a_frame_equal_full_encoding(sse: bool) -> None:
    from switchgate.core.events import Start, TextDelta, ThinkingDelta
    from switchgate.dialects.gemini_generate.stream import GeminiStreamEncoder

    chat = ChatRequest(model="gemini-x", messages=[], extras={})
    encoder = GeminiStreamEncoder(chat, sse=sse)
    encoder._thoughts = True
    encoder.encode(Start("resp-1", "gemini-x"))
    for text in ["hi", 'quote " and \\ slash', "é😀\n\t", "\x00switchgate-slot\x00", "\u2028"]:
        for event, part in (
            (TextDelta(text), {"text": text}),
            (ThinkingDelta(text), {"text": text, "thought": True}),
        ):
            reference = GeminiStreamEncoder(chat, sse=sse)
            reference._id, reference._sent = encoder._id, encoder._sent
            assert encoder.encode(event) == reference._chunk([part])
