"""Token counting: asked of the upstream when a channel speaks the client's own dialect
(exact, as the provider counts), otherwise counted by the offline tokenizer."""

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from switchgate import jsonutil
from switchgate.errors import GatewayError
from switchgate.relay.attempt import target_for
from switchgate.relay.authorize import authorized
from switchgate.relay.upstream import read_all
from switchgate.routing.breaker import Phase
from switchgate.state import AppState


async def upstream_count(
    state: AppState,
    model: str,
    dialect: str,
    body: dict[str, Any],
    headers: Mapping[str, str],
    *,
    url_suffix: str = "",
    field: str,
) -> int | None:
    """The count from the first same-dialect channel that answers, or None."""
    for channel in state.catalog.channels_by_model.get(model, ()):
        kind = state.kinds.get(channel.kind)
        native = kind.native() if kind is not None else None
        if native is None or native.dialect != dialect:
            continue
        if state.health.blocked(channel.id, model) is Phase.OPEN:
            continue
        try:
            target = await authorized(state.kinds, channel.kind, target_for(channel, model))
        except GatewayError:
            continue
        request = native.build_passthrough(body, target, headers)
        if url_suffix:
            request = replace(request, url=request.url + url_suffix)
        try:
            response = await state.upstream.send(request)
        except GatewayError:
            continue
        try:
            if response.status == 200:
                value = jsonutil.loads(await read_all(response)).get(field)
                if isinstance(value, int) and not isinstance(value, bool):
                    return value
        except (GatewayError, ValueError, AttributeError):
            pass
        finally:
            response.release()
    return None
