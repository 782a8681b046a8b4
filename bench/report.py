"""Turn raw benchmark results into ratios and Markdown tables.

.venv/bin/python -m bench.report bench/results/full.json
"""

import json
import sys
from pathlib import Path
from typing import Any


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")


def one_line(name: str, r: dict[str, Any]) -> str:
    line = (
        f"{name:<34} {r['rps']:>8.0f}/s err={r['errors']:<4} "
        f"p50={r['latency_ms']['p50']:.2f} p99={r['latency_ms']['p99']:.2f} ms"
    )
    if "ttfb_ms" in r:
        line += f" ttfb50={r['ttfb_ms']['p50']:.2f}"
    if r.get("cpu_ms_per_request") is not None:
        line += f" cpu={r['cpu_ms_per_request']:.3f}ms/req"
    if r.get("events_short"):
        line += f" SHORT={r['events_short']}"
    if r.get("stalled"):
        line += f" STALLED={r['stalled']}"
    return line


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a and b else None


def _diff(a: float | None, b: float | None) -> float | None:
    return round(a - b, 3) if a is not None and b is not None else None


def compare(data: dict[str, Any]) -> dict[str, Any]:
    targets = data.get("targets", {})
    direct = targets.get("direct", {}).get("scenarios", {})
    sg = targets.get("switchgate", {}).get("scenarios", {})
    ll = targets.get("litellm", {}).get("scenarios", {})
    out: dict[str, Any] = {}
    for name, s in sg.items():
        d, lite = direct.get(name), ll.get(name)
        row: dict[str, Any] = {
            "switchgate_vs_direct_rps": _ratio(s["rps"], d and d["rps"]),
            "switchgate_vs_litellm_rps": _ratio(s["rps"], lite and lite["rps"]),
            "litellm_vs_switchgate_cpu": _ratio(
                lite and lite.get("cpu_ms_per_request"), s.get("cpu_ms_per_request")
            ),
            "added_p50_ms": _diff(s["latency_ms"]["p50"], d and d["latency_ms"]["p50"]),
            "added_p99_ms": _diff(s["latency_ms"]["p99"], d and d["latency_ms"]["p99"]),
        }
        if "ttfb_ms" in s and d and "ttfb_ms" in d:
            row["added_ttfb_p50_ms"] = _diff(s["ttfb_ms"]["p50"], d["ttfb_ms"]["p50"])
            row["added_ttfb_p99_ms"] = _diff(s["ttfb_ms"]["p99"], d["ttfb_ms"]["p99"])
        out[name] = row
    return out


def _f(value: Any, digits: int = 0) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _lat(r: dict[str, Any] | None) -> str:
    if not r:
        return "-"
    return f"{r['latency_ms']['p50']:.2f} / {r['latency_ms']['p99']:.2f}"


def markdown(data: dict[str, Any]) -> str:
    targets = data.get("targets", {})
    get = {t: targets.get(t, {}).get("scenarios", {}) for t in ("direct", "switchgate", "litellm")}
    comparison = data.get("comparison", {})
    names = list(get["switchgate"]) or list(get["direct"])
    lines = [
        "| scenario | direct req/s | switchgate req/s | LiteLLM req/s | sg / direct "
        "| sg / LiteLLM | sg CPU ms/req | LiteLLM CPU ms/req | sg p50 / p99 ms "
        "| LiteLLM p50 / p99 ms | errors sg / LiteLLM |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name in names:
        d, s, lite = get["direct"].get(name), get["switchgate"].get(name), get["litellm"].get(name)
        c = comparison.get(name, {})
        lines.append(
            f"| {name} | {_f(d and d['rps'])} | {_f(s and s['rps'])} | {_f(lite and lite['rps'])} "
            f"| {_f(c.get('switchgate_vs_direct_rps'), 2)} "
            f"| {_f(c.get('switchgate_vs_litellm_rps'), 1)} "
            f"| {_f(s and s.get('cpu_ms_per_request'), 3)} "
            f"| {_f(lite and lite.get('cpu_ms_per_request'), 3)} "
            f"| {_lat(s)} | {_lat(lite)} "
            f"| {_f(s and s['errors'])} / {_f(lite and lite['errors'])} |"
        )
    streams = [n for n in names if "ttfb_ms" in (get["switchgate"].get(n) or {})]
    if streams:
        lines += [
            "",
            "| stream scenario | TTFB p50 direct / sg / LiteLLM ms | added TTFB p50 / p99 ms (sg) "
            "| events short sg / LiteLLM | stalled sg / LiteLLM | max gap p99 sg ms "
            "| in flight mean / peak sg |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for name in streams:
            d, s, lite = (get[t].get(name) for t in ("direct", "switchgate", "litellm"))
            c = comparison.get(name, {})
            ttfb = " / ".join(_f(r and r["ttfb_ms"]["p50"], 2) for r in (d, s, lite))
            lines.append(
                f"| {name} | {ttfb} "
                f"| {_f(c.get('added_ttfb_p50_ms'), 2)} / {_f(c.get('added_ttfb_p99_ms'), 2)} "
                f"| {_f(s and s.get('events_short'))} / {_f(lite and lite.get('events_short'))} "
                f"| {_f(s and s.get('stalled'))} / {_f(lite and lite.get('stalled'))} "
                f"| {_f(s and s['max_gap_ms']['p99'], 1)} "
                f"| {_f(s and s.get('in_flight_mean'), 0)} / {_f(s and s.get('in_flight_peak'))} |"
            )
    lines += [
        "",
        "| server | workers | cold start s | idle RSS MB per process | peak RSS (VmHWM) MB |",
    ]
    lines.append("|---|---:|---:|---:|---:|")
    for target in ("switchgate", "litellm"):
        for key, server in targets.get(target, {}).get("servers", {}).items():
            if "error" in server:
                lines.append(f"| {target} | {key} | failed to start | | |")
                continue
            idle = ", ".join(_f(m["rss_mb"], 1) for m in server.get("idle_memory", []))
            peak = ", ".join(_f(m["hwm_mb"], 1) for m in server.get("final_memory", []))
            lines.append(f"| {target} | {key} | {server['cold_start_s']} | {idle} | {peak} |")
    return "\n".join(lines)


def main() -> int:
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "bench/results/full.json")
    print(markdown(json.loads(path.read_text())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
