"""Per-process gauges for /metrics: each worker reports its own memory, CPU time and open
upstream connections, labelled with its pid (a scrape reaches one worker; with
`--workers N` the series of all N appear over successive scrapes)."""

import os


def _status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def process_metrics(upstream_connections: int) -> str:
    pid = os.getpid()
    times = os.times()
    lines = [
        "# HELP process_cpu_seconds_total User and system CPU time of this worker.",
        "# TYPE process_cpu_seconds_total counter",
        f'process_cpu_seconds_total{{pid="{pid}"}} {times.user + times.system:.2f}',
    ]
    for name, field, help_text in (
        ("process_resident_memory_bytes", "VmRSS:", "Resident memory of this worker."),
        ("process_resident_memory_peak_bytes", "VmHWM:", "Peak resident memory of this worker."),
    ):
        kb = _status_kb(field)
        if kb is not None:
            lines += [
                f"# HELP {name} {help_text}",
                f"# TYPE {name} gauge",
                f'{name}{{pid="{pid}"}} {kb * 1024}',
            ]
    lines += [
        "# HELP switchgate_upstream_connections Open keep-alive connections to upstreams.",
        "# TYPE switchgate_upstream_connections gauge",
        f'switchgate_upstream_connections{{pid="{pid}"}} {upstream_connections}',
    ]
    return "\n".join(lines) + "\n"
