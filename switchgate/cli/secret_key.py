"""`switchgate secret-key generate | rotate` (see docs/deploy.md, "Rotating the secret key")."""

import argparse

from switchgate.cli.ops import Ops
from switchgate.storage.rotate_secrets import rotate


def add_secret_key_commands(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    parser = sub.add_parser("secret-key", help="generate a secret key, or rotate to a new one")
    actions = parser.add_subparsers(dest="action", required=True)
    actions.add_parser("generate", help="print a new random key (base64 of 32 bytes)")
    actions.add_parser(
        "rotate",
        help="re-encrypt every stored secret with SWITCHGATE_SECRET_KEY "
        "(old values are read with SWITCHGATE_SECRET_KEY_PREVIOUS)",
    )


async def run_secret_key(ops: Ops, args: argparse.Namespace) -> None:
    """`rotate` (`generate` is answered in main.py: it needs no database)."""
    counts = await rotate(ops.db, ops.box)
    for table, done in counts.items():
        print(f"{table}: {done} re-encrypted")
    print(f"{sum(counts.values())} secrets now use the current key")
