"""`switchgate` command line. Every command reads SWITCHGATE_DATABASE_URL (default: SQLite
under SWITCHGATE_DATA_DIR, default ./data), so the CLI and a running server share one
database; a running server picks up changes within SWITCHGATE_CONFIG_POLL_SECONDS."""

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from switchgate.accounts.service import AccountError
from switchgate.billing.ledger import LedgerError
from switchgate.catalogue.entries import CatalogueError
from switchgate.cli.audit import add_audit_commands, run_audit
from switchgate.cli.bulk import add_bulk_commands, export_logs, generate_codes
from switchgate.cli.catalogue import add_catalogue_commands, run_catalogue
from switchgate.cli.channel_keys import add_key_commands, run_channel_keys
from switchgate.cli.channel_test import CommandFailed, add_test_command, run_channel_test
from switchgate.cli.charges import add_charges_commands, run_charges
from switchgate.cli.config_file import ConfigError, apply_config, read_config
from switchgate.cli.ops import Ops
from switchgate.cli.prices import add_price_commands, run_prices
from switchgate.cli.progress import Progress
from switchgate.cli.secret_key import add_secret_key_commands, run_secret_key
from switchgate.money import MoneyError, format_usd_exact, usd_to_units
from switchgate.providers.registry import kind_names
from switchgate.routing.channels import ChannelError, channel_options
from switchgate.routing.keys import KeySpec, parse_keys
from switchgate.settings import Settings
from switchgate.storage import migrate
from switchgate.storage.db import Database
from switchgate.storage.notify import publish_config_changed
from switchgate.storage.secrets import SecretBox, new_key

OPERATOR_ERRORS = (
    AccountError,
    LedgerError,
    ChannelError,
    MoneyError,
    ConfigError,
    CatalogueError,
    ValueError,
)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="switchgate", description="Self-hosted LLM API gateway.")
    sub = p.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the gateway")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument("--config", type=Path, help="TOML file with channels, prices, settings")
    serve.add_argument("--workers", type=int, default=1)

    sub.add_parser("migrate", help="create or upgrade the database schema")
    doctor = sub.add_parser("doctor", help="check the set-up and say how to fix what is wrong")
    doctor.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS")

    users = sub.add_parser("users", help="manage users").add_subparsers(
        dest="action", required=True
    )
    add = users.add_parser("add")
    add.add_argument("email")
    add.add_argument("--password")
    add.add_argument("--admin", action="store_true")
    ulimit = users.add_parser(
        "limit", help="requests / tokens per minute over all of a user's tokens"
    )
    ulimit.add_argument("email")
    ulimit.add_argument("--rpm", type=int, help="requests per minute (0: no limit)")
    ulimit.add_argument("--tpm", type=int, help="input + output tokens per minute (0: no limit)")

    balance = sub.add_parser("balance", help="top up or show balances")
    bsub = balance.add_subparsers(dest="action", required=True)
    badd = bsub.add_parser("add", help="add (or with a negative amount, remove) USD")
    badd.add_argument("email")
    badd.add_argument("amount_usd")
    badd.add_argument("--note")
    bshow = bsub.add_parser("show")
    bshow.add_argument("email")

    tokens = sub.add_parser("tokens", help="manage API tokens")
    tsub = tokens.add_subparsers(dest="action", required=True)
    tcreate = tsub.add_parser("create")
    tcreate.add_argument("email")
    tcreate.add_argument("--name", default="")
    tcreate.add_argument("--expires-days", type=float, help="valid for this many days")
    tcreate.add_argument("--limit", metavar="USD", help="spending limit of this token")
    tcreate.add_argument("--models", help="comma-separated models this token may use")
    tcreate.add_argument("--ips", help="comma-separated client IPs or CIDR ranges")
    tcreate.add_argument("--rpm", type=int, help="requests per minute")
    tcreate.add_argument("--tpm", type=int, help="input + output tokens per minute")
    tlist = tsub.add_parser("list")
    tlist.add_argument("email")
    for verb in ("revoke", "disable", "enable"):
        tsub.add_parser(verb).add_argument("token_id", type=int)

    channels = sub.add_parser("channels", help="manage upstream channels")
    csub = channels.add_subparsers(dest="action", required=True)
    cadd = csub.add_parser("add", help="create a channel, or update the one with this name")
    cadd.add_argument("name")
    cadd.add_argument(
        "--kind",
        required=True,
        help="one of: " + ", ".join(kind_names()) + " (docs/providers.md)",
    )
    cadd.add_argument("--base-url", required=True)
    cadd.add_argument(
        "--key",
        action="append",
        default=[],
        help="the API key; repeat for several keys (none for ollama, vllm, lmstudio)",
    )
    cadd.add_argument("--key-weights", help="comma-separated weights, one per --key")
    cadd.add_argument("--models", required=True, help="comma-separated model names")
    cadd.add_argument("--priority", type=int, default=0)
    cadd.add_argument("--weight", type=int, default=1)
    cadd.add_argument("--map", action="append", default=[], metavar="ALIAS=UPSTREAM_MODEL")
    cadd.add_argument("--header", action="append", default=[], metavar="NAME=VALUE")
    cadd.add_argument("--api-version", help="Azure api-version")
    cadd.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a kind-specific setting, e.g. bedrock: region=us-east-1, vertex: "
        "location=us-east5 (docs/providers.md); repeat for several",
    )
    cadd.add_argument(
        "--responses",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="openai kind: the upstream also serves the Responses API (/v1/responses "
        "passthrough); default: on for https://api.openai.com, off for other base URLs",
    )
    csub.add_parser("list")
    for verb in ("enable", "disable"):
        csub.add_parser(verb).add_argument("name")
    add_test_command(csub)
    add_key_commands(csub)

    add_price_commands(sub)
    add_audit_commands(sub)
    add_charges_commands(sub)
    add_secret_key_commands(sub)
    add_catalogue_commands(sub)
    add_bulk_commands(sub)

    config = sub.add_parser("config", help="apply a TOML config file now")
    config.add_argument("file", type=Path)

    mock = sub.add_parser("mock-upstream", help="run the fake upstream (OpenAI, Anthropic, Gemini)")
    mock.add_argument("--host", default="127.0.0.1")
    mock.add_argument("--port", type=int, default=8000)
    mock.add_argument("--key", default="mock-key", help="the API key the fake upstream accepts")
    mock.add_argument(
        "--strict",
        action="store_true",
        help="refuse what the real providers refuse (e.g. role system in Anthropic messages)",
    )
    return p


