"""Canonical ChatRequest -> Bedrock Converse request body (`POST /model/{id}/converse`
and `/converse-stream`; the model id rides the URL, never the body). Pure.

The same wire serves every model family on Bedrock (Anthropic, Llama, Mistral, Nova...):
- content blocks are keyed by kind (`{"text"}`, `{"image"}`, `{"document"}`, `{"toolUse"}`,
  `{"toolResult"}`, `{"reasoningContent"}`); binary data is base64 text in the JSON;
- roles alternate user/assistant, starting with user: same-role runs are merged, tool
  results go first in their user turn, a leading assistant turn gets a placeholder user
  turn, blank text is dropped (Bedrock refuses blank text blocks);
- Anthropic `cache_control` markers become `cachePoint` blocks after the marked block;
- thinking (Anthropic models only) goes in `additionalModelRequestFields.thinking`, with
  the same rules as on Anthropic's own API (forced tool choice or an unsigned tool loop
  turn it off; temperature and top_k are not sent with it);
- a conversation with tool calls needs `toolConfig`: tools named in the history but not
  offered get a permissive declaration so Bedrock accepts the history.
Dropped (no Converse field): seed, presence/frequency penalties, parallel_tool_calls,
user, `json_object` response format, hosted tools, audio input is refused (400).
"""

from typing import Any

from switchgate import jsonutil
from switchgate.core.content import (
    TextPart,
)
from switchgate.core.request import ChatRequest, Message, ToolChoice
from switchgate.errors import invalid
from switchgate.providers.anthropic_request import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_THINKING_BUDGET,
    EFFORT_BUDGETS,
    MIN_THINKING_BUDGET,
    PLACEHOLDER_TEXT,
)
from switchgate.providers.bedrock_content import (
    CACHE_POINT,
    Block,
    DocumentNames,
    content_blocks,
)
from switchgate.providers.system_messages import hoist_system

Turn = dict[str, Any]  # {"role": ..., "content": [Block, ...]}


def is_anthropic(model: str) -> bool:
    """Anthropic models on Bedrock: `anthropic.claude-...`, `us.anthropic.claude-...`,
    inference-profile ARNs naming one."""
    lowered = model.lower()
    return "anthropic." in lowered or "claude" in lowered


def converse_body(request: ChatRequest, model: str) -> dict[str, Any]:
    """The Converse body for `request`, addressed (by URL) to the upstream `model`."""
    if request.sampling.n is not None and request.sampling.n > 1:
        raise invalid("n > 1 is not supported by Bedrock models", param="n")
    system_parts, messages = hoist_system(request)
    turns = _turns(messages)
    body: dict[str, Any] = {"messages": turns}
    system = _system(system_parts)
    if system:
        body["system"] = system
    extra: dict[str, Any] = {}
    budget = _thinking_budget(request, turns) if is_anthropic(model) else None
    if budget is None:
        _strip_reasoning(turns)
    body["inferenceConfig"] = _inference(request, budget, extra, anthropic=is_anthropic(model))
    if not body["inferenceConfig"]:
        del body["inferenceConfig"]
    tool_config = _tool_config(request, turns)
    if tool_config is not None:
        body["toolConfig"] = tool_config
    output = _output_config(request)
    if output is not None:
        body["outputConfig"] = output
    if extra:
        body["additionalModelRequestFields"] = extra
    return body


# ---------------------------------------------------------------- settings


def _thinking_budget(request: ChatRequest, turns: list[Turn]) -> int | None:
    """The thinking budget for an Anthropic model, or None (thinking off)."""
    reasoning = request.reasoning
    if reasoning is None or reasoning.enabled is False or reasoning.effort == "none":
        return None
    if not (reasoning.enabled or reasoning.budget_tokens or reasoning.effort):
        return None
    if reasoning.budget_tokens == 0:
        return None
    choice = request.tool_choice
    if choice is not None and choice.mode in ("required", "tool"):
        return None  # Anthropic refuses thinking with a forced tool choice
    if not _signed_loop(turns):
        return None  # the tool loop's history has no Bedrock-signed thinking (§5.5)
    budget = reasoning.budget_tokens or EFFORT_BUDGETS.get(reasoning.effort or "", 0)
    budget = max(budget or DEFAULT_THINKING_BUDGET, MIN_THINKING_BUDGET)
    limit = request.sampling.max_tokens
    if limit is not None and limit <= budget:
        budget = limit - 1  # the client's limit covers reasoning too
        if budget < MIN_THINKING_BUDGET:
            return None
    return budget


def _inference(
    request: ChatRequest, budget: int | None, extra: dict[str, Any], *, anthropic: bool
) -> dict[str, Any]:
    sampling = request.sampling
    config: dict[str, Any] = {}
    if budget is not None:
        config["maxTokens"] = sampling.max_tokens or budget + DEFAULT_MAX_TOKENS
        extra["thinking"] = {"type": "enabled", "budget_tokens": budget}
        # With thinking on, Anthropic refuses temperature/top_k and a top_p below 0.95.
        if sampling.top_p is not None and sampling.top_p >= 0.95:
            config["topP"] = sampling.top_p
    else:
        if sampling.max_tokens is not None:
            config["maxTokens"] = sampling.max_tokens
        if sampling.temperature is not None:
            upper = 1.0 if anthropic else 2.0
            config["temperature"] = min(max(sampling.temperature, 0.0), upper)
        if sampling.top_p is not None:
            config["topP"] = sampling.top_p
        if sampling.top_k is not None and anthropic:
            extra["top_k"] = sampling.top_k
    if sampling.stop:
        config["stopSequences"] = list(sampling.stop)
    return config


