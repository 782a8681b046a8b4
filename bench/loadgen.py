"""A closed-loop HTTP/1.1 load generator (raw asyncio protocol, keep-alive connections).

`concurrency` connections each send one pre-encoded request, wait for the whole answer,
and send the next, until the time is up. Per request it records the status, latency
(time to last byte), time to first body byte, the number of SSE `data:` events and the
largest gap between two arrivals of stream data (a stall shows up there).
"""

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

GAP_STALL_S = 1.0  # a stream that goes quiet this long counts as stalled


@dataclass(slots=True)
class Sample:
    started: float
    done: float
    status: int
    ttfb: float  # seconds from send to the first body byte
    events: int
    max_gap: float
    error: str | None = None


class InFlight:
    """How many requests are open at once (sent, answer not complete), and the peak."""

    __slots__ = ("now", "peak")

    def __init__(self) -> None:
        self.now = 0
        self.peak = 0

    def up(self) -> None:
        self.now += 1
        if self.now > self.peak:
            self.peak = self.now


class Conn(asyncio.Protocol):
    """One keep-alive client connection; `request()` sends and resolves with a Sample."""

    def __init__(self, in_flight: InFlight | None = None) -> None:
        self.in_flight = in_flight or InFlight()
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.future: asyncio.Future[Sample] | None = None
        self.buf = bytearray()
        self._reset()

    def _reset(self) -> None:
        self.in_head = True
        self.status = 0
        self.length = -1  # -1: chunked
        self.chunk_left = 0  # bytes of the current chunk's data still to come (+2 for CRLF)
        self.body = bytearray()
        self.t0 = self.t_first = self.t_last = 0.0
        self.max_gap = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._fail(f"connection lost ({exc!r})" if exc else "connection closed")

    def _fail(self, error: str) -> None:
        if self.future is not None and not self.future.done():
            self.in_flight.now -= 1
            now = time.perf_counter()
            self.future.set_result(Sample(self.t0, now, self.status, 0.0, 0, 0.0, error))
        self.future = None

    def request(self, data: bytes) -> asyncio.Future[Sample]:
        assert self.transport is not None and self.future is None
        self._reset()
        self.buf.clear()
        self.future = asyncio.get_running_loop().create_future()
        self.t0 = time.perf_counter()
        self.in_flight.up()
        self.transport.write(data)
        return self.future

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        self.buf += data
        if self.in_head:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buf[:end]).lower()
            del self.buf[: end + 4]
            self.in_head = False
            self.status = int(head[9:12])
            at = head.find(b"\ncontent-length:")
            if at >= 0:
                eol = head.find(b"\r", at)
                self.length = int(head[at + 16 : eol if eol >= 0 else len(head)])
            elif b"transfer-encoding: chunked" not in head:
                self.length = 0
        if not self.buf and self.length != 0:
            return
        if self.t_first == 0.0:
            self.t_first = now
        elif now - self.t_last > self.max_gap:
            self.max_gap = now - self.t_last
        self.t_last = now
        if self.length >= 0:
            self._take_fixed()
        else:
            self._take_chunked()

    def _take_fixed(self) -> None:
        if len(self.buf) >= self.length:
            self.body += self.buf[: self.length]
            del self.buf[: self.length]
            self._complete()

    def _take_chunked(self) -> None:
        buf = self.buf
        pos, size_buf = 0, len(buf)
        while pos < size_buf:
            if self.chunk_left:
                take = min(self.chunk_left, size_buf - pos)
                self.body += buf[pos : pos + take]
                pos += take
                self.chunk_left -= take
                continue
            eol = buf.find(b"\r\n", pos)
            if eol < 0:
                break
            if eol == pos:  # the CRLF after a chunk's data
                pos += 2
                continue
            size = int(bytes(buf[pos:eol]).split(b";")[0], 16)
            if size == 0:
                if buf.find(b"\r\n", eol + 2) < 0:
                    break
                del buf[:]
                self._complete()
                return
            pos = eol + 2
            self.chunk_left = size
        del buf[:pos]

    def _complete(self) -> None:
        future, self.future = self.future, None
        self.in_head = True
        if future is None or future.done():
            return
        self.in_flight.now -= 1
        body = bytes(self.body)
        events = body.count(b"data:")
        error = None if 200 <= self.status < 300 else f"HTTP {self.status}: {body[:200]!r}"
        future.set_result(
            Sample(
                self.t0,
                time.perf_counter(),
                self.status,
                self.t_first - self.t0 if self.t_first else 0.0,
                events,
                self.max_gap,
                error,
            )
        )


@dataclass
class Window:
    """What one run measured (raw samples plus the measurement window)."""

    samples: list[Sample] = field(default_factory=list)
    start: float = 0.0
    end: float = 0.0
    marks: dict[str, Any] = field(default_factory=dict)


