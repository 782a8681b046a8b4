"""What the admin dashboard's browser test reads and checks (tests/e2e/test_console_ui.py):
the panels' tables, the charts' canvases and totals, and the percentiles against the
buckets of a /metrics scrape."""

from decimal import Decimal
from typing import Any

import pytest

from switchgate.console.rollup import BUCKETS_MS
from switchgate.money import UNITS_PER_USD
from tests.e2e.mixed_load import REQUESTS, STREAMS, Samples, value

REQUESTS_TOTAL = "switchgate_requests_total"
SPEND_UNITS = "switchgate_cost_units_total"
LATENCY = "switchgate_request_duration_seconds"
TTFT = "switchgate_time_to_first_token_seconds"
# The admin dashboard's charts (aria-label of each figure), all drawn after the load.
CHARTS = (
    "Requests and errors over time",
    "Spend over time",
    "Latency p50 and p95 over time",
    "Time to first token p50 and p95 over time",
    "Spend per model over time",
    "Spend per channel over time",
)
# Each row's cells as text; a money cell gives its exact amount (the title on hover).
CELLS = """section => [...section.querySelectorAll("tbody tr")].map(tr => [...tr.cells].map(td => {
  const m = td.querySelector(".money");
  return m && m.title ? m.title : td.innerText.trim();
}))"""
# How many pixels of each colour's hue a chart's canvas has: a line is antialiased (blended
# with the background), which keeps its hue; grid, axes and background have no saturation.
PIXELS = """(figure, colours) => {
  const canvas = figure.querySelector("canvas");
  const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  const hue = (r, g, b) => {
    const max = Math.max(r, g, b), min = Math.min(r, g, b), d = max - min;
    if (!max || d / max < 0.25) return null;
    const h = max === r ? (g - b) / d : max === g ? 2 + (b - r) / d : 4 + (r - g) / d;
    return (h * 60 + 360) % 360;
  };
  return colours.map(hex => {
    const want = hue(...[1, 3, 5].map(i => parseInt(hex.slice(i, i + 2), 16)));
    let n = 0;
    for (let i = 0; i < data.length; i += 4) {
      const got = data[i + 3] > 100 ? hue(data[i], data[i + 1], data[i + 2]) : null;
      if (got !== null && Math.min(Math.abs(got - want), 360 - Math.abs(got - want)) < 10) n++;
    }
    return n;
  });
}"""


def units(text: str) -> int:
    """An exact USD amount as the console shows it ("$0.000128") in units (10^-12 USD)."""
    return int(Decimal(text.strip().lstrip("$").replace(",", "")) * UNITS_PER_USD)


def exact_text(locator: Any) -> str:
    """A money cell's exact amount: the full value on hover when digits were cut."""
    money = locator.locator(".money")
    title = money.get_attribute("title") if money.count() else None
    return title or str(locator.inner_text())


def panel_rows(page: Any, title: str, ordered: bool = False) -> dict[str, list[str]]:
    """The rows of the table in the dashboard's panel titled `title`, by first cell."""
    section = page.locator(
        "#site section.panel", has=page.get_by_role("heading", name=title, exact=True)
    )
    rows: list[list[str]] = section.evaluate(CELLS)
    if ordered:
        return {str(i): row for i, row in enumerate(rows)}
    return {row[0]: row for row in rows}


def parse_ms(text: str) -> float | None:
    text = text.strip()
    if text == "—":
        return None
    if text.endswith(" ms"):
        return float(text[:-3].replace(",", ""))
    assert text.endswith(" s"), text
    return float(text[:-2]) * 1000


def metric_bucket(samples: Samples, name: str, q: float, **labels: str) -> tuple[float, float]:
    """The bucket (ms, lower and upper bound) of a scraped histogram that holds its
    q-quantile: where Prometheus's histogram_quantile would interpolate."""
    count = value(samples, f"{name}_count", **labels)
    assert count > 0, (name, labels)
    edges = sorted(
        {float(dict(ls)["le"]) for (n, ls), _ in samples.items() if n == f"{name}_bucket"}
    )
    lower = 0.0
    for edge in edges:
        cumulative = value(samples, f"{name}_bucket", le=_le(edge), **labels)
        if cumulative >= q * count:
            return lower * 1000, edge * 1000
        lower = edge
    raise AssertionError((name, labels, q))


def _le(edge: float) -> str:
    return "+Inf" if edge == float("inf") else str(edge)


