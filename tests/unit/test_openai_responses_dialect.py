"""Golden tests for the OpenAI Responses dialect (tests/golden/openai_responses/*.json), every
output checked against the openai SDK's own types (Response, ResponseStreamEvent)."""

from typing import Any

import pytest
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from switchgate import jsonutil
from switchgate.core.accumulate import Accumulator
from switchgate.core.content import TextPart
from switchgate.core.events import Finish, Start, StreamError, TextDelta, UsageUpdate
from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse, FinishReason
from switchgate.core.usage import Usage
from switchgate.dialects.openai_responses import (
    OpenAIResponsesDialect,
    ResponsesStreamEncoder,
    core_to_responses_response,
    render_responses_stream_error,
    responses_to_core_request,
)
from switchgate.errors import ErrorKind, GatewayError
from switchgate.wire.sse import SSEParser, format_event
from tests.unit._golden_ir import cases, dump, load

AREA = "openai_responses"
EVENTS: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)


# --- what each fixture kind computes (a regenerator reuses these) -------------------------


def compute_decode(body: Any) -> Any:
    return dump(responses_to_core_request(body))


def compute_decode_invalid(bodies: list[Any]) -> list[Any]:
    out = []
    for body in bodies:
        with pytest.raises(GatewayError) as info:
            responses_to_core_request(body)
        err = info.value
        assert err.kind is ErrorKind.INVALID_REQUEST
        out.append({"param": err.param, "code": err.code, "message": err.message})
    return out


def compute_encode(inp: dict[str, Any]) -> Any:
    return core_to_responses_response(
        load(inp["response"]),
        load(inp["request"]),
        response_id=inp["response_id"],
        created_at=inp["created_at"],
    )


def _payloads(data: bytes) -> list[Any]:
    out = []
    for event in SSEParser().feed(data):
        payload = jsonutil.loads(event.data)
        assert event.event == payload["type"], "the event: line names the payload's type"
        out.append(payload)
    return out


def _stream_bytes(inp: dict[str, Any]) -> tuple[list[bytes], bytes]:
    encoder = ResponsesStreamEncoder(
        load(inp["request"]), response_id=inp["response_id"], created_at=inp["created_at"]
    )
    return [encoder.encode(load(e)) for e in inp["events"]], encoder.close()


def compute_stream(inp: dict[str, Any]) -> dict[str, Any]:
    per_event, close = _stream_bytes(inp)
    return {"per_event": [_payloads(b) for b in per_event], "close": _payloads(close)}


COMPUTE = {
    "decode_invalid": compute_decode_invalid,
    "decode": compute_decode,
    "encode": compute_encode,
    "stream": compute_stream,
}


def compute(name: str, inp: Any) -> Any:
    for prefix, fn in COMPUTE.items():
        if name.startswith(prefix):
            return fn(inp)
    raise AssertionError(f"no computation for fixture {name}")


def _encoded(payloads: list[Any]) -> bytes:
    """Exact bytes for expected payloads: the fixture pins key order and values."""
    return b"".join(format_event(jsonutil.dumps(p), p["type"]) for p in payloads)


def _ids(value: Any) -> str:
    return value if isinstance(value, str) else ""


# --- golden comparisons ------------------------------------------------------------------


@pytest.mark.parametrize(("name", "case"), cases(AREA, "decode"), ids=_ids)
def test_decode_golden(name: str, case: dict[str, Any]) -> None:
    assert compute(name, case["input"]) == case["expected"]


@pytest.mark.parametrize(("name", "case"), cases(AREA, "encode"), ids=_ids)
def test_encode_golden(name: str, case: dict[str, Any]) -> None:
    out = jsonutil.dumps(compute_encode(case["input"]))
    assert out == jsonutil.dumps(case["expected"])  # exact bytes, key order included
    Response.model_validate_json(out)