async def _connect(host: str, port: int, in_flight: InFlight) -> Conn:
    loop = asyncio.get_running_loop()
    _, conn = await loop.create_connection(lambda: Conn(in_flight), host, port)
    return conn


async def run_load(
    host: str,
    port: int,
    request: bytes,
    *,
    concurrency: int,
    duration: float,
    warmup: float,
    on_window: Callable[[str], None] | None = None,
    timeout: float = 60.0,
    drain: float = 5.0,
) -> Window:
    """Closed loop for warmup + duration seconds (statistics use the requests that
    started inside the window; throughput counts those that finished inside it).
    `on_window("start"|"end")` runs at the window's edges (to read
    the server's CPU counters at exactly those moments)."""
    window = Window()
    loop = asyncio.get_running_loop()
    conns: set[Conn] = set()
    in_flight = InFlight()
    t_begin = time.perf_counter()
    window.start = t_begin + warmup
    window.end = window.start + duration

    async def edges() -> None:
        await asyncio.sleep(max(0.0, window.start - time.perf_counter()))
        if on_window:
            on_window("start")
        await asyncio.sleep(max(0.0, window.end - time.perf_counter()))
        if on_window:
            on_window("end")

    async def worker(index: int) -> None:
        conn: Conn | None = None
        # Spread the connection start over ~100 ms so 1,000 streams don't start in one tick.
        await asyncio.sleep((index % 100) / 1000 if concurrency > 100 else 0)
        while time.perf_counter() < window.end:
            if conn is None or conn.closed:
                try:
                    conn = await _connect(host, port, in_flight)
                    conns.add(conn)
                except OSError as exc:
                    now = time.perf_counter()
                    window.samples.append(Sample(now, now, 0, 0, 0, 0, f"connect: {exc}"))
                    await asyncio.sleep(0.05)
                    continue
            try:
                sample = await asyncio.wait_for(conn.request(request), timeout)
            except TimeoutError:
                now = time.perf_counter()
                sample = Sample(now - timeout, now, 0, 0, 0, 0, "timeout")
                assert conn.transport is not None
                conn.transport.abort()
                conn = None
            window.samples.append(sample)
            if sample.error and conn is not None and not conn.closed and sample.status == 0:
                conn = None
        if conn is not None and conn.transport is not None:
            conn.transport.close()

    edge_task = loop.create_task(edges())
    tasks = [loop.create_task(worker(i)) for i in range(concurrency)]
    await edge_task
    # Requests still in flight when the window closes get `drain` seconds to finish; a
    # server that is far behind is not waited for (those requests count as unfinished).
    _, pending = await asyncio.wait(tasks, timeout=drain)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    window.marks["unfinished"] = len(pending)
    window.marks["in_flight_peak"] = in_flight.peak
    for conn in list(conns):
        if conn.transport is not None:
            conn.transport.abort()
    return window


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def dist_ms(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(_pct(values, 0.50) * 1000, 3),
        "p90": round(_pct(values, 0.90) * 1000, 3),
        "p99": round(_pct(values, 0.99) * 1000, 3),
        "max": round(max(values) * 1000, 3) if values else 0.0,
        "mean": round(sum(values) / len(values) * 1000, 3) if values else 0.0,
    }


def summarize(window: Window, *, stream: bool, expect_events: int | None) -> dict[str, Any]:
    samples = [s for s in window.samples if s.started >= window.start]
    ok = [s for s in samples if s.error is None]
    errors = [s for s in samples if s.error is not None]
    completed_in_window = sum(
        1 for s in window.samples if s.error is None and window.start <= s.done <= window.end
    )
    duration = window.end - window.start
    out: dict[str, Any] = {
        "requests": len(samples),
        "ok": len(ok),
        "errors": len(errors),
        "error_samples": sorted({e.error or "" for e in errors})[:5],
        "rps": round(completed_in_window / duration, 1) if duration > 0 else 0.0,
        "unfinished_at_end": window.marks.get("unfinished", 0),
        "latency_ms": dist_ms([s.done - s.started for s in ok]),
    }
    # Little's law: how many requests were really in flight on average (a saturated load
    # generator keeps fewer than `concurrency` going).
    out["in_flight_mean"] = round(out["rps"] * out["latency_ms"]["mean"] / 1000, 1)
    out["in_flight_peak"] = window.marks.get("in_flight_peak", 0)
    if stream:
        out["ttfb_ms"] = dist_ms([s.ttfb for s in ok])
        out["ttlb_ms"] = out["latency_ms"]
        gaps = [s.max_gap for s in ok]
        out["max_gap_ms"] = dist_ms(gaps)
        out["stalled"] = sum(1 for g in gaps if g >= GAP_STALL_S)
        if expect_events is not None:
            out["events_expected"] = expect_events
            out["events_short"] = sum(1 for s in ok if s.events != expect_events)
    return out
