"""Run the benchmark: the fake upstream directly, switchgate, and LiteLLM's proxy, with
the same scenarios, one target at a time, on the same machine.

    .venv/bin/python -m bench.run --quick      # ~10 scenarios, ~1.5 s each (a smoke test)
    .venv/bin/python -m bench.run --full       # every scenario (writes bench/results/full.json)
    .venv/bin/python -m bench.run --soak 180   # switchgate only: RSS over a 3-minute load
    add --install-litellm once to create bench/.venv-litellm (pip install 'litellm[proxy]')

Pinning (2+ cores): the fake upstream and this process (the load generator) run on CPU 0,
a one-worker gateway on CPU 1; two-worker runs may use both CPUs.
"""

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import report
from bench.loadgen import run_load, summarize
from bench.procs import Proc, memory_mb, pin_self
from bench.scenarios import QUICK, Scenario, all_scenarios, request_bytes
from bench.soak_stats import dir_mb, growth
from bench.targets import (
    ROOT,
    Running,
    install_litellm,
    litellm_available,
    start_litellm,
    start_switchgate,
    start_upstream,
)
from bench.upstream import run as run_loop

RESULTS = ROOT / "bench" / "results"
SOAK_MIX = (
    "pass-whole-l0-c16",
    "pass-stream-l0-c16",
    "messages-to-openai-stream-c64",
    "openai-to-anthropic-whole-c64",
    "gemini-to-openai-stream-c64",
    "large-prompt-c16",
)
TARGETS = ("direct", "switchgate", "litellm")


# Read once, before this process pins itself to the load generator's CPU (after that,
# its own affinity would say only that CPU exists).
_AVAILABLE_CPUS = sorted(os.sched_getaffinity(0))


def _cpus() -> tuple[set[int], set[int], set[int]]:
    """(load generator + upstream, one-worker gateway, multi-worker gateway) CPU sets."""
    available = _AVAILABLE_CPUS
    if len(available) < 2:
        return set(available), set(available), set(available)
    return {available[0]}, {available[1]}, set(available)


def _memory(proc: Proc | None) -> list[dict[str, Any]]:
    if proc is None:
        return []
    return [{"pid": pid, **memory_mb(pid)} for pid in proc.worker_pids()]


def _load(
    running: Running,
    request: bytes,
    scenario: Scenario,
    duration: float,
    warmup: float,
    cpu_proc: Proc,
) -> dict[str, Any]:
    cpu: dict[str, float] = {}

    def edge(name: str) -> None:
        cpu[name] = cpu_proc.cpu_seconds()

    window = _run(
        lambda: run_load(
            "127.0.0.1",
            running.port,
            request,
            concurrency=scenario.concurrency,
            duration=max(duration, scenario.min_duration),
            warmup=max(warmup, 1.5 if scenario.min_duration else 0.0),
            on_window=edge,
        )
    )
    out = summarize(window, stream=scenario.stream, expect_events=scenario.expect_events)
    done = sum(
        1 for s in window.samples if s.error is None and window.start <= s.done <= window.end
    )
    cpu_s = cpu.get("end", 0.0) - cpu.get("start", 0.0)
    out["cpu_s"] = round(cpu_s, 3)
    out["cpu_ms_per_request"] = round(cpu_s * 1000 / done, 4) if done else None
    out["window_s"] = round(window.end - window.start, 3)
    return out


def _settle(proc: Proc, limit: float = 90.0) -> float:
    """Wait until a freshly started server stops using CPU (LiteLLM's workers keep
    initialising for many seconds after they answer their health check); returns how
    long that took."""
    started = time.perf_counter()
    while time.perf_counter() - started < limit:
        before = proc.cpu_seconds()
        time.sleep(1.0)
        if proc.cpu_seconds() - before < 0.05:
            break
    return round(time.perf_counter() - started, 1)


def _run(factory: Callable[[], Any]) -> Any:
    result: list[Any] = []

    async def main() -> None:
        result.append(await factory())

    run_loop(main())
    return result[0]


def _start(target: str, work: Path, upstream_url: str, cpus: set[int], workers: int) -> Running:
    label = target if workers == 1 else f"{target}-{workers}w"
    if target == "switchgate":
        return start_switchgate(work, upstream_url, cpus, workers, label)
    return start_litellm(work, upstream_url, cpus, workers, label)


