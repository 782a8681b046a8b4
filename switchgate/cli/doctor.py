"""`switchgate doctor`: checks settings, the database and its migration head, Redis, the
secret key, every enabled channel (a real tiny call, as `channels test`) and a price for
every served model; prints what is wrong with the exact command that fixes it, and exits
1 when anything is. It only reads: no migration, no key file, no change."""

import asyncio
import base64
import binascii
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import make_url

from switchgate.billing.pricing import Price
from switchgate.cli.progress import Progress
from switchgate.providers.registry import RERANK, ProviderKind, provider_kinds
from switchgate.relay.probe import ProbeResult, probe_channel
from switchgate.relay.upstream import UpstreamClient
from switchgate.routing.channels import Channel, load_channels
from switchgate.settings import Settings, Timeouts
from switchgate.storage import migrate
from switchgate.storage.db import Database
from switchgate.storage.secrets import SecretBox

NEW_KEY = "python -c 'import base64,os; print(base64.b64encode(os.urandom(32)).decode())'"


@dataclass(frozen=True)
class Finding:
    check: str
    ok: bool
    message: str
    fix: str | None = None

    def lines(self) -> list[str]:
        out = [f"{'ok  ' if self.ok else 'FAIL'}  {self.check:<12} {self.message}"]
        if self.fix:
            out += [f"{'':18}fix: {line}" for line in self.fix.splitlines()]
        return out


