"""AWS Bedrock Runtime: `POST /model/{modelId}/converse`, `/converse-stream` (answered
as `application/vnd.amazon.eventstream`) and `/invoke` (Titan and Cohere embeddings).

Requests must be SigV4-signed with the test credentials (bedrock_wire.py) or carry the
mock's API key as `Authorization: Bearer` (a Bedrock API key). Converse bodies are
checked against botocore's service model and against what Bedrock itself refuses
(roles that do not alternate, blank text, tool blocks without a toolConfig, thinking
on a model without it...). Errors: the exception's name in `x-amzn-errortype`, the
body `{"message": ...}`; in a stream, an exception message (`[[mock:midstream_error]]`).
"""

import hashlib
from typing import Any, Final

from aiohttp import web

from switchgate import jsonutil

from .bedrock_rules import converse_problem
from .bedrock_wire import check_sigv4, event_frame, exception_frame
from .directives import Directives, parse_directives
from .httpkit import json_response, pause, send_stream
from .reply import Ask, Plan, count_words, plan_reply, split_text
from .state import MockState

EVENT_STREAM: Final = "application/vnd.amazon.eventstream"
_ERROR_SUFFIX: Final = ":http://internal.amazon.com/coral/com.amazon.bedrock/"
# status -> (exception, message)
EXCEPTIONS: Final[dict[int, tuple[str, str]]] = {
    400: ("ValidationException", "Malformed input request (mock)."),
    403: (
        "AccessDeniedException",
        "You don't have access to the model with the specified model ID.",
    ),
    404: ("ResourceNotFoundException", "The requested resource could not be found (mock)."),
    408: ("ModelTimeoutException", "Model has timed out in processing the request (mock)."),
    424: ("ModelErrorException", "The model returned an error (mock)."),
    429: ("ThrottlingException", "Too many requests, please wait before trying again."),
    500: ("InternalServerException", "Internal server error (mock)."),
    503: ("ServiceUnavailableException", "Bedrock is unable to process your request."),
}
_BAD_API_KEY: Final = "Invalid API Key format: Must start with pre-defined prefix"
_PADDING: Final = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123"


def bedrock_error(status: int, message: str | None = None, name: str | None = None) -> web.Response:
    default = EXCEPTIONS.get(status) or (
        ("InternalServerException", "Internal server error (mock).")
        if status >= 500
        else ("ValidationException", "Request failed (mock).")
    )
    headers = {
        "x-amzn-errortype": (name or default[0]) + _ERROR_SUFFIX,
        "x-amzn-requestid": "00000000-mock-0000-0000-000000000000",
    }
    return json_response({"message": message or default[1]}, status, headers)


def _stream_exception(status: int) -> bytes:
    name, message = EXCEPTIONS.get(status, EXCEPTIONS[503])
    if status in (408, 424, 500):  # the stream's own kinds
        name = "modelStreamErrorException" if status != 500 else "internalServerException"
    return exception_frame(name[0].lower() + name[1:], message)


def _padded(payload: dict[str, Any]) -> dict[str, Any]:
    """Bedrock pads event payloads with `p` (so lengths do not reveal the content)."""
    size = len(jsonutil.dumps(payload)) % len(_PADDING) + 1
    return {**payload, "p": _PADDING[:size]}


def _texts(blocks: Any) -> list[str]:
    if not isinstance(blocks, list):
        return []
    return [b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)]


def converse_ask(body: dict[str, Any]) -> Ask:
    ask = Ask()
    words = sum(count_words(t) for t in _texts(body.get("system")))
    messages = body["messages"]
    for message in messages:
        content = message.get("content")
        text = "\n".join(_texts(content))
        words += count_words(text)
        for block in content:
            if "toolResult" in block:
                words += count_words("\n".join(_texts(block["toolResult"].get("content"))))
        if text and message.get("role") == "user":
            ask.last_user_text = text
    ask.prompt_words = words
    last = messages[-1]
    if last.get("role") == "user":
        results = [
            "\n".join(_texts(b["toolResult"].get("content")))
            for b in last["content"]
            if "toolResult" in b
        ]
        ask.tool_results = results or None
    config = body.get("toolConfig") or {}
    for tool in config.get("tools", []):
        spec = tool.get("toolSpec")
        if isinstance(spec, dict):
            ask.tools.append((spec["name"], spec.get("inputSchema", {}).get("json")))
    choice = config.get("toolChoice") or {}
    ask.tool_required = "any" in choice
    if "tool" in choice:
        ask.tool_forced = choice["tool"]["name"]
    extra = body.get("additionalModelRequestFields") or {}
    thinking = extra.get("thinking") if isinstance(extra, dict) else None
    ask.reasoning = isinstance(thinking, dict) and thinking.get("type") == "enabled"
    ask.cache_hint = "cachePoint" in jsonutil.dumps_str(body)
    limit = (body.get("inferenceConfig") or {}).get("maxTokens")
    if isinstance(limit, int) and limit > 0:
        ask.max_tokens = limit
    return ask


