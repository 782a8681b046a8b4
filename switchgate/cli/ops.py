"""What each CLI command does, as async functions over one Database (no printing here)."""

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from switchgate.accounts import service as accounts
from switchgate.audit.actions import Entry, record
from switchgate.billing import ledger
from switchgate.billing.prices import set_price
from switchgate.routing.channels import set_channel_status, upsert_channel
from switchgate.storage.db import Database
from switchgate.storage.secrets import SecretBox
from switchgate.storage.tables import channels, prices


@dataclass
class Ops:
    db: Database
    box: SecretBox

    async def add_user(self, email: str, password: str | None, admin: bool) -> accounts.User:
        async with self.db.begin() as conn:
            user = await accounts.create_user(conn, email, password, admin=admin)
            await record(conn, Entry("cli", "cli users add", user.email, detail={"admin": admin}))
            return user

    async def add_balance(self, email: str, amount: int, note: str | None, actor: str) -> int:
        async with self.db.begin() as conn:
            user = await accounts.get_user(conn, email)
            kind = "topup" if amount >= 0 else "adjust"
            balance = await ledger.add_entry(conn, user.id, amount, kind, note=note, actor=actor)
            detail = {"amount_units": amount, "note": note}
            await record(conn, Entry(actor, "cli balance add", user.email, detail=detail))
            return balance

    async def balance(self, email: str) -> tuple[int, int]:
        """(balance, ledger sum): equal unless something is badly wrong."""
        async with self.db.connect() as conn:
            user = await accounts.get_user(conn, email)
            return await ledger.balance_and_ledger_sum(conn, user.id)

    async def create_token(self, email: str, name: str, **limits: Any) -> accounts.NewToken:
        """`limits`: expires_at, quota_limit, allowed_models, allowed_ips, rpm_limit, tpm_limit."""
        async with self.db.begin() as conn:
            user = await accounts.get_user(conn, email)
            return await accounts.create_token(conn, user.id, name, **limits)

    async def set_user_rates(self, email: str, rpm: int | None, tpm: int | None) -> None:
        async with self.db.begin() as conn:
            user = await accounts.get_user(conn, email)
            await accounts.set_user_rates(conn, user.id, rpm, tpm)

    async def list_tokens(self, email: str) -> list[dict[str, object]]:
        async with self.db.connect() as conn:
            user = await accounts.get_user(conn, email)
            return await accounts.list_tokens(conn, user.id)

    async def set_token_status(self, token_id: int, status: str) -> None:
        async with self.db.begin() as conn:
            await accounts.set_token_status(conn, token_id, status)

    async def add_channel(self, **fields: object) -> tuple[int, bool]:
        async with self.db.begin() as conn:
            result = await upsert_channel(conn, self.box, **fields)  # type: ignore[arg-type]
            name = str(fields.get("name", ""))
            await record(conn, Entry("cli", "cli channels add", name, detail=_plain(fields)))
            return result

    async def set_channel_status(self, name: str, status: str) -> None:
        async with self.db.begin() as conn:
            await set_channel_status(conn, name, status)
            await record(conn, Entry("cli", f"cli channels {status}", name))

    async def list_channels(self) -> list[dict[str, object]]:
        async with self.db.connect() as conn:
            rows = await conn.execute(
                select(
                    channels.c.id,
                    channels.c.name,
                    channels.c.kind,
                    channels.c.base_url,
                    channels.c.models,
                    channels.c.priority,
                    channels.c.weight,
                    channels.c.status,
                ).order_by(channels.c.id)
            )
            return [dict(r._mapping) for r in rows]

    async def set_price(self, model: str, **fields: object) -> None:
        async with self.db.begin() as conn:
            await set_price(conn, model, **fields)  # type: ignore[arg-type]
            await record(conn, Entry("cli", "cli prices set", model, detail=_plain(fields)))

    async def list_prices(self) -> list[dict[str, object]]:
        async with self.db.connect() as conn:
            rows = await conn.execute(select(prices).order_by(prices.c.model))
            return [dict(r._mapping) for r in rows]


def _plain(fields: dict[str, object]) -> dict[str, object]:
    """JSON-able values for the audit detail (anything unusual as text)."""
    plain = (int, str, bool, list, tuple, dict, type(None))
    return {k: v if isinstance(v, plain) else str(v) for k, v in fields.items()}