def safe_url(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "(unparseable URL)"


def check_secret(settings: Settings) -> tuple[Finding, SecretBox | None]:
    if settings.secret_key:
        try:
            box = SecretBox(base64.b64decode(settings.secret_key, validate=True))
        except (ValueError, binascii.Error):
            fix = f'export SWITCHGATE_SECRET_KEY="$({NEW_KEY})"  (then re-enter channel keys)'
            return Finding(
                "secret key", False, "SWITCHGATE_SECRET_KEY is not base64 of 32 bytes", fix
            ), None
        return Finding("secret key", True, "from SWITCHGATE_SECRET_KEY"), box
    path = settings.data_dir / "secret.key"
    if not path.exists():
        return Finding("secret key", True, f"{path} will be created at first start"), None
    try:
        return Finding("secret key", True, f"from {path}"), SecretBox.load(None, settings.data_dir)
    except (ValueError, binascii.Error, OSError) as exc:
        fix = f"restore the original {path}, or set SWITCHGATE_SECRET_KEY"
        return Finding("secret key", False, f"{path} is unreadable ({exc})", fix), None


async def check_database(db: Database, timeout: float) -> list[Finding]:
    where = safe_url(db.url)
    try:
        async with asyncio.timeout(timeout), db.connect() as conn:
            await conn.execute(text("SELECT 1"))
        status = await asyncio.wait_for(migrate.current_status(db), timeout)
    except Exception as exc:
        fix = "start the database, or point SWITCHGATE_DATABASE_URL at it"
        reason = type(exc).__name__ if isinstance(exc, TimeoutError) else str(exc).splitlines()[0]
        return [Finding("database", False, f"cannot connect to {where}: {reason[:200]}", fix)]
    found = [Finding("database", True, f"{where} answers")]
    head = migrate.head_revision()
    if status in ("behind", "empty"):
        what = "has no schema yet" if status == "empty" else "has migrations pending"
        found.append(
            Finding("migrations", False, f"the database {what} (head {head})", "switchgate migrate")
        )
    elif status == "ahead":
        found.append(
            Finding("migrations", True, "schema is newer than this release (expand/contract: fine)")
        )
    else:
        found.append(Finding("migrations", True, f"at head {head}"))
    return found


async def check_redis(url: str | None, timeout: float) -> Finding:
    if not url:
        return Finding("redis", True, "not configured (one process: limits are kept in memory)")
    from redis.asyncio import Redis

    client = Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    try:
        await asyncio.wait_for(client.ping(), timeout)
    except Exception as exc:
        fix = "start Redis, or fix SWITCHGATE_REDIS_URL (unset it to run one process without Redis)"
        return Finding(
            "redis", False, f"{safe_url(url)} does not answer ({type(exc).__name__})", fix
        )
    finally:
        await client.aclose()
    return Finding("redis", True, f"{safe_url(url)} answers")


def channel_fix(channel: Channel, result: ProbeResult) -> str:
    disable = f"switchgate channels disable {channel.name}"
    models = ",".join(channel.models)
    again = f"switchgate channels add {channel.name} --kind {channel.kind} --base-url "
    if result.status in (401, 403):
        return f"{again}{channel.base_url} --key NEW_KEY --models {models}\nor: {disable}"
    if result.status == 404:
        return f"{again}URL --key KEY --models {models} --map MODEL=UPSTREAM_NAME\nor: {disable}"
    if result.status is None:
        return f"{again}URL --key KEY --models {models}   (the right address)\nor: {disable}"
    return f"switchgate channels test {channel.name}   (again later)\nor: {disable}"


def price_fix(model: str, channel: Channel, kinds: Mapping[str, ProviderKind]) -> str:
    kind = kinds.get(channel.kind)
    if kind is not None and kind.endpoints == frozenset({RERANK}):
        return f"switchgate prices set {model} --kind rerank --per-request USD"
    return f"switchgate prices set {model} --input USD_PER_1M --output USD_PER_1M"


def check_prices(
    enabled: list[Channel], prices: Mapping[str, Price], kinds: Mapping[str, ProviderKind]
) -> list[Finding]:
    missing: dict[str, Channel] = {}
    for channel in enabled:
        for model in channel.models:
            if model not in prices:
                missing.setdefault(model, channel)
    if not missing:
        served = {m for c in enabled for m in c.models}
        return [Finding("prices", True, f"every served model has a price ({len(served)})")]
    return [
        Finding(
            "prices",
            False,
            f"model '{model}' (channel {channel.name}) has no price: clients get 404",
            price_fix(model, channel, kinds),
        )
        for model, channel in missing.items()
    ]


async def check_channels(
    db: Database, box: SecretBox | None, settings: Settings, timeout: float
) -> list[Finding]:
    from switchgate.billing.prices import load_prices

    async with db.connect() as conn:
        prices = await load_prices(conn)
        try:
            loaded = await load_channels(conn, box or SecretBox(bytes(32)))
        except Exception:
            fix = (
                "set SWITCHGATE_SECRET_KEY (or put back data_dir/secret.key) to the key "
                "the channels were saved with"
            )
            return [Finding("secret key", False, "cannot decrypt the channels' keys", fix)]
    enabled = [c for c in loaded if c.status == "enabled"]
    if not enabled:
        fix = "switchgate channels add NAME --kind openai --base-url URL --key KEY --models M"
        return [Finding("channels", False, "no enabled channel: nothing can be served", fix)]
    client = UpstreamClient(Timeouts(connect=timeout, first_byte=timeout, idle=timeout))
    await client.start()
    kinds = provider_kinds()
    found: list[Finding] = []
    bar = Progress(len(enabled), "testing channels")
    try:
        for channel in enabled:
            r = await probe_channel(client, kinds, channel, prices=prices, timeout=timeout)
            bar.advance(note=channel.name)
            label = f"{r.call} {r.model} in {r.latency_ms} ms"
            if r.outcome == "failed":
                message = f"{channel.name}: {r.diagnosis or r.message}"
                found.append(Finding("channel", False, message, channel_fix(channel, r)))
            else:
                found.append(Finding("channel", True, f"{channel.name}: {r.outcome} ({label})"))
    finally:
        bar.close()
        await client.close()
    return found + check_prices(enabled, prices, kinds)


async def diagnose_all(settings: Settings, timeout: float = 10.0) -> list[Finding]:
    found = [Finding("settings", True, f"data dir {settings.data_dir}, port {settings.port}")]
    secret, box = check_secret(settings)
    found.append(secret)
    found.append(await check_redis(settings.redis_url, timeout))
    db = Database(settings.resolved_database_url())
    try:
        db_found = await check_database(db, timeout)
        found += db_found
        if all(f.ok for f in db_found) and secret.ok:
            found += await check_channels(db, box, settings, timeout)
    finally:
        await db.dispose()
    return found


def run_doctor(
    load_settings: Callable[[], Settings], timeout: float, echo: Callable[[str], Any] = print
) -> int:
    try:
        settings = load_settings()
    except ValueError as exc:
        fix = "correct the variable (see `env | grep SWITCHGATE_` and the README's settings table)"
        echo("\n".join(Finding("settings", False, f"cannot read the settings: {exc}", fix).lines()))
        return 1
    findings = asyncio.run(diagnose_all(settings, timeout))
    for finding in findings:
        for line in finding.lines():
            echo(line)
    problems = sum(not f.ok for f in findings)
    echo(f"{problems} problem{'s' if problems != 1 else ''} found" if problems else "all good")
    return 1 if problems else 0
