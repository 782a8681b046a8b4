"""Re-encrypt every secret stored in the database with the current secret key.

Run by `switchgate secret-key rotate` after every replica runs with the new
SWITCHGATE_SECRET_KEY and the old one in SWITCHGATE_SECRET_KEY_PREVIOUS (docs/deploy.md).
One transaction: if any value can be read with none of the configured keys, nothing is
changed. Values already sealed with the current key are left alone, so it can be re-run.
"""

from cryptography.exceptions import InvalidTag
from sqlalchemy import ColumnElement, Table, select, update
from sqlalchemy.sql.schema import Column

from switchgate.storage.db import Database
from switchgate.storage.secrets import SecretBox
from switchgate.storage.tables import channels, redemption_codes, sessions, site_settings

# (table, its key column, the encrypted column, which rows hold a secret)
_SEALED: list[tuple[Table, Column[object], Column[object], ColumnElement[bool] | None]] = [
    (channels, channels.c.id, channels.c.api_key_enc, None),
    (sessions, sessions.c.id, sessions.c.playground_token_enc, None),
    (redemption_codes, redemption_codes.c.id, redemption_codes.c.code_enc, None),
    (site_settings, site_settings.c.key, site_settings.c.value, site_settings.c.secret.is_(True)),
]


class UnreadableSecret(ValueError):
    pass


async def rotate(db: Database, box: SecretBox) -> dict[str, int]:
    """Values re-encrypted, per table."""
    counts: dict[str, int] = {}
    async with db.begin() as conn:
        for table, key, sealed, where in _SEALED:
            query = select(key, sealed).where(sealed.is_not(None))
            if where is not None:
                query = query.where(where)
            done = 0
            for row_key, value in (await conn.execute(query)).all():
                if box.is_current(str(value)):
                    continue
                try:
                    plain = box.decrypt(str(value))
                except (InvalidTag, ValueError):
                    raise UnreadableSecret(
                        f"{table.name} {row_key}: readable with neither SWITCHGATE_SECRET_KEY "
                        "nor SWITCHGATE_SECRET_KEY_PREVIOUS; nothing was changed"
                    ) from None
                await conn.execute(
                    update(table).where(key == row_key).values({sealed.name: box.encrypt(plain)})
                )
                done += 1
            counts[table.name] = done
    return counts
