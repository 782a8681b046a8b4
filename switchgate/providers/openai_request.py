"""Canonical ChatRequest -> OpenAI Chat Completions request body (protocols §1, §5 "->O").

- `system` becomes one leading `system` message (texts joined with a blank line).
- A user turn's ToolResultParts become `tool` messages first (text joined with "\\n";
  `is_error` is lost); images and files inside results move to a following user message.
- Assistant thinking survives only as `reasoning_content` (text; signatures dropped).
- The output limit goes out as `max_tokens`, which every OpenAI-compatible server knows,
  unless the client itself used `max_completion_tokens` (marker in extras["openai"]).
- Reasoning: an effort passes through; a budget alone maps to an effort
  (<=1024 low, <=8192 medium, else high); "off" without an effort sends nothing.
- extras["openai"] (fields only an O client sends) is merged back for every key the
  IR didn't produce; custom tools are appended to `tools`.
"""

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
from switchgate.core.request import (
    ChatRequest,
    Message,
    Reasoning,
    ResponseFormat,
    Sampling,
    ToolSpec,
)
from switchgate.errors import invalid

_HANDLED_EXTRAS: Final = frozenset({"max_completion_tokens", "stream_options", "tools"})


def build_openai_body(request: ChatRequest, model: str) -> dict[str, Any]:
    extras = request.extras.get("openai", {})
    body: dict[str, Any] = {"model": model, "messages": _messages(request)}
    _sampling(body, request.sampling, "max_completion_tokens" in extras)
    _tools(body, request, extras.get("tools", ()))
    if request.response_format is not None:
        body["response_format"] = _response_format(request.response_format)
    if request.reasoning is not None:
        effort = reasoning_effort(request.reasoning)
        if effort is not None:
            body["reasoning_effort"] = effort
    if request.user is not None:
        body["user"] = request.user
    if request.stream:
        options = extras.get("stream_options")
        body["stream"] = True
        body["stream_options"] = {
            **(options if isinstance(options, dict) else {}),
            "include_usage": True,
        }
    for key, value in extras.items():
        if key in body or key in _HANDLED_EXTRAS or (key == "tool_choice" and "tools" not in body):
            continue
        body[key] = value
    return body


def _sampling(body: dict[str, Any], sampling: Sampling, completion_limit: bool) -> None:
    if sampling.max_tokens is not None:
        body["max_completion_tokens" if completion_limit else "max_tokens"] = sampling.max_tokens
    for key, value in (
        ("temperature", sampling.temperature),
        ("top_p", sampling.top_p),
        ("n", sampling.n),
        ("seed", sampling.seed),
        ("presence_penalty", sampling.presence_penalty),
        ("frequency_penalty", sampling.frequency_penalty),
    ):
        if value is not None:
            body[key] = value
    if sampling.stop:
        body["stop"] = list(sampling.stop)


def _tools(body: dict[str, Any], request: ChatRequest, custom: Any) -> None:
    tools: list[Any] = [_tool(spec) for spec in request.tools]
    if isinstance(custom, list):
        tools.extend(custom)
    if not tools:
        return  # OpenAI rejects tool_choice and parallel_tool_calls without tools
    body["tools"] = tools
    if request.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = request.parallel_tool_calls
    choice = request.tool_choice
    if choice is not None:
        if choice.mode == "tool":
            body["tool_choice"] = {"type": "function", "function": {"name": choice.name}}
        else:
            body["tool_choice"] = choice.mode


def reasoning_effort(reasoning: Reasoning) -> str | None:
    if reasoning.effort is not None:
        return reasoning.effort
    if reasoning.enabled is False or reasoning.budget_tokens is None:
        return None
    budget = reasoning.budget_tokens
    return "low" if budget <= 1024 else "medium" if budget <= 8192 else "high"


