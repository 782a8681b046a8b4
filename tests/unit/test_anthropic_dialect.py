"""Golden tests for the Anthropic Messages dialect (tests/golden/anthropic_messages/*.json).

Fixture kinds, by file-name prefix:
  decode_*  input {"headers", "body", "count_tokens"?} -> expected {"request": IR} or {"error": ...}
  encode_*  input {"request": IR, "response": IR}     -> expected response body
  stream_*  input {"request": IR, "events": [IR]}     -> expected {"events": [{"event", "data"}],
                                                          "message": the SDK's accumulated message}
  error_*   input GatewayError                          -> expected {"status", "headers", "body"}

IR values are written as JSON objects tagged with "_type" (see `ir_to_json`); fields left
at their defaults are omitted.
"""

import dataclasses
import re
import typing
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import Message, RawMessageStreamEvent
from anthropic.types.shared import ErrorResponse
from pydantic import TypeAdapter

from switchgate import jsonutil
from switchgate.core import content, events, request, response, usage
from switchgate.core.response import FinishReason
from switchgate.dialects.anthropic_messages import (
    AnthropicMessagesDialect,
    AnthropicStreamEncoder,
    anthropic_count_tokens_request,
    anthropic_to_core_request,
    core_to_anthropic_response,
    render_anthropic_error,
)
from switchgate.dialects.anthropic_messages.encode import message_id
from switchgate.errors import ErrorKind, GatewayError
from switchgate.wire.sse import SSEParser

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
CASES = GOLDEN / "anthropic_messages"
IR_TYPES: dict[str, type] = {
    name: obj
    for module in (content, events, request, response, usage)
    for name, obj in vars(module).items()
    if isinstance(obj, type) and dataclasses.is_dataclass(obj)
}
STREAM_EVENT: Any = TypeAdapter(RawMessageStreamEvent)


# --- IR <-> tagged JSON (shared with test_anthropic_provider.py) --------------------------


def ir_to_json(value: Any) -> Any:
    if isinstance(value, GatewayError):
        out = {"_type": "GatewayError", "kind": value.kind.value, "message": value.message}
        for name in ("param", "code", "retry_after", "upstream_status", "status_override"):
            if getattr(value, name) is not None:
                out[name] = getattr(value, name)
        return out
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {"_type": type(value).__name__}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if f.default is not dataclasses.MISSING and item == f.default:
                continue
            if f.default_factory is not dataclasses.MISSING and item == f.default_factory():
                continue
            out[f.name] = ir_to_json(item)
        return out
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, list | tuple):
        return [ir_to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: ir_to_json(v) for k, v in value.items()}
    return value


def _coerce(hint: Any, value: Any) -> Any:
    options = typing.get_args(hint) or (hint,)
    if FinishReason in options and isinstance(value, str):
        return FinishReason(value)
    if isinstance(value, list) and "tuple" in str(hint):
        return tuple(value)
    return value


def ir_from_json(value: Any) -> Any:
    if isinstance(value, dict) and "_type" in value:
        fields = {k: v for k, v in value.items() if k != "_type"}
        if value["_type"] == "GatewayError":
            return GatewayError(ErrorKind(fields.pop("kind")), fields.pop("message"), **fields)
        cls = IR_TYPES[value["_type"]]
        hints = typing.get_type_hints(cls)
        return cls(**{k: _coerce(hints[k], ir_from_json(v)) for k, v in fields.items()})
    if isinstance(value, list):
        return [ir_from_json(v) for v in value]
    if isinstance(value, dict):
        return {k: ir_from_json(v) for k, v in value.items()}
    return value


def load_cases(directory: Path, prefix: str) -> list[Any]:
    files = sorted(directory.glob(f"{prefix}_*.json"))
    assert files, f"no {prefix}_* fixtures in {directory}"
    return [pytest.param(jsonutil.loads(f.read_bytes()), id=f.stem) for f in files]


def error_json(err: GatewayError) -> dict[str, Any]:
    return {**ir_to_json(err), "status": err.status}


def parse_sse(data: bytes) -> list[dict[str, Any]]:
    parser = SSEParser()
    out = [{"event": e.event, "data": jsonutil.loads(e.data)} for e in parser.feed(data)]
    assert not parser.flush(), "stream must end with a complete event"
    return out


# --- decode ----------------------------------------------------------------------------


@pytest.mark.parametrize("case", load_cases(CASES, "decode"))
def test_decode(case: dict[str, Any]) -> None:
    given, expected = case["input"], case["expected"]
    decode = (
        anthropic_count_tokens_request if given.get("count_tokens") else anthropic_to_core_request
    )
    if "error" in expected:
        with pytest.raises(GatewayError) as info:
            decode(given["body"], given["headers"])
        assert error_json(info.value) == expected["error"]
        assert render_anthropic_error(info.value)[0] == 400
        return
    result = decode(given["body"], given["headers"])
    assert ir_to_json(result) == expected["request"]
    assert ir_from_json(expected["request"]) == result  # the helpers round-trip


def test_decode_rejects_bool_max_tokens() -> None:
    body = {"model": "m", "max_tokens": True, "messages": [{"role": "user", "content": "hi"}]}
    with pytest.raises(GatewayError) as info:
        anthropic_to_core_request(body, {"anthropic-version": "2023-06-01"})
    assert info.value.param == "max_tokens"


