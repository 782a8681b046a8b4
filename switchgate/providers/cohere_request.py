"""Canonical ChatRequest -> Cohere chat v2 request body (`POST {base}/v2/chat`). Pure.

- The system prompt and in-conversation system messages become one leading
  `{"role": "system"}` message (providers/system_messages.py).
- A user turn's ToolResultParts become `{"role": "tool", "tool_call_id", "content"}`
  messages first (text parts as `text` content items; `is_error` has no Cohere form and
  is lost); images inside results move to the user message that follows.
- Images go out as `{"type": "image_url", "image_url": {"url"}}` (inline data as a data
  URL). Audio is refused; a document is sent as text when it is plain text, else refused.
- An assistant turn's text goes out as `content` text items, or as `tool_plan` when the
  turn calls tools (the way Cohere's own answers put it); thinking as `thinking` items
  (signatures dropped; redacted thinking is left out); calls as `tool_calls`.
- Tools: `type: function` with a JSON-schema `parameters` (an empty object schema when
  the tool takes none); any strict tool turns on `strict_tools`. tool_choice "required"
  -> `REQUIRED`, "none" -> `NONE`; a named tool -> `REQUIRED` with only that tool offered
  (Cohere cannot name one). `parallel_tool_calls`, `user` and hosted tools are dropped.
- response_format: json_object -> `{"type": "json_object"}`; json_schema ->
  `{"type": "json_object", "json_schema": schema}` (Cohere's structured output).
- Sampling: `p` and `k` are clamped to Cohere's ranges (0.01-0.99, 0-500), the
  penalties to 0-1; more than 5 stop sequences and n > 1 are refused.
- Reasoning: off -> `thinking: {"type": "disabled"}`; on -> `{"type": "enabled"}` with
  `token_budget` from the budget, else from the effort (the Anthropic effort table).
"""

import base64
import binascii
from typing import Any, Final

from switchgate.core.content import (
    AudioPart,
    FilePart,
    ImagePart,
    Part,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
    UnknownPart,
)
from switchgate.core.request import ChatRequest, Message, Reasoning, Sampling, ToolSpec
from switchgate.errors import invalid
from switchgate.providers.anthropic_request import EFFORT_BUDGETS
from switchgate.providers.system_messages import hoist_system

MAX_STOP_SEQUENCES: Final = 5
P_RANGE: Final = (0.01, 0.99)
K_RANGE: Final = (0, 500)
PENALTY_RANGE: Final = (0.0, 1.0)
IMAGE_DETAILS: Final = frozenset({"auto", "low", "high"})

Item = dict[str, Any]


def build_cohere_body(request: ChatRequest, model: str) -> dict[str, Any]:
    if request.sampling.n is not None and request.sampling.n > 1:
        raise invalid("n > 1 is not supported by Cohere models", param="n")
    body: dict[str, Any] = {"model": model, "messages": _messages(request)}
    _tools(body, request)
    if request.response_format is not None and request.response_format.type != "text":
        fmt: dict[str, Any] = {"type": "json_object"}
        if request.response_format.type == "json_schema" and request.response_format.schema:
            fmt["json_schema"] = request.response_format.schema
        body["response_format"] = fmt
    _sampling(body, request.sampling)
    thinking = _thinking(request.reasoning)
    if thinking is not None:
        body["thinking"] = thinking
    if request.stream:
        body["stream"] = True
    return body


def _clamp(value: float, bounds: tuple[float, float]) -> float:
    return min(max(value, bounds[0]), bounds[1])


def _sampling(body: dict[str, Any], sampling: Sampling) -> None:
    if len(sampling.stop) > MAX_STOP_SEQUENCES:
        raise invalid(
            f"Cohere models take at most {MAX_STOP_SEQUENCES} stop sequences", param="stop"
        )
    if sampling.max_tokens is not None:
        body["max_tokens"] = sampling.max_tokens
    if sampling.stop:
        body["stop_sequences"] = list(sampling.stop)
    if sampling.temperature is not None:
        body["temperature"] = max(sampling.temperature, 0.0)
    if sampling.top_p is not None:
        body["p"] = _clamp(sampling.top_p, P_RANGE)
    if sampling.top_k is not None:
        body["k"] = int(_clamp(sampling.top_k, K_RANGE))
    if sampling.seed is not None:
        body["seed"] = sampling.seed
    if sampling.frequency_penalty is not None:
        body["frequency_penalty"] = _clamp(sampling.frequency_penalty, PENALTY_RANGE)
    if sampling.presence_penalty is not None:
        body["presence_penalty"] = _clamp(sampling.presence_penalty, PENALTY_RANGE)


def _thinking(reasoning: Reasoning | None) -> dict[str, Any] | None:
    if reasoning is None:
        return None
    if reasoning.enabled is False or reasoning.effort == "none" or reasoning.budget_tokens == 0:
        return {"type": "disabled"}
    if not (reasoning.enabled or reasoning.budget_tokens or reasoning.effort):
        return None
    out: dict[str, Any] = {"type": "enabled"}
    budget = reasoning.budget_tokens or EFFORT_BUDGETS.get(reasoning.effort or "")
    if budget:
        out["token_budget"] = budget
    return out


