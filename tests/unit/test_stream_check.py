"""The passthrough event check: whole lines forwarded, split lines joined, the first
non-JSON `data:` payload stops the stream (relay/stream_check.py)."""

from switchgate.relay.stream_check import EventCheck, stream_end

STREAM = b'event: a\ndata: {"x": 1}\n\ndata: [1, 2]\n\ndata: [DONE]\n\n'


def test_any_split_forwards_the_same_bytes() -> None:
    for cut in range(1, len(STREAM)):
        check = EventCheck()
        out = []
        for piece in (STREAM[:cut], STREAM[cut:]):
            data, fine = check.feed(piece)
            assert fine
            out.append(data)
        out.append(check.rest())
        assert b"".join(out) == STREAM, cut


def test_a_long_line_in_many_chunks_is_forwarded_once_whole() -> None:
    image = b'data: {"type":"image_edit.partial_image","b64_json":"' + b"QUJD" * 5000 + b'"}\n\n'
    stream = b'data: {"a": 1}\n\n' + image + image.replace(b"partial_image", b"completed")
    for size in (1, 7, 4096):
        check = EventCheck(stream_end("images"))
        out = []
        for at in range(0, len(stream), size):
            data, fine = check.feed(stream[at : at + size])
            assert fine
            out.append(data)
            assert not data or data.endswith(b"\n")  # whole lines only
        assert b"".join(out) + check.rest() == stream and check.ended, size
    garbled = image[:-4] + b"\n\n"  # the closing `"}` lost
    check = EventCheck(stream_end("images"))
    verdicts = [check.feed(garbled[at : at + 7]) for at in range(0, len(garbled), 7)]
    assert verdicts[-1] == (b"", False) and all(v == (b"", True) for v in verdicts[:-1])


def test_a_garbled_event_stops_after_the_good_ones() -> None:
    check = EventCheck()
    data, fine = check.feed(b'data: {"ok": 1}\n\ndata: {not json\n\ndata: {"later": 1}\n\n')
    assert not fine and data == b'data: {"ok": 1}\n\n'
    check = EventCheck()
    assert check.feed(b'data: {"trunc')[1]  # incomplete: waits for the rest of the line
    data, fine = check.feed(b"ated\n\n")
    assert not fine and data == b""


def test_one_event_chunks_take_the_short_way_with_the_same_verdicts() -> None:
    check = EventCheck()
    assert check.feed(b'data: {"a": 1}\n\n') == (b'data: {"a": 1}\n\n', True)
    assert check.feed(b"event: ping\n\n") == (b"event: ping\n\n", True)
    assert check.feed(b"data: [DONE]\n\n") == (b"data: [DONE]\n\n", True)
    assert check.feed(b"data: {cut\n\n") == (b"", False)


def _ended(dialect: str, stream: bytes, split: int | None = None) -> bool:
    check = EventCheck(stream_end(dialect))
    pieces = [stream] if split is None else [stream[:split], stream[split:]]
    for piece in pieces:
        assert check.feed(piece)[1]
    check.rest()
    return check.ended


OPENAI_BODY = b'data: {"choices":[{"delta":{"content":"hi"},"finish_reason":null}]}\n\n'
ENDS = {
    "openai": [
        b"data: [DONE]\n\n",
        b'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\n',
        b'data: {"error": {"message": "overloaded"}}\n\n',
    ],
    "anthropic": [
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
        b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error"}}\n\n',
    ],
    "gemini": [
        b'data: {"candidates": [{"content": {}, "finishReason": "STOP"}]}\n\n',
        b'data: {"promptFeedback": {"blockReason": "SAFETY"}}\n\n',
    ],
    "responses": [
        b'event: response.completed\ndata: {"type":"response.completed","response":{}}\n\n',
        b'event: response.incomplete\ndata: {"type":"response.incomplete"}\n\n',
        b'event: error\ndata: {"type":"error","message":"x"}\n\n',
    ],
    # OpenAI's media streams (speech SSE, images, transcriptions)
    "speech": [
        b'data: {"type":"speech.audio.done","usage":{"input_tokens":3}}\n\n',
        b'data: {"error": {"message": "overloaded"}}\n\n',
    ],
    "transcription": [
        b'data: {"type":"transcript.text.done","text":"hi"}\n\n',
        b'event: error\ndata: {"type":"error","error":{"message":"x"}}\n\n',
    ],
    "images": [
        b'event: image_generation.completed\ndata: {"type":"image_generation.completed"}\n\n',
        b'event: image_edit.completed\ndata: {"type": "image_edit.completed"}\n\n',
        b'data: {"error": {"message": "overloaded"}}\n\n',
    ],
}


def test_each_dialects_end_is_seen_at_any_split() -> None:
    for dialect, ends in ENDS.items():
        for end in ends:
            stream = OPENAI_BODY + end
            for split in range(1, len(stream)):
                assert _ended(dialect, stream, split), (dialect, end, split)


def test_a_clean_close_without_the_end_is_not_ended() -> None:
    assert not _ended("openai", OPENAI_BODY * 3)
    assert not _ended("anthropic", b'event: ping\ndata: {"type": "ping"}\n\n')
    assert not _ended("gemini", b'data: {"candidates": [{"content": {"parts": []}}]}\n\n')
    assert not _ended("responses", b'event: response.created\ndata: {"type":"x"}\n\n')
    delta = b'data: {"type":"speech.audio.delta","audio":"AAAA"}\n\n'
    assert not _ended("speech", delta * 3)
    partial = b'event: image_edit.partial_image\ndata: {"type":"image_edit.partial_image"}\n\n'
    assert not _ended("images", partial * 2)
    said = b'data: {"type":"transcript.text.delta",' + (
        b'"delta":"\\"type\\":\\"transcript.text.done\\""}\n\n'
    )
    assert not _ended("transcription", said)
    # the words in generated text are escaped JSON: they never count as the end
    text = b'data: {"choices":[{"delta":{"content":"\\"finish_reason\\":\\"stop\\""}}]}\n\n'
    assert not _ended("openai", text)
    quoted = b'data: {"delta": {"text": "\\"type\\":\\"message_stop\\""}}\n\n'
    assert not _ended("anthropic", quoted)


def test_no_end_to_wait_for_counts_as_ended() -> None:
    assert EventCheck().ended
    assert stream_end("no-such-dialect") is None
