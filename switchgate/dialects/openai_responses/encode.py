"""Canonical ChatResponse -> OpenAI Responses `response` object (protocols §2.7).

- Output items in order: thinking -> a `reasoning` item (`summary_text` with the thinking
  text, `encrypted_content` = the signature when there is one); each run of text -> a
  `message` item with one `output_text` part; each tool call -> a `function_call` item
  (`call_id` = the call's id). Redacted thinking has no Responses form and is dropped.
- Item ids derive from the response id: `rs_`/`msg_`/`fc_` + its suffix + `_` + the index.
- `status`: `incomplete` with `incomplete_details.reason` `max_output_tokens` (finish
  length) or `content_filter`; otherwise `completed`.
- `model` is the model the client asked for; request settings are echoed with OpenAI's
  defaults for what the client left out.
"""

import secrets
import time
from typing import Any, Final

from switchgate.core.content import TextPart, ThinkingPart, ToolCallPart
from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse, FinishReason
from switchgate.core.usage import Usage

# Echoed settings with OpenAI's defaults, in the order the Response object lists them.
_ECHO_DEFAULTS: Final[tuple[tuple[str, Any], ...]] = (
    ("instructions", None),
    ("max_output_tokens", None),
    ("parallel_tool_calls", True),
    ("previous_response_id", None),
    ("reasoning", {"effort": None, "summary": None}),
    ("store", True),
    ("temperature", 1.0),
    ("text", {"format": {"type": "text"}}),
    ("tool_choice", "auto"),
    ("tools", []),
    ("top_p", 1.0),
    ("truncation", "disabled"),
)
_OPTIONAL_ECHO: Final = ("user", "safety_identifier", "service_tier", "prompt_cache_key")
_INCOMPLETE: Final[dict[FinishReason, str]] = {
    FinishReason.LENGTH: "max_output_tokens",
    FinishReason.CONTENT_FILTER: "content_filter",
}


def new_response_id() -> str:
    return "resp_" + secrets.token_hex(24)


def item_id(response_id: str, prefix: str, index: int) -> str:
    return f"{prefix}_{response_id.removeprefix('resp_')}_{index}"


def usage_to_responses(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {
            "cached_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
        },
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.total_tokens,
    }


def status_for(reason: FinishReason | None) -> tuple[str, dict[str, str] | None]:
    """(status, incomplete_details) for a finish reason."""
    incomplete = _INCOMPLETE.get(reason) if reason is not None else None
    if incomplete is None:
        return "completed", None
    return "incomplete", {"reason": incomplete}


def message_item(iid: str, text: str, status: str = "completed") -> dict[str, Any]:
    content = [{"type": "output_text", "annotations": [], "logprobs": [], "text": text}]
    return {
        "id": iid,
        "type": "message",
        "status": status,
        "content": content if status == "completed" else [],
        "role": "assistant",
    }


def function_call_item(
    iid: str,
    call_id: str,
    name: str,
    arguments: str,
    status: str = "completed",
    namespaces: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    """A function_call item; a call to a function of a `namespace` tool (flattened for
    the upstream, see decode.py) gets the client's own name and its `namespace` back."""
    item = {
        "id": iid,
        "type": "function_call",
        "status": status,
        "arguments": arguments,
        "call_id": call_id,
        "name": name,
    }
    if namespaces and name in namespaces:
        item["namespace"], item["name"] = namespaces[name]
    return item


def namespaces_of(request: ChatRequest) -> dict[str, list[str]] | None:
    """{flat upstream name: [namespace, name]} for the request's namespace tools."""
    found: dict[str, list[str]] | None = request.extras.get("responses", {}).get("namespaces")
    return found


def reasoning_item(iid: str, text: str, signature: str | None) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": iid,
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": text}] if text else [],
    }
    if signature:
        item["encrypted_content"] = signature
    return item


def output_items(
    response: ChatResponse, response_id: str, namespaces: dict[str, list[str]] | None = None
) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    texts: list[str] = []

    def flush_text() -> None:
        if texts:
            items.append(message_item(item_id(response_id, "msg", len(items)), "".join(texts)))
            texts.clear()

    for part in response.parts:
        if isinstance(part, TextPart):
            texts.append(part.text)
            continue
        flush_text()
        index = len(items)
        if isinstance(part, ToolCallPart):
            iid = item_id(response_id, "fc", index)
            args = part.arguments
            items.append(function_call_item(iid, part.id, part.name, args, namespaces=namespaces))
        elif isinstance(part, ThinkingPart) and (part.text or part.signature):
            iid = item_id(response_id, "rs", index)
            items.append(reasoning_item(iid, part.text, part.signature))
    flush_text()
    return items


def response_object(
    request: ChatRequest,
    *,
    response_id: str,
    created_at: int,
    status: str,
    output: list[dict[str, Any]],
    usage: Usage | None,
    incomplete_details: dict[str, str] | None = None,
) -> dict[str, Any]:
    echo = request.extras.get("responses", {}).get("echo", {})
    body: dict[str, Any] = {
        "id": response_id,
        "object": "response",
        "created_at": created_at,
        "status": status,
        "error": None,
        "incomplete_details": incomplete_details,
    }
    for key, default in _ECHO_DEFAULTS[:2]:
        body[key] = echo.get(key, default)
    body["model"] = request.model
    body["output"] = output
    for key, default in _ECHO_DEFAULTS[2:]:
        body[key] = echo.get(key, default)
    body["usage"] = usage_to_responses(usage) if usage is not None else None
    for key in _OPTIONAL_ECHO:
        if key in echo:
            body[key] = echo[key]
    body["metadata"] = echo.get("metadata", {})
    return body


def core_to_responses_response(
    response: ChatResponse,
    request: ChatRequest,
    *,
    response_id: str | None = None,
    created_at: int | None = None,
) -> dict[str, Any]:
    rid = response_id or new_response_id()
    status, details = status_for(response.finish_reason)
    return response_object(
        request,
        response_id=rid,
        created_at=created_at if created_at is not None else response.created or int(time.time()),
        status=status,
        output=output_items(response, rid, namespaces_of(request)),
        usage=response.usage,
        incomplete_details=details,
    )