@pytest.mark.parametrize(("name", "case"), cases(AREA, "stream"), ids=_ids)
def test_stream_golden(name: str, case: dict[str, Any]) -> None:
    per_event, close = _stream_bytes(case["input"])
    expected = case["expected"]
    assert [_encoded(p) for p in expected["per_event"]] == per_event
    assert _encoded(expected["close"]) == close
    payloads = _payloads(b"".join(per_event) + close)
    assert [p["sequence_number"] for p in payloads] == list(range(len(payloads)))
    for payload in payloads:
        EVENTS.validate_python(payload)
    last = payloads[-1]
    if last["type"] != "error":
        assert last["type"] in ("response.completed", "response.incomplete")
        Response.model_validate(last["response"])


# --- properties ---------------------------------------------------------------------------


def test_stream_and_whole_response_agree() -> None:
    """The streamed final response equals the whole-response encoding of the same answer."""
    case = dict(cases(AREA, "stream_reasoning_text_tools"))["stream_reasoning_text_tools"]
    inp = case["input"]
    encoder = ResponsesStreamEncoder(
        load(inp["request"]), response_id=inp["response_id"], created_at=inp["created_at"]
    )
    accumulator = Accumulator()
    for raw in inp["events"]:
        event = load(raw)
        accumulator.add(event)
        encoder.encode(event)
    encoder.close()
    whole = core_to_responses_response(
        accumulator.response(),
        load(inp["request"]),
        response_id=inp["response_id"],
        created_at=inp["created_at"],
    )
    assert encoder.final == whole


def test_dialect_keeps_the_final_response_and_renders_openai_errors() -> None:
    kept: list[dict[str, Any]] = []
    dialect = OpenAIResponsesDialect(on_final=kept.append)
    assert dialect.name == "responses"
    request = dialect.decode_request({"model": "m", "input": "hi"}, {})
    body = jsonutil.loads(
        dialect.encode_response(
            ChatResponse("x", "m", (TextPart("yo"),), FinishReason.STOP, Usage(3, 1)), request
        )
    )
    assert kept == [body]
    assert Response.model_validate(body).output_text == "yo"
    encoder = dialect.stream_encoder(request)
    encoder.encode(Start("x", "m"))
    encoder.encode(TextDelta("a"))
    encoder.close()
    assert len(kept) == 2 and kept[1]["output"][0]["content"][0]["text"] == "a"
    err = GatewayError(ErrorKind.INSUFFICIENT_BALANCE, "no money")
    status, _, raw = dialect.render_error(err)
    assert status == 402
    assert jsonutil.loads(raw)["error"]["code"] == "insufficient_quota"


def test_stream_error_ends_the_stream_and_is_numbered() -> None:
    encoder = ResponsesStreamEncoder(ChatRequest("m", (), stream=True), response_id="resp_e")
    out = encoder.encode(TextDelta("partial"))
    err = GatewayError(ErrorKind.UPSTREAM_ERROR, "cut")
    out += encoder.encode(StreamError(err)) + encoder.encode(Finish(FinishReason.STOP))
    out += encoder.encode(UsageUpdate(Usage(1, 1))) + encoder.close()
    payloads = _payloads(out)
    assert payloads[-1] == {
        "type": "error",
        "code": "server_error",
        "message": "cut",
        "param": None,
        "sequence_number": len(payloads) - 1,
    }
    assert encoder.final is None
    assert render_responses_stream_error(err, 7).startswith(b"event: error\ndata: ")


def test_decode_marks_what_only_a_native_upstream_can_do() -> None:
    request = responses_to_core_request(
        {
            "model": "m",
            "input": [{"type": "item_reference", "id": "msg_1"}, {"role": "user", "content": "x"}],
            "tools": [{"type": "web_search"}],
            "tool_choice": {"type": "file_search"},
        }
    )
    reasons = request.extras["responses"]["native_only"]
    assert len(reasons) == 2 and "item_reference" in reasons[0] and "file_search" in reasons[1]
    # Hosted tools are no longer refused: mapped or dropped per upstream (hosted_tools.py).
    assert [t.kind for t in request.hosted_tools] == ["web_search"]
