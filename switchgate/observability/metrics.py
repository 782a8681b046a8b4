"""In-process counters and latency histograms, fed by every finished request record and
served as Prometheus text at GET /metrics. Increments only: cheap on the hot path."""

from bisect import bisect_left
from collections import defaultdict
from typing import Final

from switchgate.billing.recorder import Record
from switchgate.money import format_usd_exact

BUCKETS_MS: Final = (5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000)


class Metrics:
    def __init__(self) -> None:
        self.requests: dict[tuple[str, str, int], int] = defaultdict(int)
        self.tokens: dict[tuple[str, str], int] = defaultdict(int)
        self.cost_units: dict[str, int] = defaultdict(int)
        self._latency: dict[str, list[int]] = {}
        self._latency_sum: dict[str, int] = defaultdict(int)
        self._ttft: dict[str, list[int]] = {}
        self.billing_alerts: dict[str, int] = defaultdict(int)

    def alert(self, kind: str) -> None:
        """A billing alert from the recorder (a charge failed, was capped, was lost)."""
        self.billing_alerts[kind] += 1

    def observe(self, record: Record) -> None:
        model = record.model or ""
        self.requests[(record.endpoint, model, record.status)] += 1
        if record.input_tokens:
            self.tokens[(model, "input")] += record.input_tokens
        if record.output_tokens:
            self.tokens[(model, "output")] += record.output_tokens
        if record.cost:
            self.cost_units[model] += record.cost
        self._bucket(self._latency, record.endpoint, record.latency_ms)
        self._latency_sum[record.endpoint] += record.latency_ms
        if record.ttft_ms is not None:
            self._bucket(self._ttft, record.endpoint, record.ttft_ms)

    @staticmethod
    def _bucket(table: dict[str, list[int]], key: str, value: int) -> None:
        counts = table.get(key)
        if counts is None:
            counts = table[key] = [0] * (len(BUCKETS_MS) + 1)
        counts[bisect_left(BUCKETS_MS, value)] += 1

    def render(self) -> str:
        lines = [
            "# HELP switchgate_requests_total Finished requests by endpoint, model and status.",
            "# TYPE switchgate_requests_total counter",
        ]
        for (endpoint, model, status), n in sorted(self.requests.items()):
            lines.append(
                f'switchgate_requests_total{{endpoint="{endpoint}",model="{_esc(model)}",'
                f'status="{status}"}} {n}'
            )
        lines += [
            "# HELP switchgate_tokens_total Tokens billed.",
            "# TYPE switchgate_tokens_total counter",
        ]
        for (model, kind), n in sorted(self.tokens.items()):
            lines.append(f'switchgate_tokens_total{{model="{_esc(model)}",kind="{kind}"}} {n}')
        # Spend is exact: integer units, and USD as the exact decimal (never via a float).
        lines += [
            "# HELP switchgate_cost_units_total Amount charged, in units (1 USD = 10^12).",
            "# TYPE switchgate_cost_units_total counter",
        ]
        for model, units in sorted(self.cost_units.items()):
            lines.append(f'switchgate_cost_units_total{{model="{_esc(model)}"}} {units}')
        lines += [
            "# HELP switchgate_cost_usd_total Amount charged, in USD (exact decimal).",
            "# TYPE switchgate_cost_usd_total counter",
        ]
        for model, units in sorted(self.cost_units.items()):
            usd = format_usd_exact(units)
            lines.append(f'switchgate_cost_usd_total{{model="{_esc(model)}"}} {usd}')
        lines += [
            "# HELP switchgate_billing_alerts_total Charges that failed to be written"
            " (charge_failed), were capped (charge_capped) or were lost at shutdown"
            " (records_lost). Any increase needs an operator.",
            "# TYPE switchgate_billing_alerts_total counter",
        ]
        for kind in ("charge_failed", "charge_capped", "records_lost"):
            n = self.billing_alerts.get(kind, 0)
            lines.append(f'switchgate_billing_alerts_total{{kind="{kind}"}} {n}')
        lines += self._histogram("switchgate_latency_ms", "Request latency.", self._latency, True)
        lines += self._histogram("switchgate_ttft_ms", "Time to first byte.", self._ttft, False)
        return "\n".join(lines) + "\n"

    def _histogram(
        self, name: str, help_text: str, table: dict[str, list[int]], with_sum: bool
    ) -> list[str]:
        lines = [f"# HELP {name} {help_text}", f"# TYPE {name} histogram"]
        for endpoint, counts in sorted(table.items()):
            running = 0
            for bound, count in zip((*BUCKETS_MS, "+Inf"), counts, strict=True):
                running += count
                lines.append(f'{name}_bucket{{endpoint="{endpoint}",le="{bound}"}} {running}')
            lines.append(f'{name}_count{{endpoint="{endpoint}"}} {running}')
            if with_sum:
                lines.append(f'{name}_sum{{endpoint="{endpoint}"}} {self._latency_sum[endpoint]}')
        return lines


def _esc(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
