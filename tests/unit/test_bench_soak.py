"""The soak's growth statistics and its verdict (bench/run.py, bench/verdicts.py)."""

from __future__ import annotations

from typing import Any

from bench.run import _growth
from bench.verdicts import _soak_flat


def _samples(rss: list[float], anon: list[float] | None = None) -> list[dict[str, Any]]:
    anon = anon or rss
    return [
        {"t": 100.0 * i, "memory": [{"rss_mb": r, "anon_mb": a, "file_mb": 20.0}]}
        for i, (r, a) in enumerate(zip(rss, anon, strict=True))
    ]


def test_memory_that_levels_off_is_flat() -> None:
    # samples every 100 s for 1,000 s: warm at 200 s, halves split at 600 s
    rss = [80, 100, 100.5, 101, 101.5, 102, 102.1, 102.2, 102.3, 102.4, 102.5]
    growth = _growth(_samples(rss))
    assert growth["rss_warm_mb"] == 100.5
    assert growth["growth_after_warmup_mb"] == 2.0
    assert growth["growth_first_half_mb"] == 1.6
    assert growth["growth_second_half_mb"] == 0.4
    assert _soak_flat({"seconds": 1800, **growth}) is True


def test_a_steady_climb_is_growth_even_when_small() -> None:
    rss = [80, 100, 100.2, 100.4, 100.6, 100.8, 101.4, 102.0, 102.6, 103.2, 103.8]
    growth = _growth(_samples(rss))
    assert growth["growth_second_half_mb"] > growth["growth_first_half_mb"] + 0.5
    assert _soak_flat({"seconds": 1800, **growth}) is False


def test_large_growth_or_a_short_soak_is_not_flat() -> None:
    rss = [80, 100, 104, 107, 109, 110, 110.5, 111, 111.2, 111.3, 111.4]
    assert _soak_flat({"seconds": 1800, **_growth(_samples(rss))}) is False
    flat = [80, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100]
    assert _soak_flat({"seconds": 600, **_growth(_samples(flat))}) is False
    assert _soak_flat({"seconds": 1800, **_growth(_samples(flat))}) is True


def test_anonymous_and_file_backed_growth_are_told_apart() -> None:
    rss = [80, 100, 100, 101, 101, 102]
    growth = _growth(_samples(rss, anon=[60, 80, 80, 81, 81, 82]))
    assert growth["anon_growth_after_warmup_mb"] == 2.0
    assert growth["file_growth_after_warmup_mb"] == 0.0


def test_too_few_samples_give_no_verdict() -> None:
    assert _growth(_samples([80, 90])) == {}
    assert _soak_flat({"seconds": 1800}) is None
