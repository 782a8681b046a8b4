"""`switchgate charges failed` (the charges the database refused, see docs/billing.md)
and `switchgate charges retry ID` (apply one of them, once)."""

import argparse
from datetime import UTC, datetime

from switchgate import jsonutil
from switchgate.billing.failed_charges import FailedCharge, list_failed, retry_failed
from switchgate.cli.ops import Ops
from switchgate.money import format_usd_exact


def add_charges_commands(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    charges = sub.add_parser("charges", help="charges the database refused, and their retry")
    csub = charges.add_subparsers(dest="action", required=True)
    failed = csub.add_parser("failed", help="list them, oldest first")
    failed.add_argument("--limit", type=int, default=100)
    failed.add_argument("--json", action="store_true", help="one JSON object per line")
    retry = csub.add_parser(
        "retry",
        help="charge one again (ledger row and balance in one transaction; once only). "
        "Not for one already settled by hand with `balance add`",
    )
    retry.add_argument("id", type=int, help="the id `charges failed` shows")


def _time(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _amount(charge: FailedCharge) -> str:
    amount = charge.amount()
    return "?" if amount is None else "$" + format_usd_exact(amount)


def _user(charge: FailedCharge) -> str:
    return charge.email or f"user {charge.user_id} (missing)"


async def run_charges(ops: Ops, args: argparse.Namespace) -> None:
    if args.action == "retry":
        async with ops.db.begin() as conn:
            charge = await retry_failed(conn, args.id, actor="cli")
        print(f"charged {_user(charge)} {_amount(charge)} for request {charge.request_id}")
        return
    async with ops.db.connect() as conn:
        rows = await list_failed(conn, limit=args.limit)
    if args.json:
        for charge in rows:
            print(jsonutil.dumps_str(charge.as_json()))
        return
    if not rows:
        print("no failed charges")
        return
    for charge in rows:
        print(
            f"#{charge.id:<5} {_time(charge.failed_at)}  {_user(charge)}  {_amount(charge)}"
            f"  request {charge.request_id}  {charge.reason}"
        )
