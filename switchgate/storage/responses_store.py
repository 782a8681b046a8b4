"""The Responses API store: save, load and delete stored responses, always scoped to a user."""

from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from switchgate import jsonutil
from switchgate.storage.db import Database, now_ms
from switchgate.storage.tables import responses


@dataclass(frozen=True, slots=True)
class StoredResponse:
    id: str
    model: str
    response: dict[str, Any]  # the Response object the client received
    conversation: list[Any]  # input items + output items, in order


async def save_response(
    db: Database,
    *,
    user_id: int,
    response: dict[str, Any],
    conversation: list[Any],
    passthrough: bool,
) -> bool:
    """Store one response under its own id; False if that id is already taken."""
    try:
        async with db.begin() as conn:
            await conn.execute(
                responses.insert().values(
                    id=str(response["id"]),
                    user_id=user_id,
                    model=str(response.get("model") or ""),
                    passthrough=passthrough,
                    response=jsonutil.dumps_str(response),
                    conversation=jsonutil.dumps_str(conversation),
                    created_at=now_ms(),
                )
            )
    except IntegrityError:
        return False
    return True


async def load_response(db: Database, user_id: int, response_id: str) -> StoredResponse | None:
    async with db.connect() as conn:
        row = (
            await conn.execute(
                select(responses.c.model, responses.c.response, responses.c.conversation).where(
                    responses.c.id == response_id, responses.c.user_id == user_id
                )
            )
        ).first()
    if row is None:
        return None
    return StoredResponse(
        id=response_id,
        model=row.model,
        response=jsonutil.loads(row.response),
        conversation=jsonutil.loads(row.conversation),
    )


async def delete_response(db: Database, user_id: int, response_id: str) -> bool:
    async with db.begin() as conn:
        result = await conn.execute(
            delete(responses).where(responses.c.id == response_id, responses.c.user_id == user_id)
        )
    return bool(result.rowcount)
