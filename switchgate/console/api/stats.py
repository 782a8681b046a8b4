"""Admin dashboard: site-wide usage over time, per model, per channel and per user, from
the hourly rollups (console/rollup.py), optionally for one model and / or one channel
(every chart and table then shows that slice), and the first-run checklist."""

from collections.abc import Callable, Hashable
from typing import Any, Final

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from starlette.requests import Request

from switchgate.console import rollup
from switchgate.console.api.registry import ApiRoute
from switchgate.console.deps import Actor, ApiError, gw
from switchgate.console.rollup import HOUR_MS, Histogram, Usage
from switchgate.money import format_usd_exact
from switchgate.storage.db import now_ms
from switchgate.storage.tables import request_logs, sessions, tokens, users

DAY_MS: Final = 24 * HOUR_MS
RANGES: Final = {"24h": (DAY_MS, HOUR_MS), "7d": (7 * DAY_MS, HOUR_MS),
                 "30d": (30 * DAY_MS, DAY_MS), "90d": (90 * DAY_MS, DAY_MS)}  # fmt: skip
TOP_SERIES: Final = 6  # models / channels drawn apart in the spend charts; the rest: "other"
TOP_USERS: Final = 20
UNITS_PER_USD: Final = 10**12
NO_NAME: Final = "(none)"  # requests that never got a model or a channel


def _percentiles(hist: Histogram | None) -> dict[str, int | None]:
    hist = hist or Histogram()
    return {"p50_ms": hist.percentile(0.5), "p95_ms": hist.percentile(0.95)}


def _numbers(usage: Usage) -> dict[str, Any]:
    return {
        "requests": usage.requests,
        "errors": usage.errors,
        "stopped": usage.stopped,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "spend_usd": format_usd_exact(usage.cost),
    }


class Summary:
    """Usage and latency histograms grouped by a key."""

    def __init__(self) -> None:
        self.usage: dict[Hashable, Usage] = {}
        self.latency: dict[tuple[Hashable, str], Histogram] = {}

    def add_usage(self, key: Hashable, usage: Usage) -> None:
        self.usage.setdefault(key, Usage()).add(usage)

    def add_latency(self, key: Hashable, metric: str, bucket: int, count: int) -> None:
        self.latency.setdefault((key, metric), Histogram()).add(bucket, count)

    def row(self, key: Hashable) -> dict[str, Any]:
        latency = _percentiles(self.latency.get((key, "latency")))
        ttft = _percentiles(self.latency.get((key, "ttft")))
        return {
            **_numbers(self.usage.get(key, Usage())),
            "p50_ms": latency["p50_ms"],
            "p95_ms": latency["p95_ms"],
            "ttft_p50_ms": ttft["p50_ms"],
            "ttft_p95_ms": ttft["p95_ms"],
        }


def summarise(
    data: rollup.Rollup, key: Callable[[int, str, int, int], Hashable], with_latency: bool = True
) -> Summary:
    """Group rows by key(hour, model, channel_id, user_id); latency rows have user_id -1."""
    out = Summary()
    for r in data.usage:
        out.add_usage(key(r.hour, r.model, r.channel_id, r.user_id), r.usage)
    if with_latency:
        for lat in data.latency:
            out.add_latency(key(lat.hour, lat.model, lat.channel_id, -1), lat.metric, lat.bucket,
                            lat.count)  # fmt: skip
    return out


def _spend_series(
    data: rollup.Rollup, times: list[int], step: int, name: Callable[[str, int], str]
) -> dict[str, list[float]]:
    """USD spent per step for the biggest spenders by name (the rest as "other")."""
    totals: dict[str, int] = {}
    per: dict[tuple[str, int], int] = {}
    for r in data.usage:
        label = name(r.model, r.channel_id)
        totals[label] = totals.get(label, 0) + r.usage.cost
        slot = r.hour // step * step
        per[(label, slot)] = per.get((label, slot), 0) + r.usage.cost
    ranked = [k for k, v in sorted(totals.items(), key=lambda kv: -kv[1]) if v > 0]
    top = ranked[:TOP_SERIES]
    series: dict[str, list[float]] = {k: [0.0] * len(times) for k in top}
    index = {t: i for i, t in enumerate(times)}
    for (label, slot), units in per.items():
        if slot not in index:
            continue
        target = label if label in series else "other"
        series.setdefault(target, [0.0] * len(times))[index[slot]] += units / UNITS_PER_USD
    return series


def _filters(request: Request) -> tuple[str | None, int | None]:
    """?model=NAME ("(none)": requests without one) and ?channel=ID (0: without one)."""
    model = request.query_params.get("model") or None
    channel = request.query_params.get("channel") or None
    if channel is not None and not channel.isdigit():
        raise ApiError(400, "channel must be a channel id", "invalid")
    return ("" if model == NO_NAME else model), (None if channel is None else int(channel))


def only(data: rollup.Rollup, model: str | None, channel_id: int | None) -> rollup.Rollup:
    """The rows of one model and / or one channel (None: any)."""

    def keep(row_model: str, row_channel: int) -> bool:
        return (model is None or row_model == model) and (
            channel_id is None or row_channel == channel_id
        )

    return rollup.Rollup(
        [r for r in data.usage if keep(r.model, r.channel_id)],
        [r for r in data.latency if keep(r.model, r.channel_id)],
    )