def _profiler(
    proc: Proc | None, seconds: float, out: Path | None
) -> subprocess.Popen[bytes] | None:
    """py-spy on the gateway's (first) worker for one scenario, if asked for."""
    if out is None or proc is None:
        return None
    py_spy = Path(sys.executable).parent / "py-spy"
    out.parent.mkdir(parents=True, exist_ok=True)
    command = [str(py_spy), "record", "--pid", str(proc.worker_pids()[0]), "--rate", "250"]
    command += ["--duration", str(int(seconds + 1)), "--format", "raw", "--output", str(out)]
    return subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def run_target(
    target: str,
    scenarios: list[Scenario],
    *,
    work: Path,
    upstream: Proc,
    upstream_port: int,
    duration: float,
    warmup: float,
    profile_dir: Path | None = None,
) -> dict[str, Any]:
    _, one_cpu, all_cpus = _cpus()
    upstream_url = f"http://127.0.0.1:{upstream_port}"
    out: dict[str, Any] = {"scenarios": {}, "servers": {}}
    for workers in sorted({s.workers for s in scenarios}):
        batch = [s for s in scenarios if s.workers == workers]
        key = f"{workers}w"
        if target == "direct":
            running = Running("direct", upstream_port, "", None)
            cpu_proc = upstream
        else:
            try:
                running = _start(
                    target, work, upstream_url, one_cpu if workers == 1 else all_cpus, workers
                )
            except RuntimeError as exc:
                out["servers"][key] = {"error": str(exc)[-2000:]}
                print(f"  {target} ({key}) failed to start: {exc}", flush=True)
                continue
            assert running.proc is not None
            cpu_proc = running.proc
            settled = _settle(running.proc)
            out["servers"][key] = {
                "cold_start_s": round(running.cold_start_s or 0.0, 3),
                "idle_memory": _memory(running.proc),
                "busy_after_ready_s": settled,
            }
        try:
            for scenario in batch:
                request = request_bytes(scenario, direct=target == "direct", token=running.token)
                spy = _profiler(
                    running.proc,
                    duration + warmup,
                    profile_dir / f"{target}-{scenario.name}.txt" if profile_dir else None,
                )
                result = _load(running, request, scenario, duration, warmup, cpu_proc)
                if spy is not None:
                    spy.wait()
                result["memory"] = _memory(running.proc)
                out["scenarios"][scenario.name] = result
                print(f"  {target:<10} {report.one_line(scenario.name, result)}", flush=True)
                time.sleep(0.2)
        finally:
            if running.proc is not None:
                out["servers"][key]["final_memory"] = _memory(running.proc)
                running.proc.stop()
    return out


