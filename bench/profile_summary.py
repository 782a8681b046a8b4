"""Where a worker's time goes, from py-spy's raw output (`bench.run --profile DIR`).

    python -m bench.profile_summary /tmp/prof/switchgate-pass-whole-l0-c64.txt [...]

Each sample is one stack of one thread. Samples of a thread that was only waiting (the
SQLite driver's thread waiting for work) are left out; the percentages are of the busy
samples. Threads other than the event loop's (the SQLite driver's, mainly) are counted
apart. A sample of the event-loop
thread is charged to the part of the code that owns its innermost frame: time inside a C
call (a socket send, orjson, httptools) lands on the Python function that called it, so
"upstream client" includes the system calls it makes. Prints one Markdown table, a column
per file, each cell the percentage of that file's samples.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections import Counter
from pathlib import Path

# (part, pattern on a frame's file path): the first match from the innermost frame out
# wins, so a switchgate frame called from uvicorn is charged to switchgate.
PARTS: tuple[tuple[str, str], ...] = (
    ("upstream client (own HTTP/1.1 pool)", r"switchgate/relay/(http1|http_pool|upstream)\.py"),
    ("usage meters, SSE framing", r"switchgate/(providers/meters|wire/sse_blocks|wire/sse)\.py"),
    (
        "dialects and providers (parse, translate, usage)",
        r"switchgate/(dialects|providers|core|wire)/",
    ),
    ("policy: auth, limits, holds, billing", r"switchgate/(accounts|billing|ratelimit|routing)/"),
    ("metrics", r"switchgate/observability/"),
    ("relay (routing the call, streaming)", r"switchgate/relay/"),
    ("rest of switchgate", r"switchgate/"),
    ("database layer on the loop (SQLAlchemy, aiosqlite)", r"sqlalchemy/|aiosqlite/"),
    ("HTTP server (uvicorn, starlette; includes its socket writes)", r"uvicorn/|starlette/"),
    ("event loop (uvloop: polling, socket reads) and asyncio", r"asyncio/|uvloop/"),
)
OTHER_THREADS = "other threads, working (the SQLite driver's thread)"
UNMATCHED = "other (interpreter, libraries)"
IDLE = "idle"
_FRAME_FILE = re.compile(r"\(([^()]*?)(?::\d+)?\)$")


def _files(stack: str) -> list[str]:
    """The file of each frame of a py-spy raw stack, outermost first."""
    out = []
    for frame in stack.split(";"):
        match = _FRAME_FILE.search(frame.strip())
        out.append(match.group(1) if match else frame)
    return out


def _aiosqlite_wait() -> str:
    """The frame of aiosqlite's thread while it waits for work (`tx.get()`, a C queue,
    so no Python frame below it): py-spy does not recognise that wait as idle."""
    try:
        import aiosqlite.core
    except ImportError:
        return "-"
    lines, first = inspect.getsourcelines(aiosqlite.core._connection_worker_thread)
    at = next((first + i for i, line in enumerate(lines) if "tx.get()" in line), 0)
    return f"_connection_worker_thread (aiosqlite/core.py:{at})"


IDLE_FRAMES = frozenset({_aiosqlite_wait()})


def classify(stack: str) -> str:
    """The part a sample belongs to; IDLE for a thread that was only waiting."""
    if stack.rsplit(";", 1)[-1].strip() in IDLE_FRAMES:
        return IDLE
    files = _files(stack)
    if any("threading.py" in f for f in files[:3]):
        return OTHER_THREADS
    for path in reversed(files):
        for part, pattern in PARTS:
            if re.search(pattern, path):
                return part
    return UNMATCHED


def summarise(text: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for line in text.splitlines():
        stack, _, number = line.rpartition(" ")
        if stack and number.isdigit():
            counts[classify(stack)] += int(number)
    return counts


def markdown(results: dict[str, Counter[str]]) -> str:
    names = list(results)
    header = "| part of the worker | " + " | ".join(names) + " |"
    lines = [header, "|---|" + "---:|" * len(names)]
    order = [part for part, _ in PARTS] + [OTHER_THREADS, UNMATCHED]
    for part in order:
        cells = []
        for name in names:
            total = sum(n for part, n in results[name].items() if part != IDLE) or 1
            cells.append(f"{100 * results[name][part] / total:.0f}%")
        lines.append(f"| {part} | " + " | ".join(cells) + " |")
    busy = [sum(n for part, n in results[name].items() if part != IDLE) for name in names]
    lines.append("| samples (busy) | " + " | ".join(str(n) for n in busy) + " |")
    return "\n".join(lines)


def main() -> int:
    results = {
        Path(p).stem.removeprefix("switchgate-"): summarise(Path(p).read_text())
        for p in sys.argv[1:]
    }
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
