"""What Bedrock's Converse refuses before any model runs (roles that do not alternate,
blank text, tool blocks without a toolConfig, thinking rules), for the fake Bedrock
(bedrock.py). Each check answers the service's ValidationException message, or None."""

from typing import Any, Final

from .bedrock_wire import shape_problem


def _tool_problem(body: dict[str, Any]) -> str | None:
    config = body.get("toolConfig")
    declared = {t["toolSpec"]["name"] for t in (config or {}).get("tools", []) if "toolSpec" in t}
    pending: set[str] = set()
    for message in body["messages"]:
        for block in message["content"]:
            if ("toolUse" in block or "toolResult" in block) and config is None:
                return (
                    "The toolConfig field must be defined when using toolUse and toolResult "
                    "content blocks."
                )
            if "toolUse" in block:
                if block["toolUse"]["name"] not in declared:
                    return f"The tool {block['toolUse']['name']} is not in toolConfig."
                pending.add(block["toolUse"]["toolUseId"])
            if "toolResult" in block and block["toolResult"]["toolUseId"] not in pending:
                return (
                    "The number of toolResult blocks exceeds the number of toolUse blocks "
                    "of the previous turn."
                )
    choice = (config or {}).get("toolChoice") or {}
    if "tool" in choice and choice["tool"]["name"] not in declared:
        return f"The tool {choice['tool']['name']} in toolChoice is not in toolConfig.tools."
    return None


def _thinking_problem(body: dict[str, Any], model: str) -> str | None:
    extra = body.get("additionalModelRequestFields") or {}
    thinking = extra.get("thinking") if isinstance(extra, dict) else None
    if thinking is None:
        return None
    if "anthropic." not in model:
        return "Malformed input request: extraneous key [thinking] is not permitted."
    budget = thinking.get("budget_tokens") if isinstance(thinking, dict) else None
    if not isinstance(budget, int) or budget < 1024:
        return "thinking.budget_tokens: Input should be greater than or equal to 1024"
    config = body.get("inferenceConfig") or {}
    if not isinstance(config.get("maxTokens"), int) or config["maxTokens"] <= budget:
        return "`max_tokens` must be greater than `thinking.budget_tokens`."
    if "temperature" in config or "top_k" in extra:
        return "temperature and top_k may not be set while thinking is enabled."
    return None


_NO_USER_FIRST: Final = (
    "A conversation must start with a user message. Try again with a conversation that "
    "starts with a user message."
)
_NOT_ALTERNATING: Final = (
    "A conversation must alternate between user and assistant roles. Make sure the "
    "conversation alternates between user and assistant roles and try again."
)


def converse_problem(body: Any, model: str) -> str | None:
    """What the real service would answer 400 ValidationException to, or None."""
    if not isinstance(body, dict):
        return "Malformed input request, please reformat your input and try again."
    problem = shape_problem("Converse", body, model)
    if problem is not None:
        return problem
    messages = body.get("messages") or []
    if not messages:
        return _NO_USER_FIRST
    for i, message in enumerate(messages):
        if message["role"] != ("user" if i % 2 == 0 else "assistant"):
            return _NOT_ALTERNATING if i else _NO_USER_FIRST
        for block in message["content"]:
            if "text" in block and not block["text"].strip():
                return (
                    f"The text field in the ContentBlock object at messages.{i}.content is "
                    "blank. Add text to the text field, and try again."
                )
    return _tool_problem(body) or _thinking_problem(body, model)