def test_decode_accepts_new_sdk_version_and_beta_header() -> None:
    body = {"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]}
    headers = {"anthropic-version": "2026-10-21", "anthropic-beta": "context-1m-2025-08-07"}
    result = anthropic_to_core_request(body, headers)
    assert result.extras == {"anthropic": {"anthropic-beta": "context-1m-2025-08-07"}}


# --- encode ----------------------------------------------------------------------------


@pytest.mark.parametrize("case", load_cases(CASES, "encode"))
def test_encode(case: dict[str, Any]) -> None:
    req, resp = ir_from_json(case["input"]["request"]), ir_from_json(case["input"]["response"])
    body = core_to_anthropic_response(resp, req)
    assert jsonutil.loads(body) == case["expected"]
    Message.model_validate_json(body)  # the official SDK accepts it
    assert AnthropicMessagesDialect().encode_response(resp, req) == body


# --- stream ----------------------------------------------------------------------------


def _encode_stream(case: dict[str, Any]) -> bytes:
    encoder = AnthropicMessagesDialect().stream_encoder(ir_from_json(case["input"]["request"]))
    chunks = [encoder.ping()] if case["input"].get("ping_first") else []
    chunks += [encoder.encode(ir_from_json(e)) for e in case["input"]["events"]]
    chunks.append(encoder.close())
    assert encoder.close() == b""  # close() is idempotent
    return b"".join(chunks)


@pytest.mark.parametrize("case", load_cases(CASES, "stream"))
def test_stream(case: dict[str, Any]) -> None:
    data = _encode_stream(case)
    sent = parse_sse(data)
    assert sent == case["expected"]["events"]
    # Exact framing: `event: NAME\ndata: {"type": NAME, ...}\n\n`, nothing else.
    rebuilt = b"".join(
        b"event: %s\ndata: %s\n\n" % (e["event"].encode(), jsonutil.dumps(e["data"])) for e in sent
    )
    assert data == rebuilt
    snapshot = None
    json_bufs: dict[int, bytes] = {}
    for item in sent:
        assert item["data"]["type"] == item["event"]
        if item["event"] == "ping":
            continue
        if item["event"] == "error":
            ErrorResponse.model_validate(item["data"])
            continue
        event = STREAM_EVENT.validate_python(item["data"])
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=json_bufs)
    if "message" in case["expected"]:
        assert snapshot is not None
        Message.model_validate(snapshot.to_dict())
        assert snapshot.to_dict(exclude_none=True) == case["expected"]["message"]
    else:
        assert sent[-1]["event"] == "error"


def test_stream_framing_is_exact() -> None:
    encoder = AnthropicStreamEncoder(
        ir_from_json({"_type": "ChatRequest", "model": "m", "messages": []})
    )
    first = encoder.encode(events.Start("msg_1", "m"))
    assert first.startswith(b'event: message_start\ndata: {"type":"message_start",')
    assert first.endswith(b"\n\n") and first.count(b"\n") == 3
    assert encoder.ping() == b'event: ping\ndata: {"type":"ping"}\n\n'


def test_stream_without_start_gets_a_generated_message_id() -> None:
    encoder = AnthropicStreamEncoder(
        ir_from_json({"_type": "ChatRequest", "model": "m", "messages": []})
    )
    sent = parse_sse(encoder.encode(events.TextDelta("orphan")) + encoder.close())
    assert [e["event"] for e in sent][:2] == ["message_start", "content_block_start"]
    assert re.fullmatch(r"msg_[0-9a-f]{24}", sent[0]["data"]["message"]["id"])
    assert sent[0]["data"]["message"]["model"] == "m"


def test_message_ids() -> None:
    assert message_id("msg_01") == "msg_01"
    assert message_id("chatcmpl-a.b/c") == "msg_chatcmpl-abc"
    assert re.fullmatch(r"msg_[0-9a-f]{24}", message_id(""))
    assert message_id("") != message_id("")


def test_stream_without_events_is_still_well_formed() -> None:
    encoder = AnthropicStreamEncoder(
        ir_from_json({"_type": "ChatRequest", "model": "m", "messages": []})
    )
    names = [e["event"] for e in parse_sse(encoder.close())]
    assert names == ["message_start", "message_delta", "message_stop"]


# --- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("case", load_cases(CASES, "error"))
def test_error(case: dict[str, Any]) -> None:
    err = ir_from_json(case["input"])
    status, headers, body = render_anthropic_error(err)
    assert {"status": status, "headers": headers, "body": jsonutil.loads(body)} == case["expected"]
    if case["expected"]["body"]["error"]["type"] != "request_too_large":  # not in the SDK's union
        ErrorResponse.model_validate_json(body)
    stream = AnthropicMessagesDialect().render_stream_error(err)
    assert parse_sse(stream) == [{"event": "error", "data": case["expected"]["body"]}]


def test_text_deltas_from_a_frame_equal_full_encoding() -> None:
    from switchgate.dialects.anthropic_messages.stream import AnthropicStreamEncoder

    chat = request.ChatRequest(model="m", messages=[])
    encoder = AnthropicStreamEncoder(chat)
    texts = ["hi", 'quote " and \\ slash', "é😀\n\t", "\x00switchgate-slot\x00", "\u2028"]
    for kind, field, make in (
        ("text_delta", "text", events.TextDelta),
        ("thinking_delta", "thinking", events.ThinkingDelta),
        ("text_delta", "text", events.TextDelta),  # a new block: a new index, a new frame
    ):
        for text in texts:
            out = encoder.encode(make(text))
            expected = encoder._delta({"type": kind, field: text})
            assert out.endswith(expected) and out.count(b"event: content_block_delta") == 1