def check_range(samples: Samples, name: str, q: float, shown: float | None, **labels: str) -> None:
    """The dashboard's percentile (interpolated inside its own, finer buckets: rollup.BUCKETS_MS)
    must lie in a dashboard bucket that overlaps the scraped histogram's bucket for q."""
    assert shown is not None, (name, labels, q)
    low, high = metric_bucket(samples, name, q, **labels)
    edges = (0, *BUCKETS_MS, float("inf"))
    index = max(i for i, e in enumerate(edges) if e < shown) if shown > 0 else 0
    own_low, own_high = edges[index], edges[index + 1]
    assert own_low <= high + 1 and low <= own_high + 1, (name, labels, q, shown, (low, high))


def check_percentiles(samples: Samples, row: list[str], label: str, name: str) -> None:
    """p50 / p95 of latency (successful requests) and of the first token (streams)."""
    p50, p95 = (parse_ms(v) for v in row[4].split(" / "))
    first50, first95 = (parse_ms(v) for v in row[5].split(" / "))
    model = name if label == "model" else CHANNEL_MODEL[name]
    if model not in FAILED_MODELS:  # the scraped latency counts the 429s too
        check_range(samples, LATENCY, 0.5, p50, **{label: name})
        check_range(samples, LATENCY, 0.95, p95, **{label: name})
    if model in STREAMS:
        check_range(samples, TTFT, 0.5, first50, **{label: name})
        check_range(samples, TTFT, 0.95, first95, **{label: name})
    else:  # no stream, no first token (as in /metrics)
        assert (first50, first95) == (None, None), row
        assert value(samples, f"{TTFT}_count", **{label: name}) == 0


CHANNEL_MODEL = {channel: model for model, channel, _d, _c in REQUESTS}
FAILED_MODELS = {model for model, _ch, _d, code in REQUESTS if int(code) >= 400}


def chart_totals(figure: Any) -> dict[str, float]:
    """The totals a chart's caption gives for each series (exact, from <data value>)."""
    sums = figure.locator("figcaption .sum")
    return {
        str(sums.nth(i).get_attribute("data-series")): float(
            str(sums.nth(i).locator("data").get_attribute("value"))
        )
        for i in range(sums.count())
    }


def check_charts(page: Any, scraped: Samples, requests: int, errors: int, spend: int) -> None:
    assert page.locator("#site figure.chart .empty").count() == 0
    assert page.locator("#site figure.chart canvas").count() == len(CHARTS)
    figure = {name: page.locator(f'#site figure.chart[aria-label="{name}"]') for name in CHARTS}
    for name in CHARTS:
        assert figure[name].locator(".plot canvas").count() == 1, name
        assert figure[name].locator(".u-axis").count() >= 2, name  # readable DOM axes
    # every chart's series in its colour on the canvas (a lone hour is a dot, not a line)
    colours = {
        "Requests and errors over time": ["#4f46e5", "#d93025"],  # requests, errors
        "Spend over time": ["#4f46e5"],  # the bars
        "Latency p50 and p95 over time": ["#0891b2", "#c026d3"],
        "Time to first token p50 and p95 over time": ["#0f9d58", "#b7791f"],
        "Spend per model over time": ["#4f46e5", "#0f9d58", "#d93025"],  # three models
        "Spend per channel over time": ["#4f46e5", "#0f9d58", "#d93025"],  # three channels
    }
    for name, wanted in colours.items():
        drawn = figure[name].evaluate(PIXELS, wanted)
        assert all(n > 0 for n in drawn), (name, dict(zip(wanted, drawn, strict=True)))
    totals = chart_totals(figure["Requests and errors over time"])
    assert totals == {"Requests": requests, "Errors": errors, "Stopped": 0}
    (spend_total,) = chart_totals(figure["Spend over time"]).values()
    assert spend_total == pytest.approx(spend / UNITS_PER_USD, rel=1e-9)
    for chart, label in (("Spend per model over time", "model"),
                         ("Spend per channel over time", "channel")):  # fmt: skip
        per = chart_totals(figure[chart])
        names = {dict(ls)[label] for (n, ls), v in scraped.items() if n == SPEND_UNITS and v}
        assert set(per) == names, (chart, per)
        for name, amount in per.items():
            scraped_units = value(scraped, SPEND_UNITS, **{label: name})
            assert amount == pytest.approx(scraped_units / UNITS_PER_USD, rel=1e-9), (chart, name)
