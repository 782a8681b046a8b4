"""Sub-resources of a stored response (OpenAI Responses API):

- `GET /v1/responses/{id}/input_items`: the input items of one of the caller's stored
  responses as OpenAI's cursor-paginated list object (`object: "list"`, `data`,
  `first_id`, `last_id`, `has_more`). Query: `limit` (1-100, default 20), `order`
  (`asc` / `desc`, default `desc`), `after` / `before` (an item id), `include` (accepted;
  the store keeps every field, so nothing is left out without it). For a response created
  with `previous_response_id` the items are the whole input context, as on OpenAI: the
  earlier response's input items and output, then the new input.
- `POST /v1/responses/{id}/cancel`: the gateway runs no background responses (`background:
  true` is refused at creation), so every stored response is a synchronous one and the
  answer is OpenAI's 400 for that case; unknown ids (and other users') are 404.

`routes_responses.by_id` (where the app sends every `/v1/responses/{...}` path) admits the
caller and dispatches `{id}/{sub-resource}` through `SUB_RESOURCES`.
"""

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal
from urllib.parse import parse_qsl

from switchgate import jsonutil
from switchgate.dialects.openai_chat.validate import value_error
from switchgate.errors import ErrorKind, GatewayError, invalid
from switchgate.relay.asgi import Scope
from switchgate.state import AppState
from switchgate.storage.responses_store import load_input_items, response_exists

DEFAULT_LIMIT: Final = 20
MAX_LIMIT: Final = 100
_ORDERS: Final = ("asc", "desc")

Order = Literal["asc", "desc"]
# (state, user id, response id, scope) -> the JSON body of a 200 answer; raises GatewayError.
SubHandler = Callable[[AppState, int, str, Scope], Awaitable[bytes]]


@dataclass(frozen=True, slots=True)
class ListQuery:
    limit: int = DEFAULT_LIMIT
    order: Order = "desc"
    after: str | None = None
    before: str | None = None
    include: tuple[str, ...] = field(default=())


def response_not_found(response_id: str) -> GatewayError:
    """The 404 GET /v1/responses/{id} gives for an unknown (or another user's) id."""
    return GatewayError(
        ErrorKind.NOT_FOUND, f"No response found with id '{response_id}'.", code="not_found"
    )


def _limit(raw: str) -> int:
    try:
        limit = int(raw.strip())
    except ValueError:
        raise invalid(
            f"Invalid 'limit': expected an integer, but got '{raw}' instead.",
            param="limit",
            code="invalid_type",
        ) from None
    if limit < 1:
        raise invalid(
            f"Invalid 'limit': integer below minimum value. Expected a value >= 1, "
            f"but got {limit} instead.",
            param="limit",
            code="integer_below_min_value",
        )
    if limit > MAX_LIMIT:
        raise invalid(
            f"Invalid 'limit': integer above maximum value. Expected a value <= {MAX_LIMIT}, "
            f"but got {limit} instead.",
            param="limit",
            code="integer_above_max_value",
        )
    return limit


def parse_list_query(query_string: bytes) -> ListQuery:
    """The list parameters of a query string (`include` may repeat, as `include[]` too)."""
    limit, order, after, before = DEFAULT_LIMIT, "desc", None, None
    include: list[str] = []
    for key, value in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True):
        if key == "limit":
            limit = _limit(value)
        elif key == "order":
            if value not in _ORDERS:
                raise value_error("order", value, _ORDERS)
            order = value
        elif key == "after":
            after = value or None
        elif key == "before":
            before = value or None
        elif key in ("include", "include[]"):
            include.append(value)
    return ListQuery(
        limit=limit,
        order="asc" if order == "asc" else "desc",
        after=after,
        before=before,
        include=tuple(include),
    )


def _item_id(item: Any) -> str | None:
    value = item.get("id") if isinstance(item, dict) else None
    return value if isinstance(value, str) else None


def _position(items: Sequence[Any], cursor: str, param: str) -> int:
    for i, item in enumerate(items):
        if _item_id(item) == cursor:
            return i
    raise invalid(f"No input item found with id '{cursor}'.", param=param, code="invalid_value")


def list_page(items: Sequence[Any], query: ListQuery) -> dict[str, Any]:
    """One page of `items` (in their stored, ascending order) as OpenAI's list object.

    The page is taken in `query.order`: `after` starts just past that item, `before` ends
    just short of it (and, alone, gives the `limit` items closest to it); `has_more` says
    whether more items lie beyond the page in the direction of travel. Unknown cursors are
    a 400 naming the parameter."""
    ordered = list(items) if query.order == "asc" else list(reversed(items))
    start = 0 if query.after is None else _position(ordered, query.after, "after") + 1
    end = len(ordered) if query.before is None else _position(ordered, query.before, "before")
    window = ordered[start:end] if start < end else []
    if query.before is not None and query.after is None:
        data = window[-query.limit :]
    else:
        data = window[: query.limit]
    return {
        "object": "list",
        "data": data,
        "first_id": _item_id(data[0]) if data else None,
        "last_id": _item_id(data[-1]) if data else None,
        "has_more": len(window) > len(data),
    }


async def list_input_items(state: AppState, user_id: int, response_id: str, scope: Scope) -> bytes:
    query = parse_list_query(scope.get("query_string", b""))
    items = await load_input_items(state.db, user_id, response_id)
    if items is None:
        raise response_not_found(response_id)
    return jsonutil.dumps(list_page(items, query))


async def cancel(state: AppState, user_id: int, response_id: str, scope: Scope) -> bytes:
    if not await response_exists(state.db, user_id, response_id):
        raise response_not_found(response_id)
    # Only background responses can be cancelled, and the gateway stores no other kind.
    raise invalid("Cannot cancel a synchronous response.")


# (method, sub-resource) -> handler, for paths /v1/responses/{id}/{sub-resource}.
SUB_RESOURCES: Final[Mapping[tuple[str, str], SubHandler]] = MappingProxyType(
    {("GET", "input_items"): list_input_items, ("POST", "cancel"): cancel}
)