def _usage(plan: Plan) -> dict[str, Any]:
    read, write = plan.cached_tokens, plan.cache_write_tokens
    usage: dict[str, Any] = {
        "inputTokens": plan.prompt_tokens - read - write,
        "outputTokens": plan.completion_tokens,
        "totalTokens": plan.prompt_tokens + plan.completion_tokens,
    }
    if read:
        usage["cacheReadInputTokens"] = read
    if write:
        usage["cacheWriteInputTokens"] = write
    return usage


def _stop_reason(plan: Plan) -> str:
    if plan.tool_calls:
        return "tool_use"
    return "max_tokens" if plan.truncated else "end_turn"


def _tool_id(call_id: str) -> str:
    return "tooluse_" + call_id


def converse_reply(plan: Plan) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if plan.reasoning:
        text = {"text": plan.reasoning, "signature": plan.signature}
        content.append({"reasoningContent": {"reasoningText": text}})
    if plan.text or not plan.tool_calls:
        content.append({"text": plan.text})
    for call in plan.tool_calls:
        use = {"toolUseId": _tool_id(call.id), "name": call.name, "input": call.args}
        content.append({"toolUse": use})
    reply: dict[str, Any] = {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": _stop_reason(plan),
        "usage": _usage(plan),
        "metrics": {"latencyMs": 12},
    }
    return reply


