"""Golden tests for the OpenAI Chat dialect (tests/golden/openai_chat/*.json)."""

from typing import Any

import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from switchgate import jsonutil
from switchgate.core.content import TextPart
from switchgate.core.events import Finish, Start, TextDelta
from switchgate.core.request import ChatRequest, Message
from switchgate.core.response import ChatResponse, FinishReason
from switchgate.dialects.openai_chat import (
    OpenAIChatDialect,
    OpenAIChatStreamEncoder,
    core_to_openai_chat_response,
    openai_chat_to_core_request,
    render_openai_error,
    render_openai_stream_error,
)
from switchgate.errors import ErrorKind, GatewayError
from switchgate.wire.sse import SSEParser, format_event
from tests.unit._golden_ir import cases, dump, load

AREA = "openai_chat"


# --- what each fixture kind computes (the regenerator reuses these) -----------------------


def compute_decode(body: Any) -> Any:
    return dump(openai_chat_to_core_request(body))


def compute_decode_invalid(bodies: list[Any]) -> list[Any]:
    out = []
    for body in bodies:
        with pytest.raises(GatewayError) as info:
            openai_chat_to_core_request(body)
        err = info.value
        out.append(
            {"status": err.status, "param": err.param, "code": err.code, "message": err.message}
        )
        assert err.kind is ErrorKind.INVALID_REQUEST
    return out


def compute_encode(inp: dict[str, Any]) -> Any:
    return jsonutil.loads(core_to_openai_chat_response(load(inp["response"]), load(inp["request"])))


def _payloads(data: bytes) -> list[Any]:
    """Parse SSE bytes into payloads (JSON objects, or the string "[DONE]")."""
    events = SSEParser().feed(data)
    return ["[DONE]" if e.data == "[DONE]" else jsonutil.loads(e.data) for e in events]


def _stream_bytes(inp: dict[str, Any]) -> tuple[list[bytes], bytes]:
    encoder = OpenAIChatStreamEncoder(load(inp["request"]), created=inp["created"])
    return [encoder.encode(load(e)) for e in inp["events"]], encoder.close()


def compute_stream(inp: dict[str, Any]) -> dict[str, Any]:
    per_event, close = _stream_bytes(inp)
    return {"per_event": [_payloads(b) for b in per_event], "close": _payloads(close)}


def compute_errors(errors: list[Any]) -> list[Any]:
    out = []
    for raw in errors:
        status, headers, body = render_openai_error(load(raw))
        out.append({"status": status, "headers": headers, "body": jsonutil.loads(body)})
    return out


COMPUTE = {
    "decode_invalid": compute_decode_invalid,
    "decode": compute_decode,
    "encode": compute_encode,
    "stream": compute_stream,
    "errors": compute_errors,
}


def compute(name: str, inp: Any) -> Any:
    for prefix, fn in COMPUTE.items():
        if name.startswith(prefix):
            return fn(inp)
    raise AssertionError(f"no computation for fixture {name}")


# --- golden comparisons ------------------------------------------------------------------


def _encoded(payloads: list[Any]) -> bytes:
    """Exact bytes for expected payloads: the fixture pins key order and values."""
    return b"".join(
        b"data: [DONE]\n\n" if p == "[DONE]" else format_event(jsonutil.dumps(p)) for p in payloads
    )


@pytest.mark.parametrize(
    ("name", "case"), cases(AREA, "decode"), ids=lambda v: v if isinstance(v, str) else ""
)
def test_decode_golden(name: str, case: dict[str, Any]) -> None:
    assert compute(name, case["input"]) == case["expected"]


@pytest.mark.parametrize(
    ("name", "case"), cases(AREA, "encode"), ids=lambda v: v if isinstance(v, str) else ""
)
def test_encode_golden(name: str, case: dict[str, Any]) -> None:
    inp = case["input"]
    out = core_to_openai_chat_response(load(inp["response"]), load(inp["request"]))
    assert out == jsonutil.dumps(case["expected"])  # exact bytes, key order included
    ChatCompletion.model_validate(jsonutil.loads(out))


@pytest.mark.parametrize(
    ("name", "case"), cases(AREA, "stream"), ids=lambda v: v if isinstance(v, str) else ""
)
def test_stream_golden(name: str, case: dict[str, Any]) -> None:
    per_event, close = _stream_bytes(case["input"])
    expected = case["expected"]
    assert [_encoded(p) for p in expected["per_event"]] == per_event
    assert _encoded(expected["close"]) == close
    assert close.endswith(b"data: [DONE]\n\n")
    payloads = _payloads(b"".join(per_event) + close)
    for payload in payloads:
        if payload != "[DONE]" and "error" not in payload:
            chunk = ChatCompletionChunk.model_validate(payload)
            assert chunk.object == "chat.completion.chunk"


def test_errors_golden() -> None:
    [(_, case)] = cases(AREA, "errors")
    assert compute_errors(case["input"]) == case["expected"]


# --- properties the fixtures rely on ------------------------------------------------------


