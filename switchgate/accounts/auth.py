"""Token -> Principal, served from memory; the database is asked once per unknown token.

The cache is emptied whenever the config version changes (a token was created, revoked,
edited), so a revoked token stops working within one poll interval. What this process
charged a token since its `quota_used` was read is kept apart (billing/token_spend.py),
so emptying the cache never forgets a charge that is not in the database yet.
"""

import ipaddress
from dataclasses import dataclass, field

from sqlalchemy import select

from switchgate import jsonutil
from switchgate.accounts.keys import hash_token
from switchgate.billing.token_spend import TokenSpend
from switchgate.storage.db import Database
from switchgate.storage.tables import tokens, users

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(slots=True)
class Principal:
    token_id: int
    user_id: int
    token_name: str
    active: bool  # token active and user active
    expires_at: int | None
    quota_limit: int | None
    quota_used: int  # as loaded
    allowed_models: frozenset[str] | None
    allowed_networks: tuple[IPNetwork, ...] | None
    rpm_limit: int | None
    email: str = ""
    role: str = "user"
    spend_mark: int = field(default=0)  # TokenSpend.mark when quota_used was read
    tpm_limit: int | None = None  # the token's tokens per minute
    user_rpm_limit: int | None = None  # over all the user's tokens
    user_tpm_limit: int | None = None


# A read that saw this many commits of this process's charges happen while it ran gives
# up re-reading and takes the newest mark (it may then miss one batch of charges).
_READ_ATTEMPTS = 3
_REFRESH_BATCH = 500  # token ids per query of refresh_spend


class TokenCache:
    def __init__(self, db: Database, spend: TokenSpend, max_negative: int = 10_000) -> None:
        self._db = db
        self._spend = spend
        self._known: dict[str, Principal] = {}
        self._unknown: set[str] = set()
        self._max_negative = max_negative

    def clear(self) -> None:
        self._known.clear()
        self._unknown.clear()

    async def resolve(self, token: str) -> Principal | None:
        key = hash_token(token)
        principal = self._known.get(key)
        if principal is not None:
            return principal
        if key in self._unknown:
            return None
        principal = await self._load(key)
        if principal is None:
            if len(self._unknown) >= self._max_negative:
                self._unknown.clear()
            self._unknown.add(key)
        else:
            self._known[key] = principal
        return principal

    async def _load(self, key_hash: str) -> Principal | None:
        """Read the token; its spend mark is taken with no commit of this process's charges
        during the read, so the mark matches what the read saw."""
        principal = None
        for _ in range(_READ_ATTEMPTS):
            generation = self._spend.generation
            principal = await self._read(key_hash)
            if principal is None or self._spend.generation == generation:
                break
        if principal is not None:
            principal.spend_mark = self._spend.mark(principal.token_id)
        return principal

    async def refresh_spend(self) -> None:
        """Re-read `quota_used` of the cached tokens that have a spending limit, so what
        other processes spent on them counts here within one poll interval (between
        config changes the cache would otherwise keep the value it first read)."""
        limited = {p.token_id: p for p in self._known.values() if p.quota_limit is not None}
        ids = list(limited)
        for start in range(0, len(ids), _REFRESH_BATCH):
            batch = ids[start : start + _REFRESH_BATCH]
            query = select(tokens.c.id, tokens.c.quota_used).where(tokens.c.id.in_(batch))
            rows: list[tuple[int, int]] = []
            for _ in range(_READ_ATTEMPTS):
                generation = self._spend.generation
                async with self._db.connect() as conn:
                    rows = [(row.id, row.quota_used) for row in await conn.execute(query)]
                if self._spend.generation == generation:
                    break
            for token_id, used in rows:
                principal = limited[token_id]
                principal.quota_used = used
                principal.spend_mark = self._spend.mark(token_id)

    async def _read(self, key_hash: str) -> Principal | None:
        query = (
            select(
                tokens.c.id,
                tokens.c.user_id,
                tokens.c.name,
                tokens.c.status,
                tokens.c.expires_at,
                tokens.c.quota_limit,
                tokens.c.quota_used,
                tokens.c.allowed_models,
                tokens.c.allowed_ips,
                tokens.c.rpm_limit,
                tokens.c.tpm_limit,
                users.c.rpm_limit.label("user_rpm_limit"),
                users.c.tpm_limit.label("user_tpm_limit"),
                users.c.status.label("user_status"),
                users.c.email,
                users.c.role,
            )
            .join(users, users.c.id == tokens.c.user_id)
            .where(tokens.c.key_hash == key_hash)
        )
        async with self._db.connect() as conn:
            row = (await conn.execute(query)).first()
        if row is None or row.status == "deleted":
            return None
        return Principal(
            token_id=row.id,
            user_id=row.user_id,
            token_name=row.name,
            active=row.status == "active" and row.user_status == "active",
            expires_at=row.expires_at,
            quota_limit=row.quota_limit,
            quota_used=row.quota_used,
            allowed_models=frozenset(jsonutil.loads(row.allowed_models))
            if row.allowed_models
            else None,
            allowed_networks=tuple(
                ipaddress.ip_network(n, strict=False) for n in jsonutil.loads(row.allowed_ips)
            )
            if row.allowed_ips
            else None,
            rpm_limit=row.rpm_limit,
            email=row.email,
            role=row.role,
            tpm_limit=row.tpm_limit,
            user_rpm_limit=row.user_rpm_limit,
            user_tpm_limit=row.user_tpm_limit,
        )