async def _names(request: Request, user_ids: list[int]) -> dict[int, str]:
    if not user_ids:
        return {}
    async with gw(request).db.connect() as conn:
        rows = await conn.execute(select(users.c.id, users.c.email).where(users.c.id.in_(user_ids)))
        return {int(r.id): str(r.email) for r in rows}


async def checklist(request: Request) -> list[dict[str, Any]]:
    state = gw(request)
    catalog = state.catalog
    async with state.db.connect() as conn:
        playground = select(sessions.c.playground_token_id).where(
            sessions.c.playground_token_id.is_not(None)
        )
        own_tokens = await conn.scalar(
            select(func.count())
            .select_from(tokens)
            .where(tokens.c.status != "deleted", tokens.c.id.not_in(playground))
        )
        tried = await conn.scalar(select(request_logs.c.id).limit(1))
    return [
        {"key": "channel", "label": "Add a channel (an upstream provider and its key)",
         "href": "/console/channel", "done": bool(catalog.channels)},
        {"key": "prices", "label": "Set prices for the models the channels serve",
         "href": "/console/models", "done": bool(catalog.models())},
        {"key": "token", "label": "Create an API token", "href": "/console/token",
         "done": bool(own_tokens)},
        {"key": "playground", "label": "Try a model in the playground",
         "href": "/console/playground", "done": tried is not None},
    ]  # fmt: skip


async def admin_stats(request: Request, actor: Actor) -> dict[str, Any]:
    wanted = request.query_params.get("range") or "7d"
    if wanted not in RANGES:
        raise ApiError(400, f"range must be one of {', '.join(RANGES)}", "invalid")
    span, step = RANGES[wanted]
    model_filter, channel_filter = _filters(request)
    state, now = gw(request), now_ms()
    until = now // step * step + step
    since = until - span
    try:
        async with state.db.begin() as conn:
            await rollup.catch_up(conn, since, now)
    except IntegrityError:
        pass  # another process rolled the same hours up just now
    async with state.db.connect() as conn:
        everything = await rollup.read(conn, since, now)
    data = only(everything, model_filter, channel_filter)
    times = list(range(since, until, step))
    over_time = summarise(data, lambda hour, *_: hour // step * step)
    total = summarise(data, lambda *_: "all").row("all")
    by_model = summarise(data, lambda _h, model, *_: model)
    by_channel = summarise(data, lambda _h, _m, channel, _u: channel)
    by_user = summarise(data, lambda *k: k[3], with_latency=False)
    channel_names = {c.id: c.name for c in state.catalog.channels}

    def channel_name(channel_id: int) -> str:
        if channel_id == 0:
            return NO_NAME
        return channel_names.get(channel_id, f"#{channel_id} (removed)")

    ranked_users = sorted(by_user.usage, key=lambda u: -by_user.usage[u].cost)[:TOP_USERS]
    emails = await _names(request, [int(str(u)) for u in ranked_users])
    points = [over_time.row(t) for t in times]
    model_names = {r.model for r in everything.usage}
    channel_ids = {r.channel_id for r in everything.usage}
    return {
        "range": wanted,
        "filter": {"model": _model_label(model_filter), "channel_id": channel_filter},
        "choices": {  # what the period has, to filter by (whatever the filter is)
            "models": sorted(_model_label(m) for m in model_names),
            "channels": sorted(
                ({"channel_id": c, "name": channel_name(c)} for c in channel_ids),
                key=lambda c: str(c["name"]),
            ),
        },
        "since": since,
        "until": until,
        "step_ms": step,
        "totals": total,
        "series": {
            "t": times,
            "requests": [p["requests"] for p in points],
            "errors": [p["errors"] for p in points],
            "stopped": [p["stopped"] for p in points],
            "spend": [int(over_time.usage.get(t, Usage()).cost) / UNITS_PER_USD for t in times],
            "p50_ms": [p["p50_ms"] for p in points],
            "p95_ms": [p["p95_ms"] for p in points],
            "ttft_p50_ms": [p["ttft_p50_ms"] for p in points],
            "ttft_p95_ms": [p["ttft_p95_ms"] for p in points],
        },
        "spend_by_model": _spend_series(data, times, step, lambda m, _c: m or NO_NAME),
        "spend_by_channel": _spend_series(data, times, step, lambda _m, c: channel_name(c)),
        "models": sorted(
            ({"model": m or NO_NAME, **by_model.row(m)} for m in by_model.usage),
            key=lambda r: (-r["requests"], r["model"]),
        ),
        "channels": sorted(
            (
                {"channel_id": c, "name": channel_name(int(str(c))), **by_channel.row(c)}
                for c in by_channel.usage
            ),
            key=lambda r: (-r["requests"], r["name"]),
        ),
        "users": [
            {"user_id": u, "email": emails.get(int(str(u)), f"#{u}"), **_numbers(by_user.usage[u])}
            for u in ranked_users
        ],
        "checklist": await checklist(request),
    }


def _model_label(model: str | None) -> str | None:
    return None if model is None else (model or NO_NAME)


ROUTES = [
    ApiRoute(
        "GET",
        "/api/admin/stats",
        admin_stats,
        "Site-wide usage (range 24h | 7d | 30d | 90d), or one model's (model=NAME) and / or "
        "one channel's (channel=ID): totals, requests / errors / spend / p50 and p95 latency "
        "and time to first token over time, spend over time per model and per channel, "
        "per-model and per-channel tables, the top users by spend, the models and channels "
        "the period has (to filter by), and the first-run checklist",
        "admin",
        admin=True,
        query=("range", "model", "channel"),
    ),
]
