"""The passthrough event check: whole lines forwarded, split lines joined, the first
non-JSON `data:` payload stops the stream (relay/stream_check.py)."""

from switchgate.relay.stream_check import EventCheck

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
