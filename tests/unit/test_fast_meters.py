"""The block-splitting passthrough meters read exactly what the event-by-event ones did.

The meters as they were before (every event parsed and decoded as it arrives) are kept in
`reference_meters.py` as the reference. Realistic streams in every line-ending style,
split at random byte boundaries, go through both (seeded `random`, so failures repeat).
"""

import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from switchgate import jsonutil
from switchgate.core.usage import Usage
from switchgate.providers.anthropic_stream import (
    AnthropicUsageMeter,
)
from switchgate.providers.gemini_stream import GeminiUsageMeter
from switchgate.providers.meters import RETAIN_LIMIT, usage_key_pattern
from switchgate.providers.openai_media import (
    StreamUsageMeter,
)
from switchgate.providers.openai_stream import OpenAIUsageMeter
from switchgate.wire.sse import SSEEvent, SSEParser
from switchgate.wire.sse_blocks import SSEBlockSplitter, last_event_end, parse_block
from tests.unit.reference_meters import (
    LineSSEParser,
    RefAnthropicMeter,
    RefGeminiMeter,
    RefOpenAIMeter,
    RefStreamMeter,
)

# ------------------------------------------------------------ stream generators

_WORDS = ["Hello", " wor", "ld", " é", "😀", "\\n", " the", ' "quoted"', " usage", ":", "{"]


def _words(rng: random.Random, most: int = 4) -> str:
    return "".join(rng.choice(_WORDS) for _ in range(rng.randint(0, most)))


def _ending(rng: random.Random, style: str) -> str:
    return rng.choice(["\n", "\r\n", "\r"]) if style == "mixed" else style


def _frame(rng: random.Random, events: list[tuple[str | None, str]], style: str) -> bytes:
    """SSE text for (event name, data) pairs; data may hold newlines (multi-line data)."""
    out: list[str] = []
    for name, data in events:
        if rng.random() < 0.15:
            out.append(": keep-alive" + _ending(rng, style))
        if name is not None:
            out.append(f"event: {name}" + _ending(rng, style))
        for line in data.split("\n"):
            out.append(rng.choice(["data: ", "data: ", "data:"]) + line + _ending(rng, style))
        out.append(_ending(rng, style))
    return "".join(out).encode()


def _multiline(rng: random.Random, data: str) -> str:
    """Spread JSON over several `data:` lines (breaks only where JSON whitespace may go)."""
    if rng.random() < 0.8:
        return data
    for token in ('":', ",", ":{", "[", "{"):
        if rng.random() < 0.5:
            data = data.replace(token, token + "\n" if token != ":{" else ":\n{")
    return data


def _openai_events(rng: random.Random) -> list[tuple[str | None, str]]:
    nulls = rng.random() < 0.6  # stream_options.include_usage: `"usage":null` everywhere
    every = rng.random() < 0.1  # some servers report usage in every chunk
    events: list[tuple[str | None, str]] = []
    for n in range(rng.randint(0, 12)):
        delta: dict[str, Any] = {}
        kind = rng.random()
        if kind < 0.5:
            delta["content"] = _words(rng)
        elif kind < 0.65:
            delta["reasoning_content"] = _words(rng)
        elif kind < 0.75:
            delta["refusal"] = _words(rng)
        elif kind < 0.95:
            function = {"arguments": '{"city": "Par'}
            if rng.random() < 0.5:
                function["name"] = "get_weather"
            delta["tool_calls"] = [{"index": rng.randint(0, 1), "function": function}]
        else:
            delta["content"] = None
        chunk: dict[str, Any] = {"id": "c", "choices": [{"index": 0, "delta": delta}]}
        if nulls:
            chunk["usage"] = None
        if every:
            chunk["usage"] = {"prompt_tokens": 9, "completion_tokens": n}
        text = jsonutil.dumps_str(chunk)
        if nulls and rng.random() < 0.3:
            text = text.replace('"usage":null', '"usage" :  null')
        events.append((None, _multiline(rng, text)))
    if rng.random() < 0.1:
        events.append((None, "not json"))
    if rng.random() < 0.7:
        usage = {
            "prompt_tokens": rng.randint(0, 50),
            "completion_tokens": rng.randint(0, 50),
            "prompt_tokens_details": {"cached_tokens": rng.randint(0, 5)},
        }
        final = jsonutil.dumps_str({"id": "c", "choices": [], "usage": usage})
        final = rng.choice([final, final.replace('"usage":', '"usage": '), final])
        events.append((None, _multiline(rng, final)))
    if rng.random() < 0.8:
        events.append((None, "[DONE]"))
    return events


