"""The Responses passthrough helpers (request, usage meter, channel flag) and Realtime pricing."""

from dataclasses import replace

from switchgate import jsonutil
from switchgate.billing.pricing import Price, token_cost
from switchgate.billing.realtime import realtime_cost, realtime_hold, realtime_usage
from switchgate.core.response import FinishReason
from switchgate.core.usage import Usage
from switchgate.providers.base import Target
from switchgate.providers.openai import realtime_url
from switchgate.providers.openai_responses import (
    ResponsesUsageMeter,
    build_responses_passthrough,
    response_to_core,
)
from switchgate.providers.registry import provider_kinds
from switchgate.relay.realtime import subprotocol_token
from switchgate.relay.responses_passthrough import ResponsesNative, serves_responses
from switchgate.routing.channels import Channel
from switchgate.wire.sse import format_event

USAGE = {
    "input_tokens": 12,
    "input_tokens_details": {"cached_tokens": 4, "cache_write_tokens": 0},
    "output_tokens": 7,
    "output_tokens_details": {"reasoning_tokens": 3},
    "total_tokens": 19,
}


def _event(kind: str, n: int, **fields: object) -> bytes:
    return format_event(jsonutil.dumps({"type": kind, **fields, "sequence_number": n}), kind)


def test_passthrough_request_rewrites_only_the_model() -> None:
    target = Target("http://up/v1/", "k", "real-model", {"x-extra": "1"})
    body = {"model": "alias", "input": "hi", "stream": True, "store": False}
    request = build_responses_passthrough(body, target)
    assert request.url == "http://up/v1/responses"
    assert request.headers["authorization"] == "Bearer k"
    assert request.headers["accept"] == "text/event-stream"
    assert request.headers["x-extra"] == "1"
    assert jsonutil.loads(request.body) == {**body, "model": "real-model"}
    assert body["model"] == "alias"  # the client's body is not changed


def test_meter_reads_usage_text_and_final_response_across_any_split() -> None:
    final = {"id": "resp_1", "status": "completed", "output": [], "usage": USAGE}
    stream = (
        _event("response.created", 0, response={"id": "resp_1", "usage": None})
        + _event("response.output_text.delta", 1, delta="Hel")
        + _event("response.output_text.delta", 2, delta="lo")
        + _event("response.function_call_arguments.delta", 3, delta="{}")
        + _event("response.completed", 4, response=final)
    )
    for size in (1, 7, len(stream)):
        meter = ResponsesUsageMeter()
        for i in range(0, len(stream), size):
            meter.feed(stream[i : i + size])
        assert meter.usage() == Usage(12, 7, cache_read_tokens=4, reasoning_tokens=3)
        assert meter.output_text() == "Hello{}"
        assert meter.final == final
        assert meter.sequence == 4


def test_meter_without_completion_has_no_usage_and_no_final() -> None:
    meter = ResponsesUsageMeter()
    meter.feed(_event("response.created", 0, response={"id": "r"}))
    meter.feed(_event("response.output_text.delta", 1, delta="cut"))
    assert meter.usage() is None and meter.final is None and meter.sequence == 1


def test_response_body_reads_back_into_canonical_form() -> None:
    data = {
        "id": "resp_1",
        "model": "m",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "hm"}]},
            {"type": "message", "content": [{"type": "output_text", "text": "hi"}]},
            {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
        ],
        "usage": USAGE,
    }
    response = response_to_core(data)
    assert response.finish_reason is FinishReason.LENGTH
    assert [type(p).__name__ for p in response.parts] == [
        "ThinkingPart",
        "TextPart",
        "ToolCallPart",
    ]
    assert response.usage.output_tokens == 7


def test_only_openai_channels_that_declare_it_are_native() -> None:
    def channel(kind: str, extra: dict[str, object]) -> Channel:
        return Channel(1, "c", kind, "http://x", "k", ("m",), extra=extra)

    native = ResponsesNative(provider_kinds())
    assert serves_responses(channel("openai", {"responses": True}))
    assert native.for_channel(channel("openai", {"responses": True})) is native
    assert native.for_channel(channel("openai", {})) is None
    assert native.for_channel(channel("azure", {"responses": True})) is None
    # Unset: on for the official OpenAI API (Codex works out of the box), off elsewhere.
    official = Channel(1, "c", "openai", "https://api.openai.com/v1", "k", ("m",))
    assert serves_responses(official)
    assert not serves_responses(replace(official, extra={"responses": False}))
    assert not serves_responses(replace(official, base_url="https://openrouter.ai/api/v1"))
    body = jsonutil.dumps({"id": "resp_9", "status": "completed", "usage": USAGE})
    assert native.usage_from_body(body) == Usage(12, 7, cache_read_tokens=4, reasoning_tokens=3)
    assert native.final_response() is not None and native.final_response()["id"] == "resp_9"  # type: ignore[index]


def test_realtime_cost_is_token_cost_unless_audio_is_priced_apart() -> None:
    raw = {
        "total_tokens": 160,
        "input_tokens": 100,
        "output_tokens": 60,
        "input_token_details": {
            "cached_tokens": 20,
            "text_tokens": 40,
            "audio_tokens": 60,
            "cached_tokens_details": {"text_tokens": 10, "audio_tokens": 10},
        },
        "output_token_details": {"text_tokens": 10, "audio_tokens": 50},
    }
    usage = realtime_usage(raw)
    assert usage is not None
    plain = Price("m", input=1_000, output=4_000, cache_read=500)
    assert realtime_cost(plain, usage) == token_cost(plain, usage.usage)
    assert realtime_cost(plain, usage) == 80 * 1_000 + 20 * 500 + 60 * 4_000
    audio = Price(
        "m",
        input=1_000,
        output=4_000,
        cache_read=500,
        extra={"audio_input": 10_000, "audio_output": 20_000},
    )
    # uncached audio in: 60 - 10 = 50; text in: 100 - 20 - 50 = 30; text out 10, audio out 50
    assert (
        realtime_cost(audio, usage)
        == 30 * 1_000 + 50 * 10_000 + 20 * 500 + 10 * 4_000 + 50 * 20_000
    )
    assert realtime_usage(None) is None
    assert realtime_hold(audio, 10, 2) == 10 * 10_000 + 2 * 20_000


def test_realtime_auth_and_url_helpers() -> None:
    assert subprotocol_token(["realtime", "openai-insecure-api-key.sk-abc"]) == "sk-abc"
    assert subprotocol_token(["realtime"]) is None
    assert realtime_url("https://api.openai.com/v1/", "gpt rt") == (
        "wss://api.openai.com/v1/realtime?model=gpt%20rt"
    )
    assert realtime_url("http://127.0.0.1:9/v1", "m") == "ws://127.0.0.1:9/v1/realtime?model=m"


def test_the_responses_flag_of_channels_add_has_three_states() -> None:
    from switchgate.cli.main import _parser

    base = ["channels", "add", "c", "--kind", "openai", "--base-url", "http://x", "--key", "k"]
    base += ["--models", "m"]
    assert _parser().parse_args(base).responses is None  # the default by base URL
    assert _parser().parse_args([*base, "--responses"]).responses is True
    assert _parser().parse_args([*base, "--no-responses"]).responses is False