def _meta(mode: str, duration: float, warmup: float) -> dict[str, Any]:
    def version(python: str, module: str) -> str:
        code = f"import importlib.metadata as m; print(m.version({module!r}))"
        try:
            return subprocess.run(
                [python, "-c", code], check=False, capture_output=True, text=True, timeout=30
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    litellm_python = str(ROOT / "bench" / ".venv-litellm" / "bin" / "python")
    load_cpu, one_cpu, all_cpus = _cpus()
    return {
        "mode": mode,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            # 1, 5 and 15 minute load averages when the run began: how busy the machine
            # was with other work (this run adds to them only once it has started)
            "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        },
        "pinning": {
            "load_generator_and_upstream": sorted(load_cpu),
            "gateway_one_worker": sorted(one_cpu),
            "gateway_two_workers": sorted(all_cpus),
        },
        "duration_s": duration,
        "warmup_s": warmup,
        "versions": {
            "switchgate": version(sys.executable, "switchgate"),
            "uvicorn": version(sys.executable, "uvicorn"),
            "aiohttp": version(sys.executable, "aiohttp"),
            "litellm": version(litellm_python, "litellm") if litellm_available() else None,
        },
    }


def soak(seconds: float, work: Path) -> dict[str, Any]:
    """switchgate alone under steady load, cycling through pass-through and translated
    scenarios (whole, streamed, large prompts); RSS sampled after every cycle (~30 s)."""
    load_cpu, one_cpu, _ = _cpus()
    upstream, port = start_upstream(work, load_cpu)
    running = start_switchgate(work, f"http://127.0.0.1:{port}", one_cpu)
    assert running.proc is not None
    samples: list[dict[str, Any]] = [{"t": 0, "memory": _memory(running.proc), "requests": 0}]
    mix = [s for s in all_scenarios() if s.name in SOAK_MIX]
    started = time.perf_counter()
    total = 0
    try:
        while time.perf_counter() - started < seconds:
            for scenario in mix:
                request = request_bytes(scenario, direct=False, token=running.token)
                result = _load(running, request, scenario, 4.5, 0.0, running.proc)
                total += result["ok"]
            samples.append(
                {
                    "t": round(time.perf_counter() - started, 1),
                    "memory": _memory(running.proc),
                    "requests": total,
                    "database_mb": dir_mb(work / "switchgate-data"),
                }
            )
            print(f"  soak t={samples[-1]['t']:>6}s {samples[-1]['memory']}", flush=True)
    finally:
        running.proc.stop()
        upstream.stop()
    return {"seconds": seconds, "samples": samples, "requests": total, **growth(samples)}


def _merge(base: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """`new`'s scenarios and servers replace `base`'s, target by target."""
    for target, result in new["targets"].items():
        into = base["targets"].setdefault(target, {"scenarios": {}, "servers": {}})
        into["scenarios"].update(result["scenarios"])
        into["servers"].update(result["servers"])
    base["meta"].setdefault("merged", []).append(new["meta"])
    return base


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="a few scenarios, short (default)")
    mode.add_argument("--full", action="store_true", help="every scenario")
    mode.add_argument("--soak", type=float, metavar="SECONDS", help="switchgate RSS over time")
    parser.add_argument("--duration", type=float, help="measured seconds per scenario")
    parser.add_argument("--warmup", type=float, help="unmeasured seconds before each")
    parser.add_argument("--targets", default=",".join(TARGETS), help="comma-separated")
    parser.add_argument("--only", help="regular expression on scenario names")
    parser.add_argument("--out", type=Path, help="result JSON (default bench/results/MODE.json)")
    parser.add_argument(
        "--install-litellm", action="store_true", help="pip install litellm[proxy] first"
    )
    parser.add_argument(
        "--profile", type=Path, metavar="DIR", help="py-spy each gateway scenario into DIR"
    )
    parser.add_argument(
        "--merge-into", type=Path, help="add these results to an earlier result file"
    )
    args = parser.parse_args(argv)
    if args.install_litellm:
        install_litellm()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))
    load_cpu, _, _ = _cpus()
    pin_self(load_cpu)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    work = RESULTS / "tmp" / stamp
    work.mkdir(parents=True, exist_ok=True)

    if args.soak:
        data = {"meta": _meta("soak", args.soak, 0.0), "soak": soak(args.soak, work)}
        report.write_json(args.out or RESULTS / "soak.json", data)
        return 0

    full = bool(args.full)
    mode_name = "full" if full else "quick"
    duration = args.duration or (3.0 if full else 1.5)
    warmup = args.warmup or (1.0 if full else 0.5)
    scenarios = [s for s in all_scenarios() if full or s.name in QUICK]
    if args.only:
        scenarios = [s for s in scenarios if re.search(args.only, s.name)]
    targets = [t for t in args.targets.split(",") if t]
    if "litellm" in targets and not litellm_available():
        print("LiteLLM is not installed in bench/.venv-litellm: skipping it", flush=True)
        targets.remove("litellm")

    data: dict[str, Any] = {"meta": _meta(mode_name, duration, warmup), "targets": {}}
    upstream, upstream_port = start_upstream(work, load_cpu)
    try:
        for target in targets:
            print(f"== {target}", flush=True)
            data["targets"][target] = run_target(
                target,
                scenarios,
                work=work,
                upstream=upstream,
                upstream_port=upstream_port,
                duration=duration,
                warmup=warmup,
                profile_dir=args.profile,
            )
    finally:
        upstream.stop()
    if args.merge_into:
        data = _merge(json.loads(args.merge_into.read_text()), data)
    data["comparison"] = report.compare(data)
    out = args.out or args.merge_into or RESULTS / f"{mode_name}.json"
    report.write_json(out, data)
    print(report.markdown(data), flush=True)
    print(f"\nraw results: {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