def _tool(spec: ToolSpec) -> dict[str, Any]:
    function: dict[str, Any] = {"name": spec.name}
    if spec.description is not None:
        function["description"] = spec.description
    if spec.parameters is not None:
        function["parameters"] = spec.parameters
    if spec.strict is not None:
        function["strict"] = spec.strict
    return {"type": "function", "function": function}


def _response_format(fmt: ResponseFormat) -> dict[str, Any]:
    if fmt.type != "json_schema":
        return {"type": fmt.type}
    schema: dict[str, Any] = {"name": fmt.name or "response"}
    if fmt.schema is not None:
        schema["schema"] = fmt.schema
    if fmt.strict is not None:
        schema["strict"] = fmt.strict
    return {"type": "json_schema", "json_schema": schema}


def _messages(request: ChatRequest) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    system = [part.text for part in request.system if part.text]
    if system:
        out.append({"role": "system", "content": "\n\n".join(system)})
    for i, message in enumerate(request.messages):
        if message.role == "assistant":
            out.append(_assistant(message))
        elif message.role == "system":  # in place (providers/system_messages.py)
            text = "\n\n".join(p.text for p in message.parts if isinstance(p, TextPart))
            out.append({"role": "system", "content": text})
        else:
            out.extend(_user(message, f"messages[{i}]"))
    return out


def _user(message: Message, where: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    moved: list[Part] = []  # images and files from tool results
    rest: list[Part] = []
    for part in message.parts:
        if isinstance(part, ToolResultPart):
            text = "\n".join(p.text for p in part.content if isinstance(p, TextPart))
            out.append({"role": "tool", "tool_call_id": part.tool_call_id, "content": text})
            moved.extend(p for p in part.content if not isinstance(p, TextPart))
        else:
            rest.append(part)
    content = [c for c in (_content_part(p, where) for p in [*moved, *rest]) if c is not None]
    if content or not out:
        if len(content) == 1 and content[0]["type"] == "text":
            out.append({"role": "user", "content": content[0]["text"]})
        else:
            out.append({"role": "user", "content": content})
    return out


def _content_part(part: Part, where: str) -> dict[str, Any] | None:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        url = part.url
        if part.data is not None:
            url = f"data:{part.media_type or 'image/png'};base64,{part.data}"
        image: dict[str, Any] = {"url": url}
        if part.detail is not None:
            image["detail"] = part.detail
        return {"type": "image_url", "image_url": image}
    if isinstance(part, AudioPart):
        return {"type": "input_audio", "input_audio": {"data": part.data, "format": part.format}}
    if isinstance(part, FilePart):
        file: dict[str, Any] = {}
        if part.data is not None:
            media_type = part.media_type or "application/pdf"
            file["file_data"] = f"data:{media_type};base64,{part.data}"
        elif part.file_id is not None:
            file["file_id"] = part.file_id
        else:
            raise invalid("Files by URL are not supported by this model's provider.", where)
        if part.filename is not None:
            file["filename"] = part.filename
        return {"type": "file", "file": file}
    if isinstance(part, UnknownPart) and part.dialect == "openai" and "type" in part.raw:
        return part.raw
    return None  # thinking in a user turn, other dialects' unknown parts


def _assistant(message: Message) -> dict[str, Any]:
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[dict[str, Any]] = []
    extra: dict[str, Any] = {}
    for part in message.parts:
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, ThinkingPart):
            thinking.append(part.text)
        elif isinstance(part, ToolCallPart):
            function = {"name": part.name, "arguments": part.arguments}
            calls.append({"id": part.id, "type": "function", "function": function})
        elif isinstance(part, UnknownPart) and part.dialect == "openai":
            if part.raw.get("type") == "custom":
                calls.append(part.raw)
            elif "type" not in part.raw:
                extra.update(part.raw)  # e.g. {"audio": {"id": ...}}
    out: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else None}
    if out["content"] is None and not calls:
        out["content"] = ""
    if calls:
        out["tool_calls"] = calls
    reasoning = "".join(thinking)
    if reasoning:
        out["reasoning_content"] = reasoning
    out.update(extra)
    return out
