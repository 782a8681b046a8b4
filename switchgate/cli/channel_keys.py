"""`switchgate channels keys NAME` (every key of a channel: weight, caps, status, and why
and when it was disabled), `switchgate channels key-enable|key-disable NAME POSITION` and
`switchgate channels key-limit NAME POSITION [--weight N] [--max-concurrency N] [--rpm N]`."""

import argparse
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate.audit.actions import Entry, record
from switchgate.cli.ops import Ops
from switchgate.routing.channels import ChannelError, load_channels
from switchgate.routing.keys import (
    ChannelKey,
    parse_cap,
    parse_weight,
    set_key_settings,
    set_key_status,
)
from switchgate.storage.tables import channels


def add_key_commands(csub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    keys = csub.add_parser("keys", help="list a channel's API keys and their status")
    keys.add_argument("name")
    for verb in ("key-enable", "key-disable"):
        cmd = csub.add_parser(verb, help=f"{verb.split('-')[1]} one key of a channel by hand")
        cmd.add_argument("name")
        cmd.add_argument("position", type=int, help="the key's position (see `channels keys`)")
    limit = csub.add_parser("key-limit", help="set one key's weight and caps (0: no cap)")
    limit.add_argument("name")
    limit.add_argument("position", type=int, help="the key's position (see `channels keys`)")
    limit.add_argument("--weight", type=int)
    limit.add_argument(
        "--max-concurrency", type=int, help="calls in flight on this key at once (0: no cap)"
    )
    limit.add_argument("--rpm", type=int, help="calls sent with this key in any 60 s (0: no cap)")


def describe(key: ChannelKey) -> str:
    """`weight 1`, plus the key's caps when it has any."""
    text = f"weight {key.weight}"
    if key.max_concurrency is not None:
        text += f", max {key.max_concurrency} in flight"
    if key.rpm is not None:
        text += f", {key.rpm} rpm"
    return text


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
            line = f"{key.position}\t{key.hint()}\t{describe(key)}\t{key.status}"
            if not key.enabled:
                line += f"\t{_when(key.disabled_at)}\t{key.reason or ''}"
            print(line)
        return
    if args.action == "key-limit":
        await _key_limit(ops, args)
        return
    enable = args.action == "key-enable"
    async with ops.db.begin() as conn:
        channel_id = await _channel_id(conn, args.name)
        reason = None if enable else "disabled by hand"
        if not await set_key_status(conn, channel_id, args.position, enable, reason):
            raise ChannelError(f"channel {args.name!r} has no key at position {args.position}")
        target = f"{args.name} key {args.position}"
        await record(conn, Entry("cli", f"cli channels {args.action}", target))
    print(f"channel {args.name}: key {args.position} {'enabled' if enable else 'disabled'}")


async def _channel_id(conn: AsyncConnection, name: str) -> int:
    channel_id = await conn.scalar(select(channels.c.id).where(channels.c.name == name))
    if channel_id is None:
        raise ChannelError(f"no channel named {name!r}")
    return int(channel_id)


async def _key_limit(ops: Ops, args: argparse.Namespace) -> None:
    settings: dict[str, int | None] = {}
    try:
        if args.weight is not None:
            settings["weight"] = parse_weight(args.weight)
        if args.max_concurrency is not None:
            settings["max_concurrency"] = parse_cap("max_concurrency", args.max_concurrency)
        if args.rpm is not None:
            settings["rpm"] = parse_cap("rpm", args.rpm)
    except ValueError as exc:
        raise ChannelError(str(exc)) from exc
    if not settings:
        raise ChannelError("give --weight, --max-concurrency or --rpm")
    async with ops.db.begin() as conn:
        channel_id = await _channel_id(conn, args.name)
        if not await set_key_settings(conn, channel_id, args.position, settings):
            raise ChannelError(f"channel {args.name!r} has no key at position {args.position}")
        target = f"{args.name} key {args.position}"
        await record(conn, Entry("cli", "cli channels key-limit", target, detail=settings))
    print(f"channel {args.name}: key {args.position} {settings}")