def test_stream_sends_role_ids_and_names_once() -> None:
    case = dict(cases(AREA, "stream_tool_calls"))["stream_tool_calls"]
    per_event, close = _stream_bytes(case["input"])
    chunks = [p for p in _payloads(b"".join(per_event) + close) if p != "[DONE]"]
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert sum("role" in d for d in deltas) == 1
    calls = [tc for d in deltas for tc in d.get("tool_calls", [])]
    assert sorted(tc["id"] for tc in calls if "id" in tc) == ["toolu_1", "toolu_2"]
    assert sum("name" in tc["function"] for tc in calls) == 2
    # usage chunk last and only with include_usage; all others carry usage: null
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 40
    assert all(c["usage"] is None for c in chunks[:-1])


def test_stream_without_include_usage_never_sends_empty_choices() -> None:
    case = dict(cases(AREA, "stream_text"))["stream_text"]
    per_event, close = _stream_bytes(case["input"])
    chunks = [p for p in _payloads(b"".join(per_event) + close) if p != "[DONE]"]
    assert all(c["choices"] and "usage" not in c for c in chunks)


def test_decode_then_encode_response_roundtrip_through_sdk() -> None:
    request = openai_chat_to_core_request(
        {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    )
    resp = ChatResponse("abc", "", (TextPart("yo"),), FinishReason.STOP, created=1)
    parsed = ChatCompletion.model_validate_json(core_to_openai_chat_response(resp, request))
    assert parsed.id == "chatcmpl-abc" and parsed.model == "gpt-4o"
    assert parsed.choices[0].message.content == "yo"


def test_dialect_delegates() -> None:
    dialect = OpenAIChatDialect()
    assert dialect.name == "openai"
    request = dialect.decode_request(
        {"model": "m", "messages": [{"role": "user", "content": "x"}]}, {}
    )
    assert request.messages == (Message("user", (TextPart("x"),)),)
    err = GatewayError(ErrorKind.RATE_LIMITED, "slow down", retry_after=3)
    assert dialect.render_error(err) == render_openai_error(err)
    assert dialect.render_stream_error(err) == render_openai_stream_error(err)
    assert render_openai_stream_error(err).startswith(b'data: {"error":{"message":"slow down"')
    encoder = dialect.stream_encoder(ChatRequest("m", (), stream=True))
    out = (
        encoder.encode(Start("x", "m"))
        + encoder.encode(TextDelta("a"))
        + encoder.encode(Finish(FinishReason.LENGTH))
    )
    assert [c["choices"][0]["finish_reason"] for c in _payloads(out)] == [None, None, "length"]


def test_never_529_for_openai_clients() -> None:
    err = GatewayError(ErrorKind.UPSTREAM_OVERLOADED, "busy", status_override=529)
    assert render_openai_error(err)[0] == 503


def test_decode_keeps_unmodelled_fields_in_extras_only_when_present() -> None:
    request = openai_chat_to_core_request(
        {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    )
    assert request.extras == {}


def test_stream_close_without_finish_or_start_completes_the_stream() -> None:
    encoder = OpenAIChatStreamEncoder(ChatRequest("gpt-4o", (), stream=True), created=5)
    out = encoder.encode(TextDelta("orphan")) + encoder.close()
    payloads = _payloads(out)
    assert payloads[-1] == "[DONE]"
    chunks = [ChatCompletionChunk.model_validate(p) for p in payloads[:-1]]
    assert [c.choices[0].delta.role for c in chunks] == ["assistant", None, None]
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert chunks[0].id.startswith("chatcmpl-") and len({c.id for c in chunks}) == 1


def test_encode_synthesises_an_id_when_the_response_has_none() -> None:
    resp = ChatResponse("", "m", (), FinishReason.STOP, created=1)
    body = jsonutil.loads(core_to_openai_chat_response(resp, ChatRequest("m", ())))
    assert body["id"].startswith("chatcmpl-") and len(body["id"]) > len("chatcmpl-")
    assert body["choices"][0]["message"]["content"] == ""


@pytest.mark.parametrize("include_usage", [False, True])
def test_text_chunks_from_a_frame_equal_full_encoding(include_usage: bool) -> None:
    from switchgate.core.events import Start, TextDelta, ThinkingDelta
    from switchgate.dialects.openai_chat.stream import OpenAIChatStreamEncoder

    body: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    if include_usage:
        body |= {"stream": True, "stream_options": {"include_usage": True}}
    request = OpenAIChatDialect().decode_request(body, {})
    encoder = OpenAIChatStreamEncoder(request, created=1)
    encoder.encode(Start("abc", "m-up"))
    for text in ["hi", 'quote " and \\ slash', "é😀\n\t", "\x00switchgate-slot\x00", "\u2028"]:
        for event, key in (
            (TextDelta(text), "content"),
            (ThinkingDelta(text), "reasoning_content"),
        ):
            assert encoder.encode(event) == encoder._chunk({key: text})
