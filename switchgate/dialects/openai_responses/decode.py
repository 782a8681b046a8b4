"""OpenAI Responses request body (`POST /v1/responses`, protocols §2.7) -> canonical ChatRequest.

Validation fails the way the Chat dialect does (400 `invalid_request_error`, `param` names
the field). Mapping:
- `instructions` is the first system text; `system` / `developer` input messages follow it,
  hoisted in order (their position in the conversation is lost, as for Chat).
- Items: user messages -> user turns (input_text / input_image / input_file / input_audio);
  consecutive assistant messages, `reasoning` and `function_call` items -> ONE assistant
  turn; consecutive `function_call_output` items -> ONE user turn of ToolResultParts, whose
  `name` is recovered from the earlier call.
- `reasoning` items -> ThinkingPart: the summary texts (joined by a blank line; else the raw
  `content` texts), `encrypted_content` as the signature. A bare reference is dropped.
- Function tools -> ToolSpec; a `namespace` tool's functions are flattened (own name when
  unique, else `namespace__name`; `extras["responses"]["namespaces"]` maps them back, and
  calls come back to the client with their `namespace`). Hosted tools (`web_search`, ...)
  -> `hosted_tools` (providers/hosted_tools.py: mapped or dropped, never refused).
  `tool_choice`: none/auto/required, `{type: function, name}`, `{type: allowed_tools,
  mode, tools}` (filters the tool list).
- `max_output_tokens` -> max_tokens; `text.format` -> ResponseFormat; `reasoning.effort`
  -> Reasoning (a requested `summary` asks for thoughts); `safety_identifier` / `user` -> user.
- What the IR cannot carry but a native Responses upstream can (hosted tool_choice, item
  references and other item types) is listed in `extras["responses"]["native_only"]`;
  the relay refuses it (400) when no channel can take the request natively.
- `extras["responses"]["echo"]` keeps the request settings the Response object echoes.
"""

from dataclasses import replace
from typing import Any, Final

from switchgate.core.content import TextPart
from switchgate.core.request import (
    ChatRequest,
    HostedTool,
    Reasoning,
    ResponseFormat,
    Sampling,
    ToolChoice,
    ToolSpec,
)
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
from switchgate.dialects.openai_responses.decode_items import ItemDecoder, input_items
from switchgate.errors import invalid
from switchgate.wire.hosted_tools import responses_hosted

EXTRAS_KEY: Final = "responses"
_EFFORTS: Final = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
# Request settings echoed in the Response object, when the client sent them.
ECHOED: Final = (
    "instructions", "max_output_tokens", "parallel_tool_calls", "previous_response_id",
    "reasoning", "store", "temperature", "text", "tool_choice", "tools", "top_p",
    "truncation", "user", "metadata", "service_tier", "prompt_cache_key",
    "safety_identifier", "include",
)  # fmt: skip


def responses_to_core_request(body: Any) -> ChatRequest:
    """Validate a parsed `/v1/responses` body and convert it; raises GatewayError."""
    if not isinstance(body, dict):
        raise invalid("The request body must be a JSON object.", code="invalid_type")
    model = string_field(body, "model", required=True)
    if not model:
        raise missing("model")
    if body.get("input") is None and body.get("previous_response_id") is None:
        raise missing("input")
    hosted: list[HostedTool] = []
    namespaces: dict[str, list[str]] = {}
    tools = _tools(body.get("tools"), hosted, namespaces)
    decoder = ItemDecoder({(ns, name): flat for flat, (ns, name) in namespaces.items()})
    instructions = string_field(body, "instructions")
    if instructions:
        decoder.system.append(TextPart(instructions))
    for i, item in enumerate(input_items(body)):
        decoder.add(i, item)
    decoder.flush()
    native_only = list(decoder.native_only)
    tool_choice, allowed = _tool_choice(body.get("tool_choice"), native_only)
    if allowed is not None:
        tools = tuple(tool for tool in tools if tool.name in allowed)
    for key in ("conversation", "prompt"):
        if body.get(key) is not None:
            native_only.append(f"The '{key}' parameter")
    if body.get("background") is True:
        native_only.append("Background responses")
    metadata = body.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise type_error("metadata", "an object", metadata)
    store = bool_field(body, "store")
    extras: dict[str, Any] = {"echo": {k: body[k] for k in ECHOED if body.get(k) is not None}}
    if native_only:
        extras["native_only"] = native_only
    if namespaces:
        extras["namespaces"] = namespaces
    if store is False:
        extras["store"] = False
    return ChatRequest(
        model=model,
        messages=tuple(decoder.messages),
        system=tuple(decoder.system),
        tools=tools,
        hosted_tools=tuple(hosted),
        tool_choice=tool_choice,
        parallel_tool_calls=bool_field(body, "parallel_tool_calls"),
        sampling=Sampling(
            max_tokens=int_field(body, "max_output_tokens", 1),
            temperature=number_field(body, "temperature", 0, 2),
            top_p=number_field(body, "top_p", 0, 1),
        ),
        response_format=_text_format(body.get("text")),
        reasoning=_reasoning(body.get("reasoning")),
        user=string_field(body, "safety_identifier") or string_field(body, "user"),
        stream=bool(bool_field(body, "stream")),
        extras={EXTRAS_KEY: extras},
    )


