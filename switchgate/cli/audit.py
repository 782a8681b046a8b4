"""`switchgate audit list`: the audit log of admin actions, newest first."""

import argparse
import sys

from switchgate import jsonutil
from switchgate.audit.actions import list_entries
from switchgate.cli.ops import Ops
from switchgate.console.csv_safe import safe_row


def add_audit_commands(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    audit = sub.add_parser("audit", help="the audit log of admin actions (append-only)")
    asub = audit.add_subparsers(dest="action", required=True)
    alist = asub.add_parser("list", help="newest first")
    alist.add_argument("--limit", type=int, default=50)
    alist.add_argument("--actor", help="only this admin's (e-mail, or cli)")
    alist.add_argument("--action", dest="filter_action", help="only actions containing this")
    alist.add_argument("--format", choices=("table", "json", "csv"), default="table")


async def run_audit(ops: Ops, args: argparse.Namespace) -> None:
    async with ops.db.connect() as conn:
        rows = await list_entries(
            conn, limit=args.limit, actor=args.actor, action=args.filter_action
        )
    if args.format == "json":
        for row in rows:
            print(jsonutil.dumps_str(row))
        return
    if args.format == "csv":
        import csv

        writer = csv.writer(sys.stdout)
        columns = ("id", "created_at", "actor", "action", "target", "ip", "detail")
        writer.writerow(columns)
        for row in rows:
            writer.writerow(safe_row([row.get(c) for c in columns]))
        return
    for row in rows:
        print(
            f"{row['id']:>6}  {row['created_at']}  {row['actor']}  {row['action']}  "
            f"{row['target']}  {row['ip'] or '-'}  {row['detail'] or ''}"
        )