def _tool(spec: ToolSpec) -> Item:
    parameters = dict(spec.parameters) if spec.parameters else {"properties": {}}
    parameters.setdefault("type", "object")
    function: Item = {"name": spec.name}
    if spec.description:
        function["description"] = spec.description
    function["parameters"] = parameters
    return {"type": "function", "function": function}


def _tools(body: dict[str, Any], request: ChatRequest) -> None:
    specs = list(request.tools)
    choice = request.tool_choice
    if choice is not None and choice.mode == "tool":
        specs = [s for s in specs if s.name == choice.name]
        if not specs:
            raise invalid(f"tool_choice names an unknown tool: {choice.name}", "tool_choice")
    if not specs:
        return  # Cohere refuses tool_choice without tools
    body["tools"] = [_tool(s) for s in specs]
    if any(s.strict for s in specs):
        body["strict_tools"] = True
    if choice is not None and choice.mode in ("required", "tool"):
        body["tool_choice"] = "REQUIRED"
    elif choice is not None and choice.mode == "none":
        body["tool_choice"] = "NONE"


def _messages(request: ChatRequest) -> list[Item]:
    system, messages = hoist_system(request)
    out: list[Item] = []
    text = "\n\n".join(p.text for p in system if p.text.strip())
    if text:
        out.append({"role": "system", "content": text})
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if message.role == "assistant":
            turn = _assistant(message)
            if turn is not None:
                out.append(turn)
        else:
            out.extend(_user(message, where))
    return out


def _user(message: Message, where: str) -> list[Item]:
    out: list[Item] = []
    moved: list[Part] = []  # images from tool results
    rest: list[Part] = []
    for part in message.parts:
        if isinstance(part, ToolResultPart):
            out.append(_tool_result(part, where))
            moved.extend(p for p in part.content if isinstance(p, ImagePart))
        else:
            rest.append(part)
    content = [c for c in (_content(p, where) for p in [*moved, *rest]) if c is not None]
    if content:
        if len(content) == 1 and content[0]["type"] == "text":
            out.append({"role": "user", "content": content[0]["text"]})
        else:
            out.append({"role": "user", "content": content})
    return out


def _tool_result(part: ToolResultPart, where: str) -> Item:
    items: list[Item] = []
    for inner in part.content:
        if isinstance(inner, TextPart) and inner.text:
            items.append({"type": "text", "text": inner.text})
        elif isinstance(inner, FilePart):
            items.append({"type": "text", "text": _document_text(inner, where)})
    if not items:
        items.append({"type": "text", "text": ""})
    return {"role": "tool", "tool_call_id": part.tool_call_id, "content": items}


def _content(part: Part, where: str) -> Item | None:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text} if part.text else None
    if isinstance(part, ImagePart):
        return _image(part, where)
    if isinstance(part, FilePart):
        return {"type": "text", "text": _document_text(part, where)}
    if isinstance(part, AudioPart):
        raise invalid("audio input is not supported by Cohere models", param=where)
    return None  # thinking in a user turn, other dialects' unknown parts


def _image(part: ImagePart, where: str) -> Item:
    if part.data is not None:
        url = f"data:{part.media_type or 'image/png'};base64,{part.data}"
    elif part.url:
        url = part.url
    else:
        raise invalid("image: data or url required", param=where)
    image: Item = {"url": url}
    if part.detail in IMAGE_DETAILS:
        image["detail"] = part.detail
    return {"type": "image_url", "image_url": image}


def _document_text(part: FilePart, where: str) -> str:
    media_type, data = part.media_type, part.data
    if part.url and part.url.startswith("data:"):
        header, _, data = part.url[5:].partition(",")
        media_type = header.split(";")[0]
    if data is not None and media_type and media_type.startswith("text/"):
        try:
            return base64.b64decode(data, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise invalid("document: text data must be base64 UTF-8", param=where) from exc
    raise invalid(
        f"document type {media_type or 'unknown'!r} is not supported by Cohere models "
        "(plain text only)",
        param=where,
    )


def _assistant(message: Message) -> Item | None:
    texts: list[str] = []
    thinking: list[Item] = []
    calls: list[Item] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, ThinkingPart) and part.redacted is None and part.text:
            thinking.append({"type": "thinking", "thinking": part.text})
        elif isinstance(part, ToolCallPart):
            function = {"name": part.name, "arguments": part.arguments or "{}"}
            calls.append({"id": part.id, "type": "function", "function": function})
        elif isinstance(part, UnknownPart):
            continue
    text = "".join(texts)
    out: Item = {"role": "assistant"}
    if calls:
        if text:
            out["tool_plan"] = text
        out["tool_calls"] = calls
        if thinking:
            out["content"] = thinking
    elif text or thinking:
        out["content"] = [*thinking, *([{"type": "text", "text": text}] if text else [])]
    else:
        return None
    return out
