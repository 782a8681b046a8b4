"""The issue's targets, each with what a run measured, LiteLLM's number from the same run
and a verdict.

.venv/bin/python -m bench.verdicts bench/results/full.json [bench/results/soak.json]
"""

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Scenarios = dict[str, dict[str, Any]]

TRANSLATED = ("messages-to-openai", "openai-to-anthropic", "gemini-to-openai")


@dataclass
class Row:
    target: str
    measured: str
    litellm: str
    met: bool | None  # None: not measured in this run


def _get(s: Scenarios, name: str, *path: str) -> Any:
    value: Any = s.get(name)
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _fmt(value: Any, unit: str = "", digits: int = 0) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}{unit}"


def _rows(data: dict[str, Any], soak: dict[str, Any] | None) -> list[Row]:
    targets = data.get("targets", {})
    sg: Scenarios = targets.get("switchgate", {}).get("scenarios", {})
    ll: Scenarios = targets.get("litellm", {}).get("scenarios", {})
    direct: Scenarios = targets.get("direct", {}).get("scenarios", {})
    rows: list[Row] = []

    def add(target: str, measured: str, litellm: str, ok: bool | None) -> None:
        rows.append(Row(target, measured, litellm, ok))

    def both(name: str, *path: str) -> tuple[Any, Any]:
        return _get(sg, name, *path), _get(ll, name, *path)

    rps, ll_rps = both("pass-whole-l0-c64", "rps")
    cpu, ll_cpu = both("pass-whole-l0-c64", "cpu_ms_per_request")
    add(
        "non-streaming pass-through >= 2,000 req/s, <= 0.5 ms CPU/req (c=64)",
        f"{_fmt(rps)} req/s, {_fmt(cpu, ' ms', 3)}",
        f"{_fmt(ll_rps)} req/s, {_fmt(ll_cpu, ' ms', 2)}",
        None if rps is None or cpu is None else rps >= 2000 and cpu <= 0.5,
    )
    for label, stat, limit in (("p50", "p50", 0.5), ("p99", "p99", 1.5)):
        mine, theirs = both("pass-whole-l0-c1", "latency_ms", stat)
        base = _get(direct, "pass-whole-l0-c1", "latency_ms", stat)
        added = None if mine is None or base is None else mine - base
        added_ll = None if theirs is None or base is None else theirs - base
        add(
            f"added {label} at c=1 <= {limit} ms (non-streaming)",
            f"{_fmt(added, ' ms', 2)} ({_fmt(mine, '', 2)} - direct {_fmt(base, '', 2)})",
            _fmt(added_ll, " ms", 1),
            None if added is None else added <= limit,
        )
    streams, ll_streams = both("pass-stream-l0-c64", "rps")
    add(
        "streaming pass-through >= 1,000 streams/s (c=64)",
        f"{_fmt(streams)} streams/s",
        f"{_fmt(ll_streams)} streams/s",
        None if streams is None else streams >= 1000,
    )
    ttfb, ll_ttfb = both("pass-stream-l0-c1", "ttfb_ms", "p50")
    base = _get(direct, "pass-stream-l0-c1", "ttfb_ms", "p50")
    added = None if ttfb is None or base is None else ttfb - base
    add(
        "added time to first byte <= 0.5 ms (c=1, p50)",
        _fmt(added, " ms", 2),
        _fmt(None if ll_ttfb is None or base is None else ll_ttfb - base, " ms", 1),
        None if added is None else added <= 0.5,
    )
    passed = [n for n in sg if n.startswith("pass-stream") or n.startswith("paced")]
    short = sum(_get(sg, n, "events_short") or 0 for n in passed)
    ll_short = sum(_get(ll, n, "events_short") or 0 for n in passed if n in ll)
    add(
        "chunks forwarded one for one (streams with a different event count)",
        f"{short} of {sum(_get(sg, n, 'ok') or 0 for n in passed):,} streams",
        f"{ll_short} streams",
        bool(passed) and short == 0,
    )
    ratios: list[float] = []
    for kind in ("whole", "stream"):
        base_cpu = _get(sg, f"pass-{kind}-l0-c64", "cpu_ms_per_request")
        for prefix in TRANSLATED:
            value = _get(sg, f"{prefix}-{kind}-c64", "cpu_ms_per_request")
            if value and base_cpu:
                ratios.append(value / base_cpu)
    add(
        "translated paths <= 2x the CPU/req of pass-through (c=64)",
        f"{min(ratios):.2f}x - {max(ratios):.2f}x" if ratios else "-",
        "",
        max(ratios) <= 2.0 if ratios else None,
    )
    paced = sg.get("paced-1000-streams")
    ll_paced = ll.get("paced-1000-streams")
    add(
        "1,000 concurrent paced streams on two workers: none stalled, every chunk delivered",
        (
            f"peak {paced.get('in_flight_peak', '-')} in flight, {paced['ok']:,} streams, "
            f"{paced.get('stalled')} stalled, {paced.get('events_short')} short, "
            f"{paced['errors']} errors"
            if paced
            else "-"
        ),
        (
            f"{ll_paced['ok']:,} streams, {ll_paced.get('stalled')} stalled, "
            f"{ll_paced.get('events_short')} short, {ll_paced['errors']} errors"
            if ll_paced
            else "-"
        ),
        None
        if not paced
        else paced["errors"] == 0 and paced.get("stalled") == 0 and paced.get("events_short") == 0,
    )
    servers = targets.get("switchgate", {}).get("servers", {}).get("1w", {})
    ll_servers = targets.get("litellm", {}).get("servers", {}).get("1w", {})
    idle = [m["rss_mb"] for m in servers.get("idle_memory", [])]
    ll_idle = [m["rss_mb"] for m in ll_servers.get("idle_memory", [])]
    add(
        "idle RSS <= 120 MB per worker",
        _fmt(max(idle) if idle else None, " MB", 1),
        _fmt(max(ll_idle) if ll_idle else None, " MB", 1),
        max(idle) <= 120 if idle else None,
    )
    if soak:
        add(
            "no RSS growth over a 30-minute soak at steady load",
            _soak_measured(soak),
            "",
            _soak_flat(soak),
        )
    cold = servers.get("cold_start_s")
    add(
        "cold start to ready <= 2 s",
        _fmt(cold, " s", 2),
        _fmt(ll_servers.get("cold_start_s"), " s", 1),
        None if cold is None else cold <= 2.0,
    )
    return rows