def _output_config(request: ChatRequest) -> dict[str, Any] | None:
    fmt = request.response_format
    if fmt is None or fmt.type != "json_schema" or fmt.schema is None:
        return None
    schema: dict[str, Any] = {"schema": jsonutil.dumps_str(fmt.schema)}
    if fmt.name:
        schema["name"] = fmt.name
    return {"textFormat": {"type": "json_schema", "structure": {"jsonSchema": schema}}}


def _tool_choice(choice: ToolChoice | None) -> Block | None:
    if choice is None or choice.mode in ("auto", "none"):
        return None
    if choice.mode == "tool" and choice.name:
        return {"tool": {"name": choice.name}}
    return {"any": {}}


def _history_tools(turns: list[Turn]) -> list[str]:
    names: list[str] = []
    for turn in turns:
        for block in turn["content"]:
            name = block.get("toolUse", {}).get("name")
            if isinstance(name, str) and name not in names:
                names.append(name)
    return names


def _has_tool_blocks(turns: list[Turn]) -> bool:
    return any("toolUse" in b or "toolResult" in b for t in turns for b in t["content"])


def _tool_config(request: ChatRequest, turns: list[Turn]) -> Block | None:
    choice = request.tool_choice
    offered = [] if choice is not None and choice.mode == "none" else list(request.tools)
    if not offered and not _has_tool_blocks(turns):
        return None
    tools: list[Block] = []
    for spec in offered:
        schema = dict(spec.parameters) if spec.parameters else {"properties": {}}
        schema.setdefault("type", "object")
        tool: Block = {"name": spec.name, "inputSchema": {"json": schema}}
        if spec.description:
            tool["description"] = spec.description
        if spec.strict is not None:
            tool["strict"] = spec.strict
        tools.append({"toolSpec": tool})
        if spec.cache_control:
            tools.append(dict(CACHE_POINT))
    # Bedrock refuses toolUse/toolResult blocks without a toolConfig that declares them.
    declared = {spec.name for spec in offered}
    for name in _history_tools(turns):
        if name not in declared:
            schema = {"type": "object", "properties": {}}
            tools.append({"toolSpec": {"name": name, "inputSchema": {"json": schema}}})
    if not tools:  # only toolResult blocks (their calls were cut off): declare nothing
        raise invalid("tool results need the tools they answer", param="tools")
    config: Block = {"tools": tools}
    wanted = _tool_choice(choice) if offered else None
    if wanted is not None:
        config["toolChoice"] = wanted
    return config


def _system(parts: tuple[TextPart, ...]) -> list[Block]:
    blocks: list[Block] = []
    for part in parts:
        if part.text.strip():
            blocks.append({"text": part.text})
            if part.cache_control:
                blocks.append(dict(CACHE_POINT))
    return blocks


# ---------------------------------------------------------------- messages


def _turns(messages: tuple[Message, ...]) -> list[Turn]:
    turns: list[Turn] = []
    names = DocumentNames()
    for message in messages:
        blocks = [b for p in message.parts for b in content_blocks(p, names)]
        if not blocks:
            continue
        if turns and turns[-1]["role"] == message.role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": message.role, "content": blocks})
    for turn in turns:
        if turn["role"] == "user":
            turn["content"].sort(key=lambda b: "toolResult" not in b)
    if not turns or turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [{"text": PLACEHOLDER_TEXT}]})
    last = turns[-1]
    if last["role"] == "assistant" and "text" in last["content"][-1]:
        text = last["content"][-1]["text"].rstrip()  # a prefill may not end with whitespace
        if text:
            last["content"][-1] = {"text": text}
        else:
            last["content"].pop()
            if not last["content"]:
                turns.pop()
    return turns


def _signed_loop(turns: list[Turn]) -> bool:
    """Whether the current tool loop (and a final prefill) starts with Bedrock-signed
    reasoning in each assistant turn that needs it (§5.5)."""
    start = 0
    for i in range(len(turns) - 1, -1, -1):
        blocks = turns[i]["content"]
        if turns[i]["role"] == "user" and not any("toolResult" in b for b in blocks):
            start = i + 1
            break
    for i, turn in enumerate(turns[start:], start):
        if turn["role"] != "assistant":
            continue
        blocks = turn["content"]
        needs = i == len(turns) - 1 or any("toolUse" in b for b in blocks)
        if needs and "reasoningContent" not in blocks[0]:
            return False
    return True


def _strip_reasoning(turns: list[Turn]) -> None:
    """With thinking off, reasoning blocks are left out of the history."""
    for turn in turns:
        turn["content"] = [b for b in turn["content"] if "reasoningContent" not in b]
    while turns and not turns[-1]["content"]:
        turns.pop()
    for turn in turns:
        if not turn["content"]:
            turn["content"] = [{"text": PLACEHOLDER_TEXT}]
