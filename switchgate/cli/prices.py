"""`switchgate prices set|list`: token prices (USD per 1M) and the media prices
(per image, per 1M characters, per minute, per request), stored as integer units."""

import argparse

from switchgate import jsonutil
from switchgate.billing.media_pricing import describe_extra, media_extra, parse_image_price
from switchgate.billing.prices import PRICE_KINDS
from switchgate.cli.ops import Ops
from switchgate.money import (
    format_usd_exact,
    per_million_to_unit_price,
    unit_price_to_per_million,
    usd_to_units,
)


def add_price_commands(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    prices = sub.add_parser("prices", help="set model prices")
    psub = prices.add_subparsers(dest="action", required=True)
    pset = psub.add_parser("set", help="set a model's price (replaces the previous one)")
    pset.add_argument("model")
    pset.add_argument("--kind", default="chat", choices=PRICE_KINDS)
    pset.add_argument("--input", help="USD per 1M input tokens (required for chat)")
    pset.add_argument("--output", help="USD per 1M output tokens (required for chat)")
    pset.add_argument("--cache-read", help="USD per 1M cached input tokens")
    pset.add_argument("--cache-write", help="USD per 1M cache-write tokens")
    pset.add_argument("--per-request", help="USD added to every call")
    pset.add_argument("--per-image", help="USD per image, any size and quality")
    pset.add_argument(
        "--image-price",
        action="append",
        default=[],
        metavar="SIZE:QUALITY=USD",
        help="USD per image of one size (and quality), e.g. 1024x1024:hd=0.08; repeatable",
    )
    pset.add_argument("--per-1m-characters", help="USD per 1M input characters (speech)")
    pset.add_argument("--per-minute", help="USD per minute of audio (transcription)")
    psub.add_parser("list")


def _per_m(value: str | None) -> int | None:
    return per_million_to_unit_price(value) if value else None


async def run_prices(ops: Ops, args: argparse.Namespace) -> None:
    if args.action == "set":
        if args.kind == "chat" and (args.input is None or args.output is None):
            raise ValueError("chat prices need --input and --output (USD per 1M tokens)")
        extra = media_extra(
            per_image=args.per_image,
            image_prices=[parse_image_price(p) for p in args.image_price],
            per_1m_characters=args.per_1m_characters,
            per_minute=args.per_minute,
        )
        await ops.set_price(
            args.model,
            kind=args.kind,
            input=_per_m(args.input) or 0,
            output=_per_m(args.output) or 0,
            cache_read=_per_m(args.cache_read),
            cache_write=_per_m(args.cache_write),
            per_request=usd_to_units(args.per_request) if args.per_request else 0,
            extra=extra,
        )
        print(f"price of {args.model} set")
        return
    for row in await ops.list_prices():
        line = (
            f"{row['model']}\t{row['kind']}"
            f"\tinput {unit_price_to_per_million(int(str(row['input'])))}"
            f"\toutput {unit_price_to_per_million(int(str(row['output'])))} USD/1M"
        )
        per_request = int(str(row.get("per_request") or 0))
        if per_request:
            line += f"\tper_request {format_usd_exact(per_request)}"
        extra = jsonutil.loads(str(row.get("extra") or "{}"))
        if isinstance(extra, dict) and extra:
            line += f"\t{describe_extra(extra)}"
        if row.get("source"):
            line += f"\t(from {row['source']})"
        print(line)
