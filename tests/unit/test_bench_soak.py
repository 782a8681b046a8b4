"""The soak's growth statistics and its verdict (bench/soak_stats.py, bench/verdicts.py)."""

from __future__ import annotations

from typing import Any

from bench.soak_stats import growth
from bench.verdicts import _soak_flat


def _samples(rss: list[float], anon: list[float] | None = None) -> list[dict[str, Any]]:
    anon = anon or rss
    return [
        {"t": 100.0 * i, "memory": [{"rss_mb": r, "anon_mb": a, "file_mb": 20.0}]}
        for i, (r, a) in enumerate(zip(rss, anon, strict=True))
    ]


WARM_UP = [80.0, 100.0, 104.0]  # t = 0, 100, 200: before the first fifth of 1,400 s


def test_a_plateau_with_spikes_is_flat() -> None:
    rss = [
        *WARM_UP,
        110,
        110.2,
        113.5,
        110.1,
        109.9,
        112.8,
        110.0,
        110.3,
        110.1,
        113.7,
        110.2,
        110.4,
    ]
    stats = growth(_samples(rss))
    assert stats["rss_median_thirds_mb"] == [110.2, 110.2, 110.3]
    assert stats["trend_mb"] == 0.1
    assert stats["rss_max_mb"] == 113.7
    assert _soak_flat({"seconds": 1800, **stats}) is True


def test_a_steady_climb_is_growth_even_when_each_step_is_small() -> None:
    rss = [*WARM_UP, *(110 + 0.25 * i for i in range(12))]
    stats = growth(_samples(rss))
    assert stats["trend_mb"] == 2.0
    assert _soak_flat({"seconds": 1800, **stats}) is False


def test_a_short_soak_is_not_enough() -> None:
    flat = [*WARM_UP, *[110.0] * 12]
    assert _soak_flat({"seconds": 600, **growth(_samples(flat))}) is False
    assert _soak_flat({"seconds": 1800, **growth(_samples(flat))}) is True


def test_anonymous_and_file_backed_memory_are_told_apart() -> None:
    rss = [*WARM_UP, 110, 110, 110, 110, 112, 112, 112, 112, 114, 114, 114, 114]
    anon = [r - 20 for r in rss]
    stats = growth(_samples(rss, anon=anon))
    assert stats["anon_trend_mb"] == 4.0
    assert stats["file_trend_mb"] == 0.0


def test_too_few_samples_give_no_verdict() -> None:
    assert growth(_samples([80, 90, 100])) == {}
    assert _soak_flat({"seconds": 1800}) is None