def _anthropic_events(rng: random.Random) -> list[tuple[str | None, str]]:
    events: list[tuple[str | None, Any]] = []
    usage = {"input_tokens": rng.randint(0, 90), "output_tokens": 1}
    if rng.random() < 0.5:
        usage["cache_read_input_tokens"] = rng.randint(0, 9)
        usage["cache_creation_input_tokens"] = rng.randint(0, 9)
    events.append(("message_start", {"type": "message_start", "message": {"usage": usage}}))
    events.append(("ping", {"type": "ping"}))
    for index in range(rng.randint(0, 3)):
        kind = rng.choice(["text", "thinking", "tool_use"])
        if kind == "tool_use":
            block: dict[str, Any] = {"type": "tool_use", "id": "t", "name": "f", "input": {}}
        else:
            block = {"type": kind, kind: ""}
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, **block})
            if rng.random() < 0.05  # malformed: no content_block
            else (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": block},
            )
        )
        for _ in range(rng.randint(0, 5)):
            if kind == "tool_use":
                delta = {"type": "input_json_delta", "partial_json": '{"a": "usage"'}
            else:
                delta = {"type": f"{kind}_delta", kind: _words(rng)}
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        if kind == "thinking":
            delta = {"type": "signature_delta", "signature": "c2ln"}
            events.append(("content_block_delta", {"type": "content_block_delta", "delta": delta}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    if rng.random() < 0.8:
        out: dict[str, Any] = {"output_tokens": rng.randint(0, 99)}
        if rng.random() < 0.3:
            out["output_tokens_details"] = {"thinking_tokens": rng.randint(0, 9)}
        events.append(("message_delta", {"type": "message_delta", "delta": {}, "usage": out}))
    if rng.random() < 0.8:
        events.append(("message_stop", {"type": "message_stop"}))
    return [
        (
            name if rng.random() < 0.9 else None,
            _multiline(rng, jsonutil.dumps_str(data)),
        )
        for name, data in events
    ]


def _gemini_events(rng: random.Random) -> list[tuple[str | None, str]]:
    every = rng.random() < 0.7
    key = "usage_metadata" if rng.random() < 0.2 else "usageMetadata"
    events: list[tuple[str | None, str]] = []
    count = rng.randint(0, 8)
    for n in range(count):
        parts: list[dict[str, Any]] = []
        for _ in range(rng.randint(0, 2)):
            kind = rng.random()
            if kind < 0.6:
                parts.append({"text": _words(rng)})
            elif kind < 0.8:
                parts.append({"text": _words(rng), "thought": True})
            else:
                parts.append({"functionCall": {"name": "f", "args": {"usage": {"x": n}}}})
        chunk: dict[str, Any] = {"candidates": [{"content": {"role": "model", "parts": parts}}]}
        if every or n == count - 1:
            chunk[key] = {
                "promptTokenCount": 7,
                "candidatesTokenCount": n,
                "thoughtsTokenCount": rng.randint(0, 3),
            }
        elif rng.random() < 0.3:
            chunk[key] = None
        events.append((None, _multiline(rng, jsonutil.dumps_str(chunk))))
    return events


def _media_events(rng: random.Random) -> list[tuple[str | None, str]]:
    events: list[tuple[str | None, str]] = []
    if rng.random() < 0.5:  # legacy completions
        for _ in range(rng.randint(0, 6)):
            chunk = {"choices": [{"index": 0, "text": _words(rng)}], "usage": None}
            events.append((None, jsonutil.dumps_str(chunk)))
        usage: dict[str, Any] = {"prompt_tokens": 3, "completion_tokens": rng.randint(0, 9)}
        events.append((None, jsonutil.dumps_str({"choices": [], "usage": usage})))
        events.append((None, "[DONE]"))
    else:  # transcription
        for _ in range(rng.randint(0, 6)):
            delta = {"type": "transcript.text.delta", "delta": _words(rng)}
            events.append((None, jsonutil.dumps_str(delta)))
        usage = rng.choice(
            [
                {"type": "duration", "seconds": 3.5},
                {"type": "tokens", "input_tokens": 4, "output_tokens": 2},
            ]
        )
        done = {"type": "transcript.text.done", "text": "x", "usage": usage}
        events.append((None, _multiline(rng, jsonutil.dumps_str(done))))
    return events


_STYLES = ["\n", "\r\n", "\r", "mixed"]


def _stream(rng: random.Random, events: Callable[[random.Random], list[Any]]) -> bytes:
    data = _frame(rng, events(rng), rng.choice(_STYLES))
    if rng.random() < 0.15:  # cut short, maybe inside an event or between \r and \n
        data = data[: rng.randint(0, len(data))]
    return data


def _split(data: bytes, rng: random.Random) -> Iterator[bytes]:
    mode = rng.random()
    start = 0
    while start < len(data):
        size = rng.randint(1, 3) if mode < 0.3 else rng.randint(1, 80)
        yield data[start : start + size]
        start += size


# ------------------------------------------------------------ the splitter itself


def _splitter_events(chunks: list[bytes]) -> list[SSEEvent]:
    splitter = SSEBlockSplitter()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events.extend(parse_block(splitter.feed(chunk)))
    return events


def _parser_events(chunks: list[bytes]) -> list[SSEEvent]:
    parser = LineSSEParser()
    return [event for chunk in chunks for event in parser.feed(chunk)]


def test_sse_parser_matches_the_line_parser_with_flush() -> None:
    for seed in range(3000):
        rng = random.Random(seed)
        data = b"".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 40)))
        chunks = list(_split(data, rng))
        fast, line = SSEParser(), LineSSEParser()
        got = [e for c in chunks for e in fast.feed(c)] + fast.flush()
        want = [e for c in chunks for e in line.feed(c)] + line.flush()
        assert got == want, (seed, data)


