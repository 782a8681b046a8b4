"""This worker's memory and CPU time, read from /proc and os.times() at scrape time."""

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


def process_samples() -> list[tuple[str, str, float]]:
    """(name, help, value); names ending in _total are counters."""
    times = os.times()
    out = [
        (
            "process_cpu_seconds_total",
            "User and system CPU time of this worker.",
            round(times.user + times.system, 2),
        )
    ]
    for name, field, help_text in (
        ("process_resident_memory_bytes", "VmRSS:", "Resident memory of this worker."),
        ("process_resident_memory_peak_bytes", "VmHWM:", "Peak resident memory of this worker."),
    ):
        kb = _status_kb(field)
        if kb is not None:
            out.append((name, help_text, float(kb * 1024)))
    return out
