"""OpenAI Chat Completions request body -> canonical ChatRequest.

Validation mirrors OpenAI's: a 400 `invalid_request_error` whose `param` names the
offending field (`messages[2].content[0].image_url.url`) and whose `code` is one of
OpenAI's (`missing_required_parameter`, `invalid_type`, `invalid_value`, ...).

Mapping choices:
- `system` / `developer` messages are hoisted, in order, into `ChatRequest.system`
  (one TextPart per non-empty text part; their position in the conversation is lost).
- `tool` (and legacy `function`) messages become ToolResultParts; a run of them becomes
  ONE user message. The result's `name` is recovered from the earlier tool call.
- Legacy `function_call` on an assistant message becomes a ToolCallPart with the id
  `call_legacy_<message index>`, which the following `function` message answers.
- A message's `name` is dropped (nothing models it).
- Unmodelled parts (custom tool calls, assistant `audio`, unknown part types) are kept
  as UnknownPart("openai", raw).
- Every top-level field the IR does not model goes, unchanged, into `extras["openai"]`;
  so do `max_completion_tokens` (a marker telling the O provider which limit field the
  client used), custom tools (`extras["openai"]["tools"]`, only the non-function
  entries) and a custom `tool_choice`.

Reasoning text extension: OpenAI Chat has no reasoning text on the wire. Of the de-facto
extensions we pick `reasoning_content` (DeepSeek / vLLM style) and only that one: an
assistant message's `reasoning_content` (with our optional `reasoning_signature`) becomes
a ThinkingPart in front of its other parts. `reasoning`, `reasoning_details` and
`thinking_blocks` are ignored.
"""

from typing import Any, Final

from switchgate.core.request import (
    ChatRequest,
    Reasoning,
    ResponseFormat,
    Sampling,
    ToolChoice,
    ToolSpec,
)
from switchgate.dialects.openai_chat.decode_messages import MessageDecoder
from switchgate.dialects.openai_chat.validate import (
    bool_field,
    function_spec,
    int_field,
    missing,
    number_field,
    string_field,
    type_error,
    value_error,
)
from switchgate.errors import invalid

_EFFORTS: Final = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
_MODELLED: Final = frozenset(
    {
        "model", "messages", "temperature", "top_p", "top_k", "n", "max_tokens",
        "max_completion_tokens", "stop", "seed", "presence_penalty", "frequency_penalty",
        "tools", "tool_choice", "parallel_tool_calls", "response_format", "reasoning_effort",
        "user", "stream", "functions", "function_call",
    }
)  # fmt: skip


def openai_chat_to_core_request(body: Any) -> ChatRequest:
    """Validate a parsed `/v1/chat/completions` body and convert it; raises GatewayError."""
    if not isinstance(body, dict):
        raise invalid("The request body must be a JSON object.", code="invalid_type")
    model = string_field(body, "model", required=True)
    if not model:
        raise missing("model")
    raw_messages = body.get("messages")
    if raw_messages is None:
        raise missing("messages")
    if not isinstance(raw_messages, list):
        raise type_error("messages", "an array", raw_messages)
    if not raw_messages:
        raise invalid(
            "Invalid 'messages': empty array. Expected an array with minimum length 1, "
            "but got an empty array instead.",
            param="messages",
            code="empty_array",
        )
    decoder = MessageDecoder()
    for i, message in enumerate(raw_messages):
        decoder.add(i, message)
    decoder.flush_results()

    extras = {k: v for k, v in body.items() if k not in _MODELLED and v is not None}
    tools, custom_tools = _tools(body)
    if custom_tools:
        extras["tools"] = custom_tools
    tool_choice, allowed = _tool_choice(body.get("tool_choice"), "tool_choice")
    if body.get("tool_choice") is not None and tool_choice is None:
        extras["tool_choice"] = body["tool_choice"]  # custom: only an O upstream can honour it
    if tool_choice is None:
        tool_choice, allowed = _legacy_function_call(body.get("function_call"))
    if allowed is not None:
        tools = tuple(tool for tool in tools if tool.name in allowed)
    max_completion = int_field(body, "max_completion_tokens", 1)
    if max_completion is not None:
        extras["max_completion_tokens"] = max_completion
    max_tokens = int_field(body, "max_tokens", 1)
    effort = string_field(body, "reasoning_effort")
    if effort is not None and effort not in _EFFORTS:
        raise value_error("reasoning_effort", effort, _EFFORTS)
    return ChatRequest(
        model=model,
        messages=tuple(decoder.messages),
        system=tuple(decoder.system),
        tools=tools,
        tool_choice=tool_choice,
        parallel_tool_calls=bool_field(body, "parallel_tool_calls"),
        sampling=_sampling(body, max_completion if max_completion is not None else max_tokens),
        response_format=_response_format(body.get("response_format")),
        reasoning=None
        if effort is None
        else Reasoning(enabled=False if effort == "none" else None, effort=effort),
        user=string_field(body, "user"),
        stream=bool(bool_field(body, "stream")),
        extras={"openai": extras} if extras else {},
    )


