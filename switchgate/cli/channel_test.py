"""`switchgate channels test [NAME]`: a real minimal call through each channel (or one),
with latency, the upstream's model name and a diagnosis; on 401/403 it offers to disable
the channel (its key). Exit status 1 when a channel failed."""

import argparse
import sys
from collections.abc import Callable

from switchgate.billing.prices import load_prices
from switchgate.cli.ops import Ops
from switchgate.cli.progress import Progress
from switchgate.providers.registry import provider_kinds
from switchgate.relay.probe import DEFAULT_TIMEOUT, ProbeResult, probe_channel
from switchgate.relay.upstream import UpstreamClient
from switchgate.routing.channels import Channel, ChannelError, load_channels
from switchgate.settings import Timeouts


class CommandFailed(Exception):
    """A command ran but found problems: exit with this status, no extra message."""

    def __init__(self, status: int = 1) -> None:
        super().__init__(status)
        self.status = status


def add_test_command(csub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    ctest = csub.add_parser("test", help="send a tiny real request through each channel")
    ctest.add_argument("name", nargs="?", help="only this channel (default: every enabled one)")
    ctest.add_argument("--model", help="the model to try (default: one the channel serves)")
    ctest.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS")
    ctest.add_argument(
        "--disable-failing-keys",
        action="store_true",
        help="disable channels whose key is rejected (401/403) without asking",
    )


def format_result(r: ProbeResult) -> list[str]:
    head = f"{r.channel}: {r.outcome.upper()}"
    detail = f"{r.call} {r.model}" + (f" -> {r.upstream_model}" if r.upstream_model else "")
    lines = [f"{head}  {detail}  {r.latency_ms} ms" + (f"  HTTP {r.status}" if r.status else "")]
    if r.message:
        lines.append(f"    {r.message}")
    if r.diagnosis:
        lines.append(f"    diagnosis: {r.diagnosis}")
    return lines


async def probe_all(
    ops: Ops, name: str | None, model: str | None, timeout: float
) -> list[tuple[Channel, ProbeResult]]:
    async with ops.db.connect() as conn:
        loaded = await load_channels(conn, ops.box)
        prices = await load_prices(conn)
    if name is not None:
        chosen = [c for c in loaded if c.name == name]
        if not chosen:
            raise ChannelError(f"no channel named {name!r} (see `switchgate channels list`)")
    else:
        chosen = [c for c in loaded if c.status == "enabled"]
    client = UpstreamClient(Timeouts(connect=timeout, first_byte=timeout, idle=timeout))
    await client.start()
    kinds = provider_kinds()
    bar = Progress(len(chosen), "testing channels")
    results = []
    try:
        for c in chosen:
            probe = probe_channel(client, kinds, c, prices=prices, model=model, timeout=timeout)
            results.append((c, await probe))
            bar.advance(note=c.name)
    finally:
        bar.close()
        await client.close()
    return results


def _ask(question: str) -> bool:
    try:
        return input(question).strip().lower() in ("y", "yes")
    except EOFError:
        return False


async def run_channel_test(
    ops: Ops, args: argparse.Namespace, ask: Callable[[str], bool] | None = None
) -> None:
    results = await probe_all(ops, args.name, args.model, args.timeout)
    if not results:
        print("no enabled channels to test (add one: switchgate channels add NAME ...)")
        return
    interactive = ask is not None or sys.stdin.isatty()
    ask = ask or _ask
    failed = 0
    for channel, result in results:
        for line in format_result(result):
            print(line)
        if result.outcome != "failed":
            continue
        failed += 1
        if not result.disable_suggested or channel.status != "enabled":
            continue
        if args.disable_failing_keys or (
            interactive and ask(f"    disable channel {channel.name} (its key)? [y/N] ")
        ):
            await ops.set_channel_status(channel.name, "disabled")
            print(f"    channel {channel.name} disabled")
        else:
            print(f"    to disable it: switchgate channels disable {channel.name}")
    print(f"{len(results) - failed} of {len(results)} channels answered")
    if failed:
        raise CommandFailed(1)
