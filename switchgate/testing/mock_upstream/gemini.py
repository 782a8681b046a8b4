"""Gemini API (`/v1beta/models/{model}:ACTION`, protocols §4): generateContent,
streamGenerateContent (SSE with `?alt=sse`, else the progressive JSON array), countTokens,
embedContent and batchEmbedContents (at most 100 requests per batch, like the real API; the
`[[mock:...]]` directives of any request's text apply to the whole batch). Input may be
camelCase or snake_case; output is camelCase."""

from typing import Any, Final

from aiohttp import web

from switchgate import jsonutil

from .assets import embed_vector
from .auth import gemini_key
from .directives import Directives, parse_directives
from .errors import gemini_error, gemini_error_body
from .httpkit import JSON_TYPE, json_response, pause, send_stream, sse
from .reply import Ask, Plan, count_words, plan_reply, split_text
from .state import MockState
from .strict import gemini_violation

THOUGHT_SIGNATURE: Final = "bW9jay10aG91Z2h0LXNpZ25hdHVyZQ=="  # base64("mock-thought-signature")
_ARRAY_SEP: Final = b",\r\n"
BATCH_EMBED_LIMIT: Final = 100  # requests per batchEmbedContents call


def _get(obj: Any, camel: str, snake: str) -> Any:
    if not isinstance(obj, dict):
        return None
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


def _part_texts(parts: Any) -> tuple[str, list[str]]:
    """(joined text of the text parts, texts of the functionResponse parts)."""
    texts: list[str] = []
    results: list[str] = []
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            continue
        text = part.get("text")
        if isinstance(text, str):
            texts.append(text)
        response = _get(part, "functionResponse", "function_response")
        if isinstance(response, dict):
            payload = response.get("response")
            output = payload.get("output") if isinstance(payload, dict) else None
            results.append(output if isinstance(output, str) else jsonutil.dumps_str(payload))
    return "\n".join(texts), results


def _system_words(body: dict[str, Any]) -> int:
    system = _get(body, "systemInstruction", "system_instruction")
    if isinstance(system, str):
        return count_words(system)
    return count_words(_part_texts(_get(system, "parts", "parts"))[0])


def _tools(body: dict[str, Any], ask: Ask) -> None:
    for tool in body.get("tools") or []:
        for decl in _get(tool, "functionDeclarations", "function_declarations") or []:
            if isinstance(decl, dict) and isinstance(decl.get("name"), str):
                schema = _get(decl, "parametersJsonSchema", "parameters_json_schema")
                ask.tools.append((decl["name"], schema or decl.get("parameters")))
    config = _get(
        _get(body, "toolConfig", "tool_config"), "functionCallingConfig", "function_calling_config"
    )
    mode = str(_get(config, "mode", "mode") or "AUTO").upper()
    ask.tool_disabled = mode == "NONE"
    if mode in ("ANY", "VALIDATED"):
        ask.tool_required = mode == "ANY"
        allowed = _get(config, "allowedFunctionNames", "allowed_function_names")
        if isinstance(allowed, list) and allowed:
            ask.tool_forced = str(allowed[0])


def gemini_ask(body: dict[str, Any], contents: list[Any]) -> Ask:
    ask = Ask()
    words = _system_words(body)
    results: list[str] = []
    for content in contents:
        text, results = _part_texts(_get(content, "parts", "parts"))
        words += count_words(text) + sum(count_words(r) for r in results)
        if text and _get(content, "role", "role") in (None, "user"):
            ask.last_user_text = text
    ask.prompt_words = words
    ask.tool_results = results or None  # results of the last content only
    _tools(body, ask)
    generation = _get(body, "generationConfig", "generation_config")
    thinking = _get(generation, "thinkingConfig", "thinking_config")
    ask.reasoning = _get(thinking, "includeThoughts", "include_thoughts") is True
    limit = _get(generation, "maxOutputTokens", "max_output_tokens")
    if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
        ask.max_tokens = limit
    ask.cache_hint = bool(_get(body, "cachedContent", "cached_content"))
    return ask