def _tools(
    raw: Any, hosted: list[HostedTool], namespaces: dict[str, list[str]]
) -> tuple[ToolSpec, ...]:
    """Function tools; a `namespace` tool's functions flattened (see `_flatten`); hosted
    tools (web_search, ...) collected for providers/hosted_tools.py."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise type_error("tools", "an array", raw)
    specs: list[ToolSpec] = []
    grouped: list[tuple[str, list[Any], str]] = []  # (namespace, its tools, where)
    for i, entry in enumerate(raw):
        p = f"tools[{i}]"
        if not isinstance(entry, dict):
            raise type_error(p, "an object", entry)
        kind = entry.get("type")
        if kind is None:
            raise missing(f"{p}.type")
        if kind == "namespace":
            inner = entry.get("tools")
            if not isinstance(inner, list):
                raise type_error(f"{p}.tools", "an array", inner)
            grouped.append((string_field(entry, "name", required=True, prefix=p), inner, p))
        elif kind == "function":
            specs.append(function_spec(entry, p))
        else:
            hosted.append(responses_hosted(entry))
    if grouped:
        specs += _flatten(grouped, {spec.name for spec in specs}, hosted, namespaces)
    return tuple(specs)


def _flatten(
    grouped: list[tuple[str, list[Any], str]],
    taken: set[str],
    hosted: list[HostedTool],
    namespaces: dict[str, list[str]],
) -> list[ToolSpec]:
    """A namespace's functions as plain functions for upstreams that have no namespaces:
    each keeps its own name when no other tool has it, else becomes `namespace__name`
    (cut to 64 characters); `namespaces` maps the upstream name back."""
    counts: dict[str, int] = {}
    for _, inner, _ in grouped:
        for entry in inner:
            if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                counts[entry["name"]] = counts.get(entry["name"], 0) + 1
    specs: list[ToolSpec] = []
    for namespace, inner, p in grouped:
        for j, entry in enumerate(inner):
            pj = f"{p}.tools[{j}]"
            if not isinstance(entry, dict):
                raise type_error(pj, "an object", entry)
            if entry.get("type") != "function":
                hosted.append(responses_hosted(entry))
                continue
            spec = function_spec(entry, pj)
            flat = spec.name
            if flat in taken or counts.get(flat, 0) > 1:
                flat = f"{namespace}__{spec.name}"[:64]
            taken.add(flat)
            namespaces[flat] = [namespace, spec.name]
            specs.append(replace(spec, name=flat))
    return specs


def _tool_choice(
    raw: Any, native_only: list[str]
) -> tuple[ToolChoice | None, frozenset[str] | None]:
    """(choice, allowed tool names)."""
    if raw is None:
        return None, None
    if isinstance(raw, str):
        if raw not in ("none", "auto", "required"):
            raise value_error("tool_choice", raw, ("none", "auto", "required"))
        return ToolChoice(raw), None  # type: ignore[arg-type]
    if not isinstance(raw, dict):
        raise type_error("tool_choice", "a string or an object", raw)
    kind = raw.get("type")
    if kind == "function":
        return ToolChoice("tool", string_field(raw, "name", True, "tool_choice")), None
    if kind == "allowed_tools":
        mode = raw.get("mode")
        if mode not in ("auto", "required"):
            raise value_error("tool_choice.mode", mode, ("auto", "required"))
        tools = raw.get("tools")
        if not isinstance(tools, list):
            raise type_error("tool_choice.tools", "an array", tools)
        names = {t.get("name") for t in tools if isinstance(t, dict)}
        return ToolChoice(mode), frozenset(n for n in names if isinstance(n, str))
    if kind is None:
        raise missing("tool_choice.type")
    native_only.append(f"The tool_choice type '{kind}'")
    return None, None


def _text_format(raw: Any) -> ResponseFormat | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise type_error("text", "an object", raw)
    fmt = raw.get("format")
    if fmt is None:
        return None
    if not isinstance(fmt, dict):
        raise type_error("text.format", "an object", fmt)
    kind = fmt.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return ResponseFormat("json_object")
    if kind != "json_schema":
        raise value_error("text.format.type", kind, ("text", "json_object", "json_schema"))
    schema = fmt.get("schema")
    if schema is None:
        raise missing("text.format.schema")
    if not isinstance(schema, dict):
        raise type_error("text.format.schema", "an object", schema)
    return ResponseFormat(
        "json_schema",
        schema=schema,
        name=string_field(fmt, "name", True, "text.format"),
        strict=bool_field(fmt, "strict", prefix="text.format"),
    )


def _reasoning(raw: Any) -> Reasoning | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise type_error("reasoning", "an object", raw)
    effort = string_field(raw, "effort", prefix="reasoning")
    if effort is not None and effort not in _EFFORTS:
        raise value_error("reasoning.effort", effort, _EFFORTS)
    summary = raw.get("summary", raw.get("generate_summary"))
    if effort is None and summary is None:
        return None
    return Reasoning(
        enabled=False if effort == "none" else None,
        effort=effort,
        include_thoughts=True if summary is not None and effort != "none" else None,
    )
