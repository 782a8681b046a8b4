"""`switchgate channels keys NAME` (every key of a channel: weight, status, and why and when
it was disabled) and `switchgate channels key-enable|key-disable NAME POSITION`."""

import argparse
from datetime import UTC, datetime

from sqlalchemy import select

from switchgate.cli.ops import Ops
from switchgate.routing.channels import ChannelError, load_channels
from switchgate.routing.keys import set_key_status
from switchgate.storage.tables import channels


def add_key_commands(csub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    keys = csub.add_parser("keys", help="list a channel's API keys and their status")
    keys.add_argument("name")
    for verb in ("key-enable", "key-disable"):
        cmd = csub.add_parser(verb, help=f"{verb.split('-')[1]} one key of a channel by hand")
        cmd.add_argument("name")
        cmd.add_argument("position", type=int, help="the key's position (see `channels keys`)")


def _when(ms: int | None) -> str:
    if ms is None:
        return ""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


async def run_channel_keys(ops: Ops, args: argparse.Namespace) -> None:
    if args.action == "keys":
        async with ops.db.connect() as conn:
            found = [c for c in await load_channels(conn, ops.box) if c.name == args.name]
        if not found:
            raise ChannelError(f"no channel named {args.name!r}")
        for key in found[0].key_list():
            line = f"{key.position}\t{key.hint()}\tweight {key.weight}\t{key.status}"
            if not key.enabled:
                line += f"\t{_when(key.disabled_at)}\t{key.reason or ''}"
            print(line)
        return
    enable = args.action == "key-enable"
    async with ops.db.begin() as conn:
        channel_id = await conn.scalar(select(channels.c.id).where(channels.c.name == args.name))
        if channel_id is None:
            raise ChannelError(f"no channel named {args.name!r}")
        reason = None if enable else "disabled by hand"
        if not await set_key_status(conn, int(channel_id), args.position, enable, reason):
            raise ChannelError(f"channel {args.name!r} has no key at position {args.position}")
    print(f"channel {args.name}: key {args.position} {'enabled' if enable else 'disabled'}")