def usage_metadata(plan: Plan) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "promptTokenCount": plan.prompt_tokens,
        "candidatesTokenCount": plan.completion_tokens - plan.reasoning_tokens,
        "totalTokenCount": plan.prompt_tokens + plan.completion_tokens,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": plan.prompt_tokens}],
    }
    if plan.reasoning_tokens:
        usage["thoughtsTokenCount"] = plan.reasoning_tokens
    if plan.cached_tokens:
        usage["cachedContentTokenCount"] = plan.cached_tokens
    return usage


def _call_parts(plan: Plan) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for call in plan.tool_calls:
        parts.append({"functionCall": {"name": call.name, "args": call.args}})
    if parts:
        parts[0]["thoughtSignature"] = THOUGHT_SIGNATURE
    return parts


def _chunk(parts: list[dict[str, Any]], model: str, rid: str) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}],
        "modelVersion": model,
        "responseId": rid,
    }


def _finish(chunk: dict[str, Any], plan: Plan) -> None:
    chunk["candidates"][0]["finishReason"] = "MAX_TOKENS" if plan.truncated else "STOP"
    if not plan.directives.no_usage:
        chunk["usageMetadata"] = usage_metadata(plan)


def generate_response(plan: Plan, model: str, rid: str) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if plan.reasoning:
        parts.append({"text": plan.reasoning, "thought": True})
    if plan.text or not plan.tool_calls:
        parts.append({"text": plan.text})
        if plan.reasoning and not plan.tool_calls:
            parts[-1]["thoughtSignature"] = THOUGHT_SIGNATURE
    parts += _call_parts(plan)
    result = _chunk(parts, model, rid)
    _finish(result, plan)
    return result


def stream_chunks(plan: Plan, model: str, rid: str) -> list[dict[str, Any]]:
    chunks = [
        _chunk([{"text": p, "thought": True}], model, rid)
        for p in split_text(plan.reasoning, plan.chunks)
    ]
    chunks += [_chunk([{"text": p}], model, rid) for p in split_text(plan.text, plan.chunks)]
    if plan.reasoning and plan.text and not plan.tool_calls:
        chunks[-1]["candidates"][0]["content"]["parts"][0]["thoughtSignature"] = THOUGHT_SIGNATURE
    if plan.tool_calls:
        chunks.append(_chunk(_call_parts(plan), model, rid))
    if not chunks:
        chunks.append(_chunk([{"text": ""}], model, rid))
    if not plan.directives.no_usage:
        running = {"promptTokenCount": plan.prompt_tokens, "totalTokenCount": plan.prompt_tokens}
        for chunk in chunks[:-1]:
            chunk["usageMetadata"] = running
    _finish(chunks[-1], plan)
    return chunks


def _stream_error(d: Directives, as_array: bool) -> bytes | None:
    if d.midstream_error is None:
        return None
    body = jsonutil.dumps(gemini_error_body(d.midstream_error or 503))
    return _ARRAY_SEP + body + b"]" if as_array else sse(body)


