"""The relay's fast path table: (method, exact path) -> handler. Each area keeps its
routes in its own module; this is the one place that lists the modules.

Paths with an id in them are not in this table: the app sends every `/v1/responses/{...}`
path to `routes_responses.by_id`, which serves GET / DELETE `{id}` itself and the
sub-resources `{id}/input_items` and `{id}/cancel` from `routes_responses_items.SUB_RESOURCES`."""

from collections.abc import Awaitable, Callable

from switchgate.relay import routes_anthropic, routes_media, routes_openai, routes_responses
from switchgate.relay.asgi import Receive, Scope, Send
from switchgate.state import AppState

Handler = Callable[[AppState, Scope, Receive, Send], Awaitable[None]]


def route_table() -> dict[tuple[str, str], Handler]:
    table: dict[tuple[str, str], Handler] = {
        ("POST", "/v1/chat/completions"): routes_openai.chat_completions,
        ("GET", "/v1/models"): routes_openai.list_models,
        ("POST", "/v1/messages"): routes_anthropic.messages,
        ("POST", "/v1/messages/count_tokens"): routes_anthropic.count_tokens,
        ("POST", "/v1/responses"): routes_responses.create,
    }
    table.update(routes_media.media_routes())
    return table
