"""Which upstream usage counts are final (issue 18 #1), and bogus counts rejected (#6)."""

from switchgate.core.usage import MAX_REPORTED_TOKENS, reported_count
from switchgate.providers.anthropic_stream import AnthropicUsageMeter
from switchgate.providers.openai_response import usage_from_openai

START = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":'
    b'{"input_tokens":12,"output_tokens":1}}}\n\n'
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    b'"delta":{"type":"text_delta","text":"hello there"}}\n\n'
    b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
)
DELTA = (
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},'
    b'"usage":{"output_tokens":2}}\n\n'
)


def test_anthropic_usage_is_final_only_after_message_delta() -> None:
    meter = AnthropicUsageMeter()
    meter.feed(START)
    usage = meter.usage()
    assert usage is not None and usage.output_tokens == 1 and not meter.usage_final()
    meter.feed(DELTA)
    usage = meter.usage()
    assert usage is not None and usage.output_tokens == 2 and meter.usage_final()


def test_negative_and_absurd_counts_are_rejected() -> None:
    assert reported_count(5, "x") == 5 and reported_count(MAX_REPORTED_TOKENS, "x") > 0
    for bogus in (-1, -100_000, MAX_REPORTED_TOKENS + 1, 10**12, True, 1.5, "7", None):
        assert reported_count(bogus, "x") == 0
    usage = usage_from_openai({"prompt_tokens": 10, "completion_tokens": -100_000})
    assert usage is not None and (usage.input_tokens, usage.output_tokens) == (10, 0)
