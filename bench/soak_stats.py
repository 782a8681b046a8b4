"""The soak's numbers: how RSS moved after warm-up, and the database's size."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any


def dir_mb(path: Path) -> float:
    """Size of the files in a directory (the gateway's SQLite database and its WAL)."""
    files = [f for f in path.glob("*") if f.is_file()] if path.is_dir() else []
    return round(sum(f.stat().st_size for f in files) / 1e6, 1)


def growth(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """How RSS moved after warm-up (the first fifth of the run: caches, pools and the
    allocator's arenas filling up). Single samples jump by a few MB while a batch is in
    flight, so the trend compares medians: the last third of the warmed-up samples
    against the first third."""
    rows = [(x["t"], x["memory"][0]) for x in samples if x["memory"]]
    if len(rows) < 7:
        return {}
    end_t = rows[-1][0]
    warm = [m for t, m in rows if t >= end_t / 5]
    third = len(warm) // 3

    def median(part: list[dict[str, float]], key: str = "rss_mb") -> float:
        return round(statistics.median(m.get(key, 0.0) for m in part), 1)

    first, middle, last = warm[:third], warm[third:-third], warm[-third:]
    return {
        "rss_warm_mb": warm[0]["rss_mb"],
        "rss_end_mb": warm[-1]["rss_mb"],
        "rss_max_mb": max(m["rss_mb"] for _, m in rows),
        "rss_median_thirds_mb": [median(first), median(middle), median(last)],
        "trend_mb": round(median(last) - median(first), 1),
        "anon_trend_mb": round(median(last, "anon_mb") - median(first, "anon_mb"), 1),
        "file_trend_mb": round(median(last, "file_mb") - median(first, "file_mb"), 1),
    }