def _sampling(body: dict[str, Any], max_tokens: int | None) -> Sampling:
    stop = body.get("stop")
    if isinstance(stop, str):
        stops: tuple[str, ...] = (stop,)
    elif stop is None:
        stops = ()
    elif isinstance(stop, list) and all(isinstance(s, str) for s in stop):
        if len(stop) > 4:
            raise invalid(
                "Invalid 'stop': array too long. Expected an array with maximum length 4, "
                f"but got an array with length {len(stop)} instead.",
                param="stop",
                code="array_above_max_length",
            )
        stops = tuple(stop)
    else:
        raise type_error("stop", "a string or an array of strings", stop)
    top_k = int_field(body, "top_k", None)  # not OpenAI's, but vLLM & co accept it
    return Sampling(
        max_tokens=max_tokens,
        temperature=number_field(body, "temperature", 0, 2),
        top_p=number_field(body, "top_p", 0, 1),
        top_k=top_k if top_k is not None and top_k > 0 else None,
        stop=stops,
        seed=int_field(body, "seed", None),
        presence_penalty=number_field(body, "presence_penalty", -2, 2),
        frequency_penalty=number_field(body, "frequency_penalty", -2, 2),
        n=_choices(body),
    )


# `n` multiplies the output (and the hold for it): bounded so one request cannot reserve,
# or be served, far past what a balance covers.
MAX_CHOICES: Final = 16


def _choices(body: dict[str, Any]) -> int | None:
    n = int_field(body, "n", 1)
    if n is not None and n > MAX_CHOICES:
        raise invalid(
            f"Invalid 'n': integer above maximum value. Expected a value <= {MAX_CHOICES}, "
            f"but got {n} instead.",
            param="n",
            code="integer_above_max_value",
        )
    return n


def _tools(body: dict[str, Any]) -> tuple[tuple[ToolSpec, ...], list[Any]]:
    raw = body.get("tools")
    key = "tools"
    if raw is None:
        raw, key = body.get("functions"), "functions"  # legacy `functions`
        if raw is None:
            return (), []
    if not isinstance(raw, list):
        raise type_error(key, "an array", raw)
    specs: list[ToolSpec] = []
    custom: list[Any] = []
    for i, entry in enumerate(raw):
        p = f"{key}[{i}]"
        if not isinstance(entry, dict):
            raise type_error(p, "an object", entry)
        if key == "functions":
            specs.append(function_spec(entry, p))
            continue
        kind = entry.get("type", "function")
        if kind == "custom":
            custom.append(entry)
            continue
        if kind != "function":
            raise value_error(f"{p}.type", kind, ("function", "custom"))
        function = entry.get("function")
        if function is None:
            raise missing(f"{p}.function")
        if not isinstance(function, dict):
            raise type_error(f"{p}.function", "an object", function)
        specs.append(function_spec(function, f"{p}.function"))
    return tuple(specs), custom


def _tool_choice(raw: Any, p: str) -> tuple[ToolChoice | None, frozenset[str] | None]:
    """(choice, allowed tool names); (None, None) for absent or custom choices."""
    if raw is None:
        return None, None
    if isinstance(raw, str):
        if raw not in ("none", "auto", "required"):
            raise value_error(p, raw, ("none", "auto", "required"))
        return ToolChoice(raw), None  # type: ignore[arg-type]
    if not isinstance(raw, dict):
        raise type_error(p, "a string or an object", raw)
    kind = raw.get("type")
    if kind == "function":
        function = raw.get("function")
        if not isinstance(function, dict):
            raise missing(f"{p}.function")
        return ToolChoice("tool", string_field(function, "name", True, f"{p}.function")), None
    if kind == "custom":
        return None, None
    if kind == "allowed_tools":
        allowed = raw.get("allowed_tools")
        if not isinstance(allowed, dict):
            raise missing(f"{p}.allowed_tools")
        mode = allowed.get("mode")
        if mode not in ("auto", "required"):
            raise value_error(f"{p}.allowed_tools.mode", mode, ("auto", "required"))
        tools = allowed.get("tools")
        if not isinstance(tools, list):
            raise type_error(f"{p}.allowed_tools.tools", "an array", tools)
        names = set()
        for tool in tools:
            function = tool.get("function") if isinstance(tool, dict) else None
            name = function.get("name") if isinstance(function, dict) else None
            names.add(name if isinstance(name, str) else "")
        return ToolChoice(mode), frozenset(names)
    raise value_error(f"{p}.type", kind, ("function", "custom", "allowed_tools"))


def _legacy_function_call(raw: Any) -> tuple[ToolChoice | None, frozenset[str] | None]:
    if raw is None:
        return None, None
    if raw in ("none", "auto"):
        return ToolChoice(raw), None
    if isinstance(raw, dict) and isinstance(raw.get("name"), str):
        return ToolChoice("tool", raw["name"]), None
    raise value_error("function_call", raw, ("none", "auto", '{"name": ...}'))


def _response_format(raw: Any) -> ResponseFormat | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise type_error("response_format", "an object", raw)
    kind = raw.get("type")
    if kind in ("text", "json_object"):
        return ResponseFormat(kind)
    if kind != "json_schema":
        raise value_error("response_format.type", kind, ("text", "json_object", "json_schema"))
    spec = raw.get("json_schema")
    if spec is None:
        raise missing("response_format.json_schema")
    if not isinstance(spec, dict):
        raise type_error("response_format.json_schema", "an object", spec)
    name = string_field(spec, "name", True, "response_format.json_schema")
    schema = spec.get("schema")
    if schema is not None and not isinstance(schema, dict):
        raise type_error("response_format.json_schema.schema", "an object", schema)
    strict = bool_field(spec, "strict", prefix="response_format.json_schema")
    return ResponseFormat("json_schema", schema=schema, name=name, strict=strict)
