"""bench.profile_summary charges each py-spy sample to the part of the code that owns it."""

from __future__ import annotations

from bench.profile_summary import (
    IDLE,
    IDLE_FRAMES,
    OTHER_THREADS,
    UNMATCHED,
    classify,
    markdown,
    summarise,
)

LOOP = "<module> (switchgate/__main__.py:3);run (asyncio/runners.py:118)"
SEND = "write (switchgate/relay/http1.py:210)"


def test_innermost_switchgate_frame_wins_over_the_server_that_called_it() -> None:
    stack = f"{LOOP};run_asgi (uvicorn/protocols/http/httptools_impl.py:401);{SEND}"
    assert classify(stack) == "upstream client (own HTTP/1.1 pool)"


def test_server_frames_without_switchgate_inside_are_the_server() -> None:
    stack = f"{LOOP};data_received (uvicorn/protocols/http/httptools_impl.py:120)"
    assert classify(stack).startswith("HTTP server (uvicorn, starlette")


def test_threads_are_counted_apart() -> None:
    stack = (
        "_bootstrap (threading.py:1002);_bootstrap_inner (threading.py:1045);"
        "run (aiosqlite/core.py:100)"
    )
    assert classify(stack) == OTHER_THREADS


def test_summary_weights_stacks_by_their_sample_count() -> None:
    text = "\n".join(
        [
            f"{LOOP};feed (switchgate/providers/meters.py:40) 3",
            f"{LOOP};hold (switchgate/billing/leases.py:80) 1",
            "some_c_function 1",
        ]
    )
    counts = summarise(text)
    assert counts["usage meters, SSE framing"] == 3
    assert counts["policy: auth, limits, holds, billing"] == 1
    assert counts[UNMATCHED] == 1
    table = markdown({"whole": counts})
    assert "| usage meters, SSE framing | 60% |" in table
    assert "| samples (busy) | 5 |" in table


def test_the_database_thread_waiting_for_work_is_idle_and_left_out() -> None:
    (wait,) = IDLE_FRAMES
    assert wait.startswith("_connection_worker_thread (aiosqlite/core.py:")
    waiting = f"_bootstrap (threading.py:1002);run (threading.py:982);{wait}"
    assert classify(waiting) == IDLE
    counts = summarise(f"{waiting} 9\n{LOOP};{SEND} 1")
    assert "| upstream client (own HTTP/1.1 pool) | 100% |" in markdown({"x": counts})