# What "no growth" means here: over at least 30 minutes, after the first fifth of the run
# (caches, pools and the allocator's arenas filling up), the median RSS of the last third
# of the samples is at most 1 MB (about 1% of a worker) above the median of the first
# third. Medians, because single samples jump by a few MB while a batch is in flight.
SOAK_SECONDS = 1800
SOAK_TREND_MB = 1.0


def _soak_measured(soak: dict[str, Any]) -> str:
    text = (
        f"{soak['seconds'] / 60:.0f} min, {soak['requests']:,} requests: "
        f"{soak.get('rss_warm_mb')} MB warm -> {soak.get('rss_end_mb')} MB at the end "
        f"(max {soak.get('rss_max_mb')})"
    )
    if "rss_median_thirds_mb" in soak:
        thirds = " / ".join(f"{m}" for m in soak["rss_median_thirds_mb"])
        text += f"; medians of the thirds after warm-up {thirds} MB ({soak['trend_mb']:+} MB)"
    return text


def _soak_flat(soak: dict[str, Any]) -> bool | None:
    trend = soak.get("trend_mb")
    if trend is None:
        return None
    return soak["seconds"] >= SOAK_SECONDS and trend <= SOAK_TREND_MB


def _verdict(ok: bool | None) -> str:
    return "not measured" if ok is None else "**met**" if ok else "**missed**"


def markdown(data: dict[str, Any], soak: dict[str, Any] | None = None) -> str:
    lines = [
        "| target | switchgate | LiteLLM (same run) | verdict |",
        "|---|---|---|---|",
    ]
    for row in _rows(data, soak):
        lines.append(
            f"| {row.target} | {row.measured} | {row.litellm or '-'} | {_verdict(row.met)} |"
        )
    return "\n".join(lines)


def main() -> int:
    data = json.loads(
        Path(sys.argv[1] if len(sys.argv) > 1 else "bench/results/full.json").read_text()
    )
    soak = json.loads(Path(sys.argv[2]).read_text())["soak"] if len(sys.argv) > 2 else None
    print(markdown(data, soak))
    return 0


if __name__ == "__main__":
    sys.exit(main())
