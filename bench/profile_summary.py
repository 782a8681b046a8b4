"""Where a worker's time goes, from py-spy's raw output (`bench.run --profile DIR`).

    python -m bench.profile_summary /tmp/prof/switchgate-pass-whole-l0-c64.txt [...]

Each sample is one stack of one thread. Samples of threads other than the event loop's
(the SQLite driver's worker thread, mainly) are counted apart. A sample of the event-loop
thread is charged to the part of the code that owns its innermost frame: time inside a C
call (a socket send, orjson, httptools) lands on the Python function that called it, so
"upstream client" includes the system calls it makes. Prints one Markdown table, a column
per file, each cell the percentage of that file's samples.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

# (part, pattern on a frame's file path): the first match from the innermost frame out
# wins, so a switchgate frame called from uvicorn is charged to switchgate.
PARTS: tuple[tuple[str, str], ...] = (
    ("upstream client (own HTTP/1.1 pool)", r"switchgate/relay/(http1|http_pool|upstream)\.py"),
    ("usage meters, SSE framing", r"switchgate/providers/(meters|sse_blocks|sse)\.py"),
    ("translation (dialects, providers)", r"switchgate/(dialects|providers|core)/"),
    ("policy: auth, limits, holds, billing", r"switchgate/(accounts|billing|ratelimit|routing)/"),
    ("metrics", r"switchgate/observability/"),
    ("relay (routing the call, streaming)", r"switchgate/relay/"),
    ("rest of switchgate", r"switchgate/"),
    ("database layer on the loop (SQLAlchemy, aiosqlite)", r"sqlalchemy/|aiosqlite/"),
    ("HTTP server (uvicorn, starlette)", r"uvicorn/|starlette/"),
    ("event loop and asyncio", r"asyncio/|uvloop/"),
)
OTHER_THREADS = "other threads (the SQLite driver's thread)"
UNMATCHED = "other (interpreter, libraries)"
_FRAME_FILE = re.compile(r"\(([^()]*?)(?::\d+)?\)$")


def _files(stack: str) -> list[str]:
    """The file of each frame of a py-spy raw stack, outermost first."""
    out = []
    for frame in stack.split(";"):
        match = _FRAME_FILE.search(frame.strip())
        out.append(match.group(1) if match else frame)
    return out


def classify(stack: str) -> str:
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
            total = sum(results[name].values()) or 1
            cells.append(f"{100 * results[name][part] / total:.0f}%")
        lines.append(f"| {part} | " + " | ".join(cells) + " |")
    lines.append("| samples | " + " | ".join(str(sum(results[n].values())) for n in names) + " |")
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