class Gemini:
    """Handlers for the Gemini endpoints (one POST route, dispatched on the `:action`)."""

    def __init__(self, state: MockState) -> None:
        self.state = state

    async def action(self, request: web.Request) -> web.StreamResponse:
        body = await self.state.intake(request)
        model, _, action = request.match_info["name"].rpartition(":")
        array = action == "streamGenerateContent" and request.query.get("alt") != "sse"
        key = gemini_key(request)
        if key is None:
            return gemini_error(
                403, "Method doesn't allow unregistered callers (mock).", as_array=array
            )
        if key not in self.state.config.accepted:
            return gemini_error(
                400,
                "API key not valid. Please pass a valid API key.",
                "API_KEY_INVALID",
                as_array=array,
            )
        if not isinstance(body, dict):
            return gemini_error(400, "Invalid JSON payload received.", as_array=array)
        if action in ("generateContent", "streamGenerateContent"):
            return await self.generate(request, body, model, action != "generateContent", array)
        if action == "countTokens":
            return self._count(body)
        if action == "embedContent":
            return await self._embed(body, model)
        if action == "batchEmbedContents":
            return await self._batch_embed(body, model)
        return gemini_error(404, f"Method not found: {action}")

    async def generate(
        self, request: web.Request, body: dict[str, Any], model: str, stream: bool, array: bool
    ) -> web.StreamResponse:
        contents = _get(body, "contents", "contents")
        if not isinstance(contents, list) or not contents:
            return gemini_error(
                400, "* GenerateContentRequest.contents: contents is not specified", as_array=array
            )
        problem = gemini_violation(body) if self.state.config.strict else None
        if problem is not None:
            return gemini_error(400, problem, as_array=array)
        ask = gemini_ask(body, contents)
        d = parse_directives(ask.last_user_text)
        config = self.state.config
        await pause(d.latency_ms if d.latency_ms is not None else config.latency_ms)
        if d.error is not None:
            return gemini_error(d.error, as_array=array)
        plan = plan_reply(ask, d, config)
        rid = f"mockresp{self.state.next_id()}"
        if not stream:
            return json_response(generate_response(plan, model, rid))
        encoded = [jsonutil.dumps(c) for c in stream_chunks(plan, model, rid)]
        if array:
            events = [b"[" + encoded[0], *(_ARRAY_SEP + e for e in encoded[1:]), b"]"]
        else:
            events = [sse(e) for e in encoded]
        return await send_stream(
            request,
            events,
            content_type=JSON_TYPE if array else "text/event-stream",
            interval_ms=d.interval_ms if d.interval_ms is not None else config.chunk_interval_ms,
            drop_after=d.drop_after,
            error_event=_stream_error(d, array),
        )

    def _count(self, body: dict[str, Any]) -> web.Response:
        inner = _get(body, "generateContentRequest", "generate_content_request")
        source = inner if isinstance(inner, dict) else {"contents": body.get("contents")}
        contents = _get(source, "contents", "contents")
        ask = gemini_ask(source, contents if isinstance(contents, list) else [])
        return json_response({"totalTokens": max(1, ask.prompt_words)})

    async def embed_directives(self, texts: list[str]) -> web.Response | None:
        """Apply the directives found in the texts: the latency, then a forced error."""
        d = parse_directives("\n".join(texts))
        latency = d.latency_ms if d.latency_ms is not None else self.state.config.latency_ms
        await pause(latency)
        return gemini_error(d.error) if d.error is not None else None

    async def _embed(self, body: dict[str, Any], model: str) -> web.Response:
        text, _ = _part_texts(_get(_get(body, "content", "content"), "parts", "parts"))
        forced = await self.embed_directives([text])
        if forced is not None:
            return forced
        dims = _dims(body, model)
        return json_response({"embedding": {"values": embed_vector(text, dims)}})

    async def _batch_embed(self, body: dict[str, Any], model: str) -> web.Response:
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            return gemini_error(400, "* BatchEmbedContentsRequest.requests: is required")
        if len(requests) > BATCH_EMBED_LIMIT:
            return gemini_error(
                400,
                "* BatchEmbedContentsRequest.requests: at most "
                f"{BATCH_EMBED_LIMIT} requests can be in one batch",
            )
        texts: list[str] = []
        for i, item in enumerate(requests):
            named = _get(item, "model", "model")
            if named is not None and named != "models/" + model:
                return gemini_error(
                    400, f"Model of request {i} ({named}) does not match models/{model}."
                )
            texts.append(_part_texts(_get(_get(item, "content", "content"), "parts", "parts"))[0])
        forced = await self.embed_directives(texts)
        if forced is not None:
            return forced
        out = [
            {"values": embed_vector(text, _dims(item, model))}
            for text, item in zip(texts, requests, strict=True)
        ]
        return json_response({"embeddings": out})


def _dims(body: Any, model: str) -> int:
    dims = _get(body, "outputDimensionality", "output_dimensionality")
    if isinstance(dims, int) and not isinstance(dims, bool) and 1 <= dims <= 8192:
        return dims
    return 3072 if "gemini-embedding" in model else 768
