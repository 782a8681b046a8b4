"""Gemini generate-content request (G wire) -> canonical ChatRequest (protocols §4.2, §5).

Lenient on input: every field is accepted in camelCase and in snake_case (the REST layer is
protobuf JSON, and the google-genai SDK itself sends mixed spellings). Whatever the IR can't
hold (safetySettings, cachedContent, labels, non-function tools, unmapped generationConfig
fields...) goes to `extras["gemini"]` in camelCase, for the Gemini provider to merge back.
"""

from typing import Any, Final

from switchgate import jsonutil
from switchgate.core.content import (
    FilePart,
    ImagePart,
    Part,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from switchgate.core.request import (
    ChatRequest,
    Message,
    Reasoning,
    ResponseFormat,
    Sampling,
    ToolChoice,
    ToolSpec,
)
from switchgate.errors import invalid
from switchgate.wire.gemini_parts import (
    as_bool,
    as_int,
    as_list,
    as_number,
    as_object,
    as_str,
    bare_model,
    camel,
    get_field,
    openapi_to_json_schema,
    part_to_core,
    synth_call_id,
)
from switchgate.wire.hosted_tools import gemini_hosted

_REQUEST_KEYS: Final = frozenset(
    {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig", "model"}
)
_GENERATION_KEYS: Final = frozenset(
    {
        "temperature", "topP", "topK", "maxOutputTokens", "stopSequences", "candidateCount",
        "seed", "presencePenalty", "frequencyPenalty", "thinkingConfig", "responseMimeType",
        "responseSchema", "responseJsonSchema", "responseFormat",
    }
)  # fmt: skip


def _tool_result(
    value: Any, where: str, pending: dict[str, list[str]], fallback_id: str
) -> ToolResultPart:
    fr = as_object(value, where)
    name = as_str(fr.get("name"), f"{where}.name")
    queue = pending.get(name, [])
    given = fr.get("id")
    if isinstance(given, str) and given:
        call_id = given
        if given in queue:
            queue.remove(given)
    else:
        call_id = queue.pop(0) if queue else fallback_id
    response = fr.get("response")
    response = {} if response is None else as_object(response, f"{where}.response")
    is_error = False
    if set(response) == {"output"} and isinstance(response["output"], str):
        text = response["output"]
    elif set(response) == {"error"}:
        is_error = True
        error = response["error"]
        text = error if isinstance(error, str) else jsonutil.dumps_str(error)
    else:
        text = jsonutil.dumps_str(response)
    content: list[TextPart | ImagePart | FilePart] = [TextPart(text)]
    for index, sub in enumerate(as_list(fr.get("parts") or [], f"{where}.parts")):
        sub_where = f"{where}.parts[{index}]"
        for item in part_to_core(as_object(sub, sub_where), sub_where, False, fallback_id):
            if isinstance(item, TextPart | ImagePart | FilePart):
                content.append(item)
    return ToolResultPart(call_id, tuple(content), is_error=is_error, name=name)


def _messages(contents: Any, where: str = "contents") -> tuple[Message, ...]:
    contents = as_list(contents, where)
    if not contents:
        raise invalid(f"{where} must not be empty", param=where)
    pending: dict[str, list[str]] = {}  # function name -> ids of calls not yet answered
    messages: list[Message] = []
    for ci, raw in enumerate(contents):
        content = as_object(raw, f"{where}[{ci}]")
        role = content.get("role") or "user"
        if role not in ("user", "model", "function"):
            raise invalid(
                f"{where}[{ci}].role must be 'user' or 'model'", param=f"{where}[{ci}].role"
            )
        parts = content.get("parts")
        if not isinstance(parts, list) or not parts:
            raise invalid(
                f"{where}[{ci}].parts must be a non-empty array", param=f"{where}[{ci}].parts"
            )
        out: list[Part] = []
        for pi, raw_part in enumerate(parts):
            part_where = f"{where}[{ci}].parts[{pi}]"
            part = as_object(raw_part, part_where)
            synthesised = synth_call_id("gemini-request", ci, pi)
            response = get_field(part, "functionResponse")
            if response is not None:
                out.append(
                    _tool_result(response, f"{part_where}.functionResponse", pending, synthesised)
                )
                continue
            for item in part_to_core(part, part_where, role == "model", synthesised):
                if isinstance(item, ToolCallPart):
                    pending.setdefault(item.name, []).append(item.id)
                out.append(item)
        if out:
            messages.append(Message("assistant" if role == "model" else "user", tuple(out)))
    return tuple(messages)


# ---------------------------------------------------------------- request level


def _system(value: Any) -> tuple[TextPart, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (TextPart(value),) if value else ()
    parts = as_list(
        as_object(value, "systemInstruction").get("parts") or [], "systemInstruction.parts"
    )
    out: list[TextPart] = []
    for index, raw in enumerate(parts):
        where = f"systemInstruction.parts[{index}]"
        text = as_object(raw, where).get("text")
        if text is None:
            raise invalid(f"{where}: systemInstruction supports text parts only", param=where)
        if as_str(text, f"{where}.text"):
            out.append(TextPart(text))
    return tuple(out)


def _tools(value: Any) -> tuple[list[ToolSpec], list[dict[str, Any]]]:
    specs: list[ToolSpec] = []
    others: list[dict[str, Any]] = []
    for ti, raw in enumerate(as_list(value, "tools")):
        entry = as_object(raw, f"tools[{ti}]")
        decls = get_field(entry, "functionDeclarations")
        other = {camel(k): v for k, v in entry.items() if camel(k) != "functionDeclarations"}
        if other:
            others.append(other)
        for di, raw_decl in enumerate(as_list(decls or [], f"tools[{ti}].functionDeclarations")):
            where = f"tools[{ti}].functionDeclarations[{di}]"
            decl = as_object(raw_decl, where)
            name = as_str(decl.get("name"), f"{where}.name")
            if not name:
                raise invalid(f"{where}.name must not be empty", param=f"{where}.name")
            description = decl.get("description")
            schema = get_field(decl, "parametersJsonSchema")
            if schema is None and get_field(decl, "parameters") is not None:
                schema = openapi_to_json_schema(
                    as_object(get_field(decl, "parameters"), f"{where}.parameters")
                )
            specs.append(
                ToolSpec(
                    name=name,
                    description=as_str(description, f"{where}.description")
                    if description
                    else None,
                    parameters=as_object(schema, f"{where}.parametersJsonSchema")
                    if schema is not None
                    else None,
                )
            )
    return specs, others


def _tool_choice(value: Any, specs: list[ToolSpec]) -> tuple[ToolChoice | None, list[ToolSpec]]:
    config = get_field(as_object(value, "toolConfig"), "functionCallingConfig")
    if config is None:
        return None, specs
    where = "toolConfig.functionCallingConfig"
    config = as_object(config, where)
    mode = str(config.get("mode") or "MODE_UNSPECIFIED").upper()
    names = [
        as_str(n, f"{where}.allowedFunctionNames")
        for n in as_list(
            get_field(config, "allowedFunctionNames") or [], f"{where}.allowedFunctionNames"
        )
    ]
    if mode == "ANY" and len(names) == 1:
        return ToolChoice("tool", names[0]), specs
    if len(names) > 1:  # allowed subset: filter the tool list (protocols §5.3)
        specs = [spec for spec in specs if spec.name in names]
    choices: dict[str, ToolChoice | None] = {
        "MODE_UNSPECIFIED": None,
        "AUTO": ToolChoice("auto"),
        "VALIDATED": ToolChoice("auto"),
        "ANY": ToolChoice("required"),
        "NONE": ToolChoice("none"),
    }
    if mode not in choices:
        raise invalid(f"{where}.mode must be AUTO, ANY, NONE or VALIDATED", param=f"{where}.mode")
    return choices[mode], specs


def _reasoning(value: Any) -> Reasoning | None:
    where = "generationConfig.thinkingConfig"
    config = as_object(value, where)
    enabled: bool | None = None
    budget_tokens: int | None = None
    effort: str | None = None
    budget = get_field(config, "thinkingBudget")
    if budget is not None:
        budget = as_int(budget, f"{where}.thinkingBudget", minimum=-1)
        enabled = budget != 0
        budget_tokens = budget if budget > 0 else None
    level = get_field(config, "thinkingLevel")
    if level is not None and as_str(level, f"{where}.thinkingLevel").upper() not in (
        "",
        "THINKING_LEVEL_UNSPECIFIED",
    ):
        effort = level.lower()
    include = get_field(config, "includeThoughts")
    include = as_bool(include, f"{where}.includeThoughts") if include is not None else None
    if enabled is None and effort is None and include is None:
        return None
    return Reasoning(
        enabled=enabled, effort=effort, budget_tokens=budget_tokens, include_thoughts=include
    )


def _new_style_format(value: Any) -> tuple[str, Any] | None:
    """[new] `responseFormat: [{"text": {"mimeType": "application/json", "schema"}}]`."""
    for entry in value if isinstance(value, list) else []:
        text = get_field(entry, "text") if isinstance(entry, dict) else None
        if isinstance(text, dict) and get_field(text, "mimeType") == "application/json":
            return "application/json", text.get("schema")
    return None


def _response_format(config: dict[str, Any], rest: dict[str, Any]) -> ResponseFormat | None:
    mime = config.get("responseMimeType")
    json_schema = config.get("responseJsonSchema")
    schema = config.get("responseSchema")
    if "responseFormat" in config:
        found = _new_style_format(config["responseFormat"])
        if found is None:
            rest["responseFormat"] = config["responseFormat"]
        else:
            mime, json_schema = found[0], found[1] if found[1] is not None else json_schema
    if mime != "application/json":  # text/plain is the default; others (text/x.enum) pass on
        if mime is not None and mime != "text/plain":
            rest["responseMimeType"] = mime
        for key, value in (("responseSchema", schema), ("responseJsonSchema", json_schema)):
            if value is not None:
                rest[key] = value
        return None
    where = "generationConfig"
    if json_schema is not None:
        return ResponseFormat(
            "json_schema", schema=as_object(json_schema, f"{where}.responseJsonSchema")
        )
    if schema is not None:
        schema = as_object(schema, f"{where}.responseSchema")
        return ResponseFormat("json_schema", schema=openapi_to_json_schema(schema))
    return ResponseFormat("json_object")


def _generation(
    value: Any,
) -> tuple[Sampling, ResponseFormat | None, Reasoning | None, dict[str, Any]]:
    where = "generationConfig"
    config = {camel(k): v for k, v in as_object(value, where).items() if v is not None}
    rest = {k: v for k, v in config.items() if k not in _GENERATION_KEYS}
    stop = config.get("stopSequences", [])
    stop = [stop] if isinstance(stop, str) else as_list(stop, f"{where}.stopSequences")

    def opt_int(key: str, minimum: int | None = None) -> int | None:
        return as_int(config[key], f"{where}.{key}", minimum) if key in config else None

    def opt_num(key: str, low: float | None = None, high: float | None = None) -> float | None:
        return as_number(config[key], f"{where}.{key}", low, high) if key in config else None

    sampling = Sampling(
        max_tokens=opt_int("maxOutputTokens", 1),
        temperature=opt_num("temperature", 0.0, 2.0),
        top_p=opt_num("topP", 0.0, 1.0),
        top_k=opt_int("topK", 1),
        stop=tuple(as_str(s, f"{where}.stopSequences[{i}]") for i, s in enumerate(stop)),
        seed=opt_int("seed"),
        presence_penalty=opt_num("presencePenalty"),
        frequency_penalty=opt_num("frequencyPenalty"),
        n=_candidates(opt_int("candidateCount", 1), where),
    )
    response_format = _response_format(config, rest)
    reasoning = _reasoning(config["thinkingConfig"]) if "thinkingConfig" in config else None
    return sampling, response_format, reasoning, rest


# Google's own limit; each candidate is a whole answer (and is held for).
MAX_CANDIDATES: Final = 8


def _candidates(count: int | None, where: str) -> int | None:
    if count is not None and count > MAX_CANDIDATES:
        raise invalid(
            f"{where}.candidateCount must be at most {MAX_CANDIDATES}",
            param=f"{where}.candidateCount",
        )
    return count


def gemini_to_core_request(body: Any, model: str, *, stream: bool = False) -> ChatRequest:
    """Validate and convert a generateContent body; `model` is the URL's model id."""
    body = as_object(body, "body")
    model = bare_model(model)
    specs, other_tools = _tools(get_field(body, "tools") or [])
    tool_choice: ToolChoice | None = None
    if get_field(body, "toolConfig") is not None:
        tool_choice, specs = _tool_choice(get_field(body, "toolConfig"), specs)
    generation = get_field(body, "generationConfig")
    sampling, response_format, reasoning, gen_rest = _generation(generation or {})
    extras: dict[str, Any] = {
        camel(k): v for k, v in body.items() if camel(k) not in _REQUEST_KEYS and v is not None
    }
    if other_tools:
        extras["tools"] = other_tools
    if gen_rest:
        extras["generationConfig"] = gen_rest
    return ChatRequest(
        model=model,
        messages=_messages(body.get("contents")),
        system=_system(get_field(body, "systemInstruction")),
        tools=tuple(specs),
        hosted_tools=tuple(h for tool in other_tools for h in gemini_hosted(tool)),
        tool_choice=tool_choice,
        sampling=sampling,
        response_format=response_format,
        reasoning=reasoning,
        stream=stream,
        extras={"gemini": extras} if extras else {},
    )


def gemini_count_tokens_request(body: Any, model: str) -> ChatRequest:
    """A countTokens body: `{"contents"}` or `{"generateContentRequest": {...}}` (§4.6).

    Only the second form carries a system instruction and tools.
    """
    body = as_object(body, "body")
    inner = get_field(body, "generateContentRequest")
    if inner is not None:
        return gemini_to_core_request(inner, model)
    return ChatRequest(model=bare_model(model), messages=_messages(body.get("contents")))
