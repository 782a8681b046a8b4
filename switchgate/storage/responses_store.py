"""The Responses API store: save, load and delete stored responses, always scoped to a user.

A row keeps the Response object, the whole conversation (input items + output items, as
sent and produced: what `previous_response_id` replays upstream, so it never carries ids
the gateway made up) and, apart, the input items as `GET /v1/responses/{id}/input_items`
lists them: in their item form (a message's string content becomes a content list), each
with an `id`. Items that came without one get a stable id derived from the response id and
their position (`msg_...`, `fc_...`, ...); rows written before migration 0004 have no
stored input items, and get the same derived ids from their conversation when listed.
"""

import hashlib
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from switchgate import jsonutil
from switchgate.storage.db import Database, now_ms
from switchgate.storage.tables import responses

# id prefixes OpenAI uses for the item types it lists (others get "item").
_ID_PREFIXES: Final = {
    "message": "msg",
    "function_call": "fc",
    "function_call_output": "fco",
    "reasoning": "rs",
    "custom_tool_call": "ctc",
    "custom_tool_call_output": "ctco",
}


@dataclass(frozen=True, slots=True)
class StoredResponse:
    id: str
    model: str
    response: dict[str, Any]  # the Response object the client received
    conversation: list[Any]  # input items + output items, in order
    input_items: list[Any]  # the full input context as listed, each item with an id

    @property
    def output(self) -> list[Any]:
        output = self.response.get("output")
        return output if isinstance(output, list) else []


def _generated_id(seed: str, index: int, kind: str) -> str:
    digest = hashlib.sha256(f"{seed}:{index}".encode()).hexdigest()[:48]
    return f"{_ID_PREFIXES.get(kind, 'item')}_{digest}"


def _content_list(content: Any, assistant: bool) -> Any:
    if isinstance(content, str):
        if assistant:
            return [{"type": "output_text", "text": content, "annotations": []}]
        return [{"type": "input_text", "text": content}]
    if assistant and isinstance(content, list):
        return [
            {**part, "annotations": []}
            if isinstance(part, dict)
            and part.get("type") == "output_text"
            and "annotations" not in part
            else part
            for part in content
        ]
    return content


def listed_item(item: Any, seed: str, index: int) -> Any:
    """One input item in the form the input items list returns it, with an id.

    Idempotent: an item that already has its id (and item form) comes back unchanged."""
    if not isinstance(item, dict):
        return item
    kind = item.get("type")
    kind = kind if isinstance(kind, str) and kind else "message"
    out: dict[str, Any] = {"id": item.get("id") or _generated_id(seed, index, kind)}
    out.update((key, value) for key, value in item.items() if key != "id")
    if kind == "message":
        out["type"] = "message"
        out["content"] = _content_list(item.get("content"), item.get("role") == "assistant")
        out.setdefault("status", "completed")
    elif kind in ("function_call", "function_call_output"):
        out.setdefault("status", "completed")
    elif kind == "reasoning":
        out.setdefault("summary", [])
    return out


def listed_items(items: list[Any], seed: str) -> list[Any]:
    return [listed_item(item, seed, i) for i, item in enumerate(items)]


async def save_response(
    db: Database,
    *,
    user_id: int,
    response: dict[str, Any],
    conversation: list[Any],
    input_items: list[Any],
    passthrough: bool,
) -> bool:
    """Store one response under its own id; False if that id is already taken.

    `input_items` is the full input context (for a continued response: the earlier
    response's listed input items and output, then the new input); items without an id
    get one here."""
    response_id = str(response["id"])
    try:
        async with db.begin() as conn:
            await conn.execute(
                responses.insert().values(
                    id=response_id,
                    user_id=user_id,
                    model=str(response.get("model") or ""),
                    passthrough=passthrough,
                    response=jsonutil.dumps_str(response),
                    conversation=jsonutil.dumps_str(conversation),
                    input_items=jsonutil.dumps_str(listed_items(input_items, response_id)),
                    created_at=now_ms(),
                )
            )
    except IntegrityError:
        return False
    return True


def _legacy_input_items(response_id: str, response: Any, conversation: Any) -> list[Any]:
    """A row from before migration 0004: its conversation minus its output, with ids."""
    output = response.get("output") if isinstance(response, dict) else None
    items = list(conversation) if isinstance(conversation, list) else []
    if isinstance(output, list) and output and len(output) <= len(items):
        items = items[: len(items) - len(output)]
    return listed_items(items, response_id)


async def load_response(db: Database, user_id: int, response_id: str) -> StoredResponse | None:
    async with db.connect() as conn:
        row = (
            await conn.execute(
                select(
                    responses.c.model,
                    responses.c.response,
                    responses.c.conversation,
                    responses.c.input_items,
                ).where(responses.c.id == response_id, responses.c.user_id == user_id)
            )
        ).first()
    if row is None:
        return None
    response = jsonutil.loads(row.response)
    conversation = jsonutil.loads(row.conversation)
    if row.input_items is not None:
        items = jsonutil.loads(row.input_items)
    else:
        items = _legacy_input_items(response_id, response, conversation)
    return StoredResponse(
        id=response_id,
        model=row.model,
        response=response,
        conversation=conversation,
        input_items=items,
    )


async def load_input_items(db: Database, user_id: int, response_id: str) -> list[Any] | None:
    """The listed input items of one of this user's responses; None if it has none stored."""
    async with db.connect() as conn:
        row = (
            await conn.execute(
                select(responses.c.input_items).where(
                    responses.c.id == response_id, responses.c.user_id == user_id
                )
            )
        ).first()
    if row is None:
        return None
    if row.input_items is None:
        stored = await load_response(db, user_id, response_id)
        return stored.input_items if stored is not None else None
    items = jsonutil.loads(row.input_items)
    return items if isinstance(items, list) else []


async def response_model(db: Database, user_id: int, response_id: str) -> str | None:
    """The model one of this user's stored responses was made with; None if no such one."""
    async with db.connect() as conn:
        model = await conn.scalar(
            select(responses.c.model).where(
                responses.c.id == response_id, responses.c.user_id == user_id
            )
        )
    return None if model is None else str(model)


async def response_exists(db: Database, user_id: int, response_id: str) -> bool:
    async with db.connect() as conn:
        row = (
            await conn.execute(
                select(responses.c.id).where(
                    responses.c.id == response_id, responses.c.user_id == user_id
                )
            )
        ).first()
    return row is not None


async def delete_response(db: Database, user_id: int, response_id: str) -> bool:
    async with db.begin() as conn:
        result = await conn.execute(
            delete(responses).where(responses.c.id == response_id, responses.c.user_id == user_id)
        )
    return bool(result.rowcount)