_ALPHABET = [
    b"\n",
    b"\r",
    b"\r\n",
    b"data: ",
    b"data:",
    b"event: x",
    b": c",
    b"id: 1",
    b"{}",
    b"\xe2\x82",
    b"\xc3\xa9",
    b"\xff",
    b"abc",
]


def test_splitter_matches_the_line_parser_on_random_bytes() -> None:
    for seed in range(3000):
        rng = random.Random(seed)
        data = b"".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 40)))
        expected = _parser_events([data])
        assert _splitter_events([data]) == expected, (seed, data)
        cuts = [data[i : i + 1] for i in range(len(data))]
        assert _splitter_events(cuts) == _parser_events(cuts) == expected, (seed, data)
        chunks = list(_split(data, rng))
        assert _splitter_events(chunks) == expected, (seed, data)


@pytest.mark.parametrize(
    ("buffer", "end"),
    [
        (b"data: a\n\n", 9),
        (b"data: a\r\rdata: b", 9),
        (b"data: a\r\n\r\n", 11),
        (b"data: a\n\r\n", 10),
        (b"data: a\r\n\n", 10),
        (b"data: a\r\r\n", 10),
        (b"data: a\n\rx", 9),
        (b"data: a\n\r", -1),  # the \r may be half of \r\n: wait for the next byte
        (b"data: a\r\r", -1),
        (b"data: a\r\n", -1),
        (b"data: a\n", -1),
        (b"data: a\n\ndata: b\n\ndata: c", 18),
        (b"", -1),
    ],
)
def test_last_event_end(buffer: bytes, end: int) -> None:
    assert last_event_end(buffer) == end


def test_splitter_hands_back_whole_events_and_keeps_the_tail() -> None:
    splitter = SSEBlockSplitter()
    assert splitter.feed(b"data: a\n") == b""
    assert splitter.feed(b"\ndata: b\r") == b"data: a\n\n"
    assert splitter.pending() == len(b"data: b\r")
    assert splitter.feed(b"\r") == b""  # data: b\r\r -- the last \r may start \r\n
    assert splitter.feed(b"\ndata: c\n\n") == b"data: b\r\r\ndata: c\n\n"
    assert splitter.pending() == 0


def test_usage_pattern() -> None:
    pattern = usage_key_pattern("usage")
    hits = [b'"usage":{', b'"usage" : \t{"a"', b'"usage":\n', b'"usage"\r\n', b'"usage":1']
    misses = [b'"usage":null', b'"usage" :  null,', b'\\"usage\\": {', b'"usage_x":{', b"usage:{"]
    assert all(pattern.search(hit) for hit in hits)
    assert not any(pattern.search(miss) for miss in misses)


# ------------------------------------------------------------ new meters == reference


_CASES: list[tuple[str, Callable[[random.Random], list[Any]], Any, Any]] = [
    ("openai", _openai_events, OpenAIUsageMeter, RefOpenAIMeter),
    ("anthropic", _anthropic_events, AnthropicUsageMeter, RefAnthropicMeter),
    ("gemini", _gemini_events, GeminiUsageMeter, RefGeminiMeter),
]