def converse_stream(plan: Plan) -> list[bytes]:
    def event(name: str, payload: dict[str, Any]) -> bytes:
        return event_frame(name, _padded(payload))

    frames = [event("messageStart", {"role": "assistant"})]
    index = 0
    if plan.reasoning:
        for piece in split_text(plan.reasoning, plan.chunks):
            delta = {"reasoningContent": {"text": piece}}
            frames.append(event("contentBlockDelta", {"delta": delta, "contentBlockIndex": index}))
        delta = {"reasoningContent": {"signature": plan.signature}}
        frames.append(event("contentBlockDelta", {"delta": delta, "contentBlockIndex": index}))
        frames.append(event("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    if plan.text or not plan.tool_calls:
        for piece in split_text(plan.text, plan.chunks):
            frames.append(
                event("contentBlockDelta", {"delta": {"text": piece}, "contentBlockIndex": index})
            )
        frames.append(event("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    for call in plan.tool_calls:
        start = {"toolUse": {"toolUseId": _tool_id(call.id), "name": call.name}}
        frames.append(event("contentBlockStart", {"start": start, "contentBlockIndex": index}))
        for piece in split_text(call.arguments, 3):
            delta = {"toolUse": {"input": piece}}
            frames.append(event("contentBlockDelta", {"delta": delta, "contentBlockIndex": index}))
        frames.append(event("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    frames.append(event("messageStop", {"stopReason": _stop_reason(plan)}))
    if not plan.directives.no_usage:
        metadata = {"usage": _usage(plan), "metrics": {"latencyMs": 12}}
        frames.append(event("metadata", metadata))
    return frames


_MALFORMED: Final = "Malformed input request, please reformat your input and try again."
_COHERE_KEYS: Final = frozenset(
    {"texts", "input_type", "truncate", "embedding_types", "output_dimension", "images"}
)
_TITAN_KEYS: Final = frozenset({"inputText", "dimensions", "normalize", "embeddingTypes"})


def _extraneous(body: dict[str, Any], allowed: frozenset[str]) -> str | None:
    extra = sorted(set(body) - allowed)
    if extra:
        return f"Malformed input request: #: extraneous key [{extra[0]}] is not permitted"
    return None


def cohere_embed(body: dict[str, Any]) -> web.Response:
    texts = body.get("texts")
    problem = _extraneous(body, _COHERE_KEYS)
    if problem is None and "input_type" not in body:
        problem = "Malformed input request: #: required key [input_type] not found"
    if problem is None and (not isinstance(texts, list) or not 0 < len(texts) <= 96):
        problem = "Malformed input request: #/texts: expected maxItems: 96"
    if problem is not None:
        return bedrock_error(400, problem)
    assert isinstance(texts, list)
    dims = body.get("output_dimension", 1024)
    return json_response(
        {
            "embeddings": [_vector(str(t), dims) for t in texts],
            "id": "mock-embed",
            "response_type": "embeddings_floats",
            "texts": texts,
        }
    )


def titan_embed(body: dict[str, Any]) -> web.Response:
    text = body.get("inputText")
    problem = _extraneous(body, _TITAN_KEYS)
    if problem is None and not isinstance(text, str):
        problem = "Malformed input request: #: required key [inputText] not found"
    dims = body.get("dimensions", 1024)
    if problem is None and dims not in (256, 512, 1024):
        problem = f"Malformed input request: #/dimensions: {dims} is not a valid enum value"
    if problem is not None:
        return bedrock_error(400, problem)
    assert isinstance(text, str)
    vector = _vector(text, dims)
    return json_response(
        {
            "embedding": vector,
            "inputTextTokenCount": max(1, count_words(text)),
            "embeddingsByType": {"float": vector},
        }
    )


class BedrockRuntime:
    """Handlers for the Bedrock Runtime endpoints."""

    def __init__(self, state: MockState) -> None:
        self.state = state

    def _refused(self, request: web.Request, raw: bytes) -> web.Response | None:
        auth = request.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            if auth[7:] == self.state.config.api_key:
                return None
            return bedrock_error(
                403,
                "Invalid API Key format: Must start with pre-defined prefix",
                "UnrecognizedClientException",
            )
        url = f"{request.scheme}://{request.host}{request.raw_path}"
        failure = check_sigv4(request.method, url, request.headers, raw)
        if failure is None:
            return None
        return bedrock_error(failure.status, failure.message, failure.error_type)

    async def _intake(self, request: web.Request) -> tuple[Any, web.Response | None]:
        raw = await request.read()
        body = await self.state.intake(request)
        return body, self._refused(request, raw)

    async def converse(self, request: web.Request) -> web.StreamResponse:
        return await self._converse(request, stream=False)

    async def converse_stream(self, request: web.Request) -> web.StreamResponse:
        return await self._converse(request, stream=True)

    async def _converse(self, request: web.Request, *, stream: bool) -> web.StreamResponse:
        body, refused = await self._intake(request)
        if refused is not None:
            return refused
        model = request.match_info["modelId"]
        problem = converse_problem(body, model)
        if problem is not None:
            return bedrock_error(400, problem)
        ask = converse_ask(body)
        d = parse_directives(ask.last_user_text)
        config = self.state.config
        await pause(d.latency_ms if d.latency_ms is not None else config.latency_ms)
        if d.error is not None:
            return bedrock_error(d.error)
        plan = plan_reply(ask, d, config)
        headers = {"x-amzn-requestid": f"mock-{self.state.next_id():012d}"}
        if not stream:
            return json_response(converse_reply(plan), 200, headers)
        return await send_stream(
            request,
            converse_stream(plan),
            content_type=EVENT_STREAM,
            headers=headers,
            interval_ms=d.interval_ms if d.interval_ms is not None else config.chunk_interval_ms,
            drop_after=d.drop_after,
            error_event=_error_frame(d),
        )

    async def invoke(self, request: web.Request) -> web.StreamResponse:
        body, refused = await self._intake(request)
        if refused is not None:
            return refused
        model = request.match_info["modelId"]
        if not isinstance(body, dict):
            return bedrock_error(400, _MALFORMED)
        if "cohere.embed" in model:
            return cohere_embed(body)
        if "titan-embed-text" in model:
            return titan_embed(body)
        return bedrock_error(
            404, "The provided model identifier is invalid.", "ResourceNotFoundException"
        )


def _vector(text: str, dims: int) -> list[float]:
    digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return [((digest[i % 8] + i) % 200 - 100) / 100 for i in range(dims)]


def _error_frame(d: Directives) -> bytes | None:
    if d.midstream_error is None:
        return None
    return _stream_exception(d.midstream_error or 503)
