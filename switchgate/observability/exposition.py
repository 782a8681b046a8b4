"""Parts of the /metrics exposition that prometheus-client does not do for us: spend
written exactly (integer units and an exact decimal USD, not a float), and this worker's
process samples labelled with its pid."""

import os
from collections.abc import Callable, Iterator
from typing import Final

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from switchgate.money import format_usd_exact
from switchgate.observability.process import process_samples

SPEND: Final = "switchgate_cost_units"


class Families(Collector):
    def __init__(self, families: list[Metric]) -> None:
        self._families = families

    def collect(self) -> Iterator[Metric]:
        return iter(self._families)


def label_text(labels: dict[str, str]) -> str:
    def esc(v: str) -> str:
        return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")

    return ",".join(f'{k}="{esc(v)}"' for k, v in sorted(labels.items()))


def exact_spend(families: list[Metric]) -> bytes:
    """Units are integers held in float64: exact up to 2^53 units ($9,007) per series."""
    totals: dict[str, int] = {}
    for family in families:
        for sample in family.samples:
            if sample.name.endswith("_total"):
                key = label_text(sample.labels)
                totals[key] = totals.get(key, 0) + int(sample.value)
    lines = [
        f"# HELP {SPEND}_total Amount charged, in units (1 USD = 10^12).",
        f"# TYPE {SPEND}_total counter",
        *(f"{SPEND}_total{{{k}}} {v}" for k, v in sorted(totals.items())),
        "# HELP switchgate_cost_usd_total Amount charged, in USD (exact decimal).",
        "# TYPE switchgate_cost_usd_total counter",
        *(
            f"switchgate_cost_usd_total{{{k}}} {format_usd_exact(v)}"
            for k, v in sorted(totals.items())
        ),
    ]
    return ("\n".join(lines) + "\n").encode()


class ProcessCollector(Collector):
    """This worker's memory, CPU time and open upstream connections, labelled with its
    pid (with N workers a scrape shows the worker that answered)."""

    def __init__(self, upstream_connections: Callable[[], int]) -> None:
        self._upstream_connections = upstream_connections

    def collect(self) -> Iterator[Metric]:
        pid = str(os.getpid())
        samples = process_samples()
        samples.append(
            (
                "switchgate_upstream_connections",
                "Open keep-alive connections to upstreams.",
                float(self._upstream_connections()),
            )
        )
        for name, help_text, value in samples:
            family: Metric
            if name.endswith("_total"):
                family = CounterMetricFamily(name[: -len("_total")], help_text, labels=["pid"])
            else:
                family = GaugeMetricFamily(name, help_text, labels=["pid"])
            family.add_metric([pid], value)
            yield family