@pytest.mark.parametrize(
    ("name", "events", "fast", "reference"), _CASES, ids=[c[0] for c in _CASES]
)
def test_meter_matches_the_reference(name: str, events: Any, fast: Any, reference: Any) -> None:
    for seed in range(400):
        rng = random.Random(f"{name}-{seed}")
        data = _stream(rng, events)
        new, old = fast(), reference()
        for chunk in _split(data, rng):
            new.feed(chunk)
            old.feed(chunk)
            if rng.random() < 0.03:  # asking early changes nothing
                assert new.usage() == old.usage(), (seed, data)
            if rng.random() < 0.01:
                assert new.output_text() == old.output_text(), (seed, data)
        assert new.usage() == old.usage(), (seed, data)
        assert new.output_text() == old.output_text(), (seed, data)
        assert new.usage() == old.usage()


def test_meters_found_something() -> None:
    """The generators above do produce usage and text (the comparison is not vacuous)."""
    for name, events, fast, _ in _CASES:
        found = [0, 0]
        for seed in range(50):
            rng = random.Random(f"{name}-x{seed}")
            meter = fast()
            meter.feed(_frame(rng, events(rng), "\r\n"))
            found[0] += meter.usage() is not None
            found[1] += bool(meter.output_text())
        assert found[0] > 10 and found[1] > 10, name


def test_media_stream_meter_matches_the_reference() -> None:
    for seed in range(300):
        rng = random.Random(f"media-{seed}")
        data = _stream(rng, _media_events)
        new, old = StreamUsageMeter(), RefStreamMeter()
        for chunk in _split(data, rng):
            new.feed(chunk)
            old.feed(chunk)
            assert (new.usage, new.raw_usage) == (old.usage, old.raw_usage)
        assert new.text() == old.text(), (seed, data)
        assert new.transcript() == old.transcript()


# ------------------------------------------------------------ bounded memory


def _content_chunk(text: str, usage: dict[str, int] | None = None) -> bytes:
    chunk: dict[str, Any] = {"choices": [{"index": 0, "delta": {"content": text}}]}
    chunk["usage"] = usage
    return b"data: " + jsonutil.dumps(chunk) + b"\n\n"


@pytest.mark.parametrize("usage_everywhere", [False, True])
def test_retained_bytes_stay_bounded(usage_everywhere: bool) -> None:
    new, old = OpenAIUsageMeter(), RefOpenAIMeter()
    for n in range(6000):  # ~600 KiB of events
        usage = {"prompt_tokens": 5, "completion_tokens": n} if usage_everywhere else None
        chunk = _content_chunk(f"word {n} " * 5, usage)
        new.feed(chunk)
        old.feed(chunk)
        assert new.retained_bytes <= RETAIN_LIMIT
    assert new.eager
    final = {"prompt_tokens": 5, "completion_tokens": 6000}
    for meter in (new, old):
        meter.feed(_content_chunk("end", final) + b"data: [DONE]\n\n")
    assert new.usage() == old.usage() == Usage(5, 6000)
    assert new.output_text() == old.output_text()
    assert new.retained_bytes == 0


def test_small_streams_are_only_kept_until_text_is_asked_for() -> None:
    meter = OpenAIUsageMeter()
    data = _content_chunk("hi") + _content_chunk("", {"prompt_tokens": 1}) + b"data: [DONE]\n\n"
    meter.feed(data)
    assert not meter.eager and meter.retained_bytes == len(data)
    assert meter.usage() == Usage(1, 0)
    assert meter.output_text() == "hi" and meter.retained_bytes == 0
    meter.feed(_content_chunk(" there"))
    assert meter.output_text() == "hi there"


def test_large_single_event_in_small_chunks() -> None:
    """A huge event arriving in many small chunks is held as chunks (not re-copied)."""
    new, old = GeminiUsageMeter(), RefGeminiMeter()
    text = "x" * 300_000
    data = (
        b"data: "
        + jsonutil.dumps({"candidates": [{"content": {"parts": [{"text": text}]}}]})
        + b"\r\n\r\n"
        + b'data: {"usageMetadata": {"promptTokenCount": 2, "candidatesTokenCount": 3}}\r\n\r\n'
    )
    for i in range(0, len(data), 1000):
        new.feed(data[i : i + 1000])
        old.feed(data[i : i + 1000])
    assert new.eager and new.retained_bytes == 0
    assert new.usage() == old.usage() == Usage(2, 3)
    assert new.output_text() == old.output_text() == text
