"""Server-wide fault modes (POST /_mock/config), for failover tests where one upstream
misbehaves and another does not. Directives (`[[mock:...]]`) act per request and reach
every upstream that sees the text; these act on one server, whatever it is sent.

    fault_status       answer with this status, in the provider's own error shape
    fault_count        ... this many times, then answer normally (-1: every time)
    fault_models       ... only for requests naming one of these models (empty: all)
    fault_retry_after  ... with this Retry-After header value
    fault_message      ... and this message (OpenAI code `context_length_exceeded` when
                       it mentions the context length)
    fault_error_type   ... Bedrock: under this exception name (`x-amzn-errortype`;
                       default: the status's usual one)
    hang               accept the request and never answer (not even headers)
    stall_after        stream: send this many events, then nothing (connection open)
    cut_after          stream: send this many events, then close the connection
    invalid_after      stream: send this many events, then one that is not valid JSON
    end_after          stream: send this many events, then end the response cleanly
                       (HTTP-wise complete) without the stream's terminator event
"""

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any, Final

from aiohttp import web

from .bedrock import bedrock_error
from .config import MockConfig
from .errors import anthropic_error, cohere_error, gemini_error, openai_error
from .httpkit import STREAM_FAULTS, parse_json
from .state import MockState

_CONTROL: Final = ("/_mock/", "/healthz", "/files/")
_GEMINI_MODEL: Final = re.compile(r"/models/([^:/]+)")
_BEDROCK_MODEL: Final = re.compile(r"^/model/([^/]+)/")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _model(request: web.Request, body: Any) -> str | None:
    if isinstance(body, dict) and isinstance(body.get("model"), str):
        return str(body["model"])
    found = _GEMINI_MODEL.search(request.path) or _BEDROCK_MODEL.search(request.path)
    return found.group(1) if found else None


def _error(request: web.Request, config: MockConfig) -> web.Response:
    status, message = config.fault_status, config.fault_message
    path = request.path
    if path.startswith("/v1/messages"):
        response = anthropic_error(status, message)
    elif path.startswith("/model/"):
        response = bedrock_error(status, message, config.fault_error_type)
    elif "/models/" in path:
        response = gemini_error(status, message)
    elif path in ("/v2/chat", "/v2/embed"):
        response = cohere_error(status, message)
    else:
        code = "context_length_exceeded" if message and "context" in message.lower() else None
        response = openai_error(status, message, code)
    if config.fault_retry_after is not None:
        response.headers["retry-after"] = config.fault_retry_after
    return response


def fault_middleware(state: MockState) -> Any:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        config = state.config
        if request.path.startswith(_CONTROL):
            return await handler(request)
        if config.hang:
            body = await request.read()
            state.record(request, len(body), parse_json(body))
            await asyncio.sleep(3600)
        if config.fault_status and config.fault_count != 0:
            body = parse_json(await request.read())  # cached: the handler reads it again
            if not config.fault_models or _model(request, body) in config.fault_models:
                if config.fault_count > 0:
                    config.fault_count -= 1
                state.record(request, request.content_length or 0, body)
                return _error(request, config)
        if config.stall_after is not None or config.cut_after is not None:
            request[STREAM_FAULTS] = (config.stall_after, config.cut_after, None, None)
        elif config.invalid_after is not None:
            request[STREAM_FAULTS] = (None, None, config.invalid_after, None)
        elif config.end_after is not None:
            request[STREAM_FAULTS] = (None, None, None, config.end_after)
        return await handler(request)

    return middleware