def _csv(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def _pairs(values: Sequence[str], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key or not val:
            raise ValueError(f"{what} must look like NAME=VALUE, got {value!r}")
        out[key] = val
    return out


async def _with_ops(settings: Settings, job: Callable[[Ops], Awaitable[None]]) -> None:
    db = Database(settings.resolved_database_url())
    bars: list[Progress] = []

    def migrated(done: int, total: int) -> None:
        if not bars:
            bars.append(Progress(total, "migrating the database"))
        bars[0].advance()

    try:
        await migrate.upgrade(db, on_step=migrated)
        for bar in bars:
            bar.close()
        await job(
            Ops(
                db,
                SecretBox.load(
                    settings.secret_key, settings.data_dir, settings.secret_key_previous
                ),
            )
        )
        if settings.redis_url:
            await publish_config_changed(settings.redis_url)
    finally:
        await db.dispose()


Handler = Callable[[Ops, argparse.Namespace], Awaitable[None]]


async def _migrate(ops: Ops, args: argparse.Namespace) -> None:
    print("database schema is up to date")


async def _users_add(ops: Ops, args: argparse.Namespace) -> None:
    user = await ops.add_user(args.email, args.password, args.admin)
    print(f"created {user.role} {user.email} (id {user.id})")


async def _users_limit(ops: Ops, args: argparse.Namespace) -> None:
    rpm, tpm = args.rpm or None, args.tpm or None
    await ops.set_user_rates(args.email, rpm, tpm)
    shown = ", ".join(f"{v} {u} per minute" for v, u in ((rpm, "requests"), (tpm, "tokens")) if v)
    print(f"{args.email.strip().lower()}: {shown or 'no rate limit'}")


async def _balance_add(ops: Ops, args: argparse.Namespace) -> None:
    units = usd_to_units(args.amount_usd, allow_negative=True)
    new = await ops.add_balance(args.email, units, args.note, actor="cli")
    print(f"balance of {args.email.strip().lower()} is now")
    print(format_usd_exact(new))


async def _balance_show(ops: Ops, args: argparse.Namespace) -> None:
    balance, total = await ops.balance(args.email)
    if balance != total:
        print(f"WARNING: ledger sums to {format_usd_exact(total)}", file=sys.stderr)
    print(format_usd_exact(balance))


async def _tokens_create(ops: Ops, args: argparse.Namespace) -> None:
    expires = args.expires_days
    token = await ops.create_token(
        args.email,
        args.name,
        expires_at=int(time.time() * 1000 + expires * 86_400_000) if expires is not None else None,
        quota_limit=usd_to_units(args.limit) if args.limit else None,
        allowed_models=_csv(args.models),
        allowed_ips=_csv(args.ips),
        rpm_limit=args.rpm,
        tpm_limit=args.tpm,
    )
    print(f"token id {token.id} created; it is shown only this once:")
    print(token.token)


async def _tokens_list(ops: Ops, args: argparse.Namespace) -> None:
    for row in await ops.list_tokens(args.email):
        print(f"{row['id']}\t{row['key_prefix']}...\t{row['status']}\t{row['name']}")


async def _tokens_status(ops: Ops, args: argparse.Namespace) -> None:
    status = {"revoke": "deleted", "disable": "disabled", "enable": "active"}[args.action]
    await ops.set_token_status(args.token_id, status)
    print(f"token {args.token_id} is now {status}")


async def _channels_add(ops: Ops, args: argparse.Namespace) -> None:
    extra: dict[str, Any] = {}
    if args.header:
        extra["headers"] = _pairs(args.header, "--header")
    if args.api_version:
        extra["api_version"] = args.api_version
    if args.responses is not None:
        extra["responses"] = args.responses
    extra.update(channel_options(_pairs(args.option, "--option")))
    channel_id, created = await ops.add_channel(
        name=args.name,
        kind=args.kind,
        base_url=args.base_url,
        api_key="",
        keys=_cli_keys(args.key, args.key_weights),
        models=[m for m in args.models.split(",") if m.strip()],
        model_map=_pairs(args.map, "--map"),
        priority=args.priority,
        weight=args.weight,
        extra=extra,
    )
    print(f"channel {args.name} (id {channel_id}) {'created' if created else 'updated'}")


def _cli_keys(keys: list[str], weights: str | None) -> list[KeySpec]:
    values = [w.strip() for w in weights.split(",")] if weights else ["1"] * len(keys)
    if len(values) != len(keys) or not all(v.isdigit() and int(v) >= 1 for v in values):
        raise ChannelError("--key-weights needs one whole number >= 1 per --key")
    try:
        return parse_keys([{"key": k, "weight": int(w)} for k, w in zip(keys, values, strict=True)])
    except ValueError as exc:
        raise ChannelError(str(exc)) from exc


async def _channels_list(ops: Ops, args: argparse.Namespace) -> None:
    for row in await ops.list_channels():
        print(
            f"{row['id']}\t{row['name']}\t{row['kind']}\t{row['status']}\t"
            f"p{row['priority']} w{row['weight']}\t{row['base_url']}\t{row['models']}"
        )


async def _channels_status(ops: Ops, args: argparse.Namespace) -> None:
    await ops.set_channel_status(args.name, args.action + "d")
    print(f"channel {args.name} {args.action}d")


async def _config(ops: Ops, args: argparse.Namespace) -> None:
    config = read_config(args.file)
    bar = Progress(len(config.get("channels", [])) + len(config.get("prices", {})), "importing")
    try:
        lines = await apply_config(ops.db, ops.box, config, step=bar.advance)
    finally:
        bar.close()
    for line in lines:
        print(line)
    if "settings" in config:  # process settings: read at start, not applied at run time
        print("note: [settings] takes effect when a gateway starts with --config this file")


HANDLERS: dict[tuple[str, str], Handler] = {
    ("migrate", ""): _migrate,
    ("users", "add"): _users_add,
    ("users", "limit"): _users_limit,
    ("balance", "add"): _balance_add,
    ("balance", "show"): _balance_show,
    ("tokens", "create"): _tokens_create,
    ("tokens", "list"): _tokens_list,
    ("tokens", "revoke"): _tokens_status,
    ("tokens", "disable"): _tokens_status,
    ("tokens", "enable"): _tokens_status,
    ("channels", "add"): _channels_add,
    ("channels", "list"): _channels_list,
    ("channels", "enable"): _channels_status,
    ("channels", "disable"): _channels_status,
    ("channels", "test"): run_channel_test,
    ("channels", "keys"): run_channel_keys,
    ("channels", "key-enable"): run_channel_keys,
    ("channels", "key-disable"): run_channel_keys,
    ("channels", "key-limit"): run_channel_keys,
    ("prices", "set"): run_prices,
    ("prices", "list"): run_prices,
    ("redemptions", "generate"): generate_codes,
    ("logs", "export"): export_logs,
    ("catalogue", "list"): run_catalogue,
    ("catalogue", "show"): run_catalogue,
    ("catalogue", "import"): run_catalogue,
    ("config", ""): _config,
    ("secret-key", "rotate"): run_secret_key,
    ("audit", "list"): run_audit,
    ("charges", "failed"): run_charges,
    ("charges", "retry"): run_charges,
}


async def _run(args: argparse.Namespace, settings: Settings) -> None:
    handler = HANDLERS[(args.command, getattr(args, "action", None) or "")]
    await _with_ops(settings, lambda ops: handler(ops, args))


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "doctor":
        from switchgate.cli.doctor import run_doctor

        return run_doctor(Settings.from_env, args.timeout)
    if args.command == "secret-key" and args.action == "generate":
        print(new_key())  # needs no database
        return 0
    settings = Settings.from_env()
    try:
        if args.command == "serve":
            from switchgate.cli.serve import serve

            return serve(
                settings, host=args.host, port=args.port, config=args.config, workers=args.workers
            )
        if args.command == "mock-upstream":
            from switchgate.testing.mock_upstream import MockConfig, run

            run(args.host, args.port, MockConfig(api_key=args.key, strict=args.strict))
            return 0
        asyncio.run(_run(args, settings))
    except OPERATOR_ERRORS as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except CommandFailed as failed:
        return failed.status
    return 0
