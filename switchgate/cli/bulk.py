"""Bulk CLI work with a progress bar on a terminal: `switchgate redemptions generate` and
`switchgate logs export`. Their output (codes, CSV) goes to stdout or `--out FILE`; the bar
and the summary go to stderr, so a pipe gets clean data."""

import argparse
import csv
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from switchgate.accounts import service as accounts
from switchgate.audit.actions import Entry, record
from switchgate.billing import redemption
from switchgate.cli.ops import Ops
from switchgate.cli.progress import Progress
from switchgate.console import queries
from switchgate.console.api.logs import CSV_COLUMNS
from switchgate.console.csv_safe import safe_row
from switchgate.money import format_usd_exact, usd_to_units


def add_bulk_commands(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    codes = sub.add_parser("redemptions", help="redemption codes")
    csub = codes.add_subparsers(dest="action", required=True)
    gen = csub.add_parser("generate", help="a batch of single-use codes (printed once)")
    gen.add_argument("count", type=int)
    gen.add_argument("amount_usd", help="what each code is worth")
    gen.add_argument("--note")
    gen.add_argument("--out", type=Path, help="write the codes here instead of stdout")

    logs = sub.add_parser("logs", help="request logs")
    lsub = logs.add_subparsers(dest="action", required=True)
    export = lsub.add_parser("export", help="request logs as CSV, newest first")
    export.add_argument("--user", metavar="EMAIL", help="one user's logs (default: everyone's)")
    export.add_argument("--model")
    export.add_argument("--status", help="ok, error or a status code")
    export.add_argument("--since", metavar="YYYY-MM-DD", help="from this UTC day on")
    export.add_argument("--limit", type=int, default=100_000, help="at most this many rows")
    export.add_argument("--out", type=Path, help="write the CSV here instead of stdout")


@contextmanager
def _output(path: Path | None) -> Iterator[TextIO]:
    if path is None:
        yield sys.stdout
        return
    with path.open("w", newline="", encoding="utf-8") as handle:
        yield handle


def _day_ms(text: str) -> int:
    try:
        day = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError as exc:
        raise ValueError(f"--since must look like 2026-01-31, got {text!r}") from exc
    return int(day.timestamp() * 1000)


async def generate_codes(ops: Ops, args: argparse.Namespace) -> None:
    amount = usd_to_units(args.amount_usd)
    bar = Progress(args.count, "generating codes")
    try:
        async with ops.db.begin() as conn:
            batch = await redemption.generate(
                conn,
                ops.box,
                count=args.count,
                amount=amount,
                note=args.note,
                actor="cli",
                on_inserted=bar.advance,
            )
            detail = {"count": args.count, "amount_usd": args.amount_usd, "note": args.note}
            await record(conn, Entry("cli", "cli redemptions generate", batch.batch, detail=detail))
    finally:
        bar.close()
    with _output(args.out) as out:
        out.write("".join(code + "\n" for code in batch.codes))
    where = f" (written to {args.out})" if args.out else ""
    print(
        f"batch {batch.batch}: {len(batch.codes)} codes worth "
        f"{format_usd_exact(amount)} USD each{where}; they are shown only this once",
        file=sys.stderr,
    )


async def export_logs(ops: Ops, args: argparse.Namespace) -> None:
    async with ops.db.connect() as conn:
        user_id = (await accounts.get_user(conn, args.user)).id if args.user else None
        log_filter = queries.LogFilter(
            user_id=user_id,
            model=args.model,
            status=args.status,
            since=_day_ms(args.since) if args.since else None,
        )
        rows = await queries.stream_logs(conn, log_filter, max(1, args.limit))
    bar = Progress(len(rows), "exporting logs")
    try:
        with _output(args.out) as out:
            writer = csv.writer(out)
            writer.writerow(CSV_COLUMNS)
            for row in rows:
                item = queries.log_row(row)
                writer.writerow(safe_row([item.get(c) for c in CSV_COLUMNS]))
                bar.advance()
    finally:
        bar.close()
    print(f"{len(rows)} request log rows exported", file=sys.stderr)
