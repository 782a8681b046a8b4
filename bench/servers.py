"""HTTP-server evidence: the CPU a server itself spends per request, measured with a
trivial ASGI app (a fixed 200-byte JSON answer) under uvicorn (uvloop + httptools, as
`switchgate serve` runs it) and under granian, each pinned to its own CPU.

    .venv/bin/python -m bench.servers
"""

import json
import sys
import time
from pathlib import Path
from typing import Any

from bench.loadgen import run_load, summarize
from bench.procs import Proc, free_port, pin_self, spawn
from bench.run import _run
from bench.targets import ROOT

BODY = json.dumps({"id": "x", "object": "chat.completion", "text": "y" * 150}).encode()


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The trivial ASGI app: read the body, answer a fixed JSON document."""
    if scope["type"] != "http":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    more = True
    while more:
        message = await receive()
        more = message.get("more_body", False)
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(BODY))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": BODY})


def _measure(proc: Proc, port: int, request: bytes, concurrency: int) -> dict[str, Any]:
    cpu: dict[str, float] = {}

    def edge(name: str) -> None:
        cpu[name] = proc.cpu_seconds()

    window = _run(
        lambda: run_load(
            "127.0.0.1",
            port,
            request,
            concurrency=concurrency,
            duration=3.0,
            warmup=0.5,
            on_window=edge,
        )
    )
    summary = summarize(window, stream=False, expect_events=None)
    done = summary["rps"] * (window.end - window.start)
    summary["cpu_ms_per_request"] = round((cpu["end"] - cpu["start"]) * 1000 / done, 4)
    return {k: summary[k] for k in ("rps", "errors", "latency_ms", "cpu_ms_per_request")}


def main() -> int:
    pin_self({0})
    work = ROOT / "bench" / "results" / "tmp" / "servers"
    work.mkdir(parents=True, exist_ok=True)
    bindir = Path(sys.executable).parent
    results: dict[str, Any] = {}
    request = b"POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
    request += b"content-length: 2\r\n\r\n{}"
    for server in ("uvicorn", "granian"):
        port = free_port()
        common = ["--port", str(port), "--log-level", "warning"]
        if server == "uvicorn":
            args = [str(bindir / "uvicorn"), "bench.servers:app", "--loop", "uvloop"]
            args += ["--http", "httptools", "--no-access-log", *common]
        else:
            args = [str(bindir / "granian"), "--interface", "asgi", "--loop", "uvloop"]
            args += ["--http", "1", "--no-access-log", *common, "bench.servers:app"]
        proc = spawn(server, args, env={}, cpus={1}, log_path=work / f"{server}.log", cwd=ROOT)
        try:
            proc.wait_ready(f"http://127.0.0.1:{port}/")
            for concurrency in (1, 64):
                key = f"{server}-c{concurrency}"
                results[key] = _measure(proc, port, request, concurrency)
                print(key, results[key], flush=True)
                time.sleep(0.3)
        finally:
            proc.stop()
    (ROOT / "bench" / "results" / "servers.json").write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
