"""System messages inside the conversation, carried to each upstream the way it takes them.

Claude Code (with a model name it doesn't know as Claude) puts `{"role": "system"}`
messages inside Anthropic `messages`; the IR keeps them in place as `Message("system")`.
- OpenAI Chat upstreams take them in place (`providers/openai_request.py`).
- Anthropic and Gemini upstreams have one system prompt only (and the real Anthropic API
  answers 400 to a system role inside `messages`): the texts are folded into it, after
  the request's own system prompt, in conversation order. Their position is lost, but the
  system prompt stays stable from turn to turn (prompt caching keeps working), which an
  in-place user turn would not.
`fold_anthropic_body` does the same to a passed-through Anthropic body (pure functions).
"""

from typing import Any

from switchgate.core.content import TextPart
from switchgate.core.request import ChatRequest, Message


def has_system_messages(messages: tuple[Message, ...]) -> bool:
    return any(message.role == "system" for message in messages)


def hoist_system(request: ChatRequest) -> tuple[tuple[TextPart, ...], tuple[Message, ...]]:
    """(the system prompt with every system message's text appended, the other messages)."""
    if not has_system_messages(request.messages):
        return request.system, request.messages
    system = list(request.system)
    rest: list[Message] = []
    for message in request.messages:
        if message.role == "system":
            system.extend(p for p in message.parts if isinstance(p, TextPart))
        else:
            rest.append(message)
    return tuple(system), tuple(rest)


def _texts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return []


def fold_anthropic_body(body: dict[str, Any]) -> dict[str, Any] | None:
    """A copy of an Anthropic Messages body with its `role: system` messages folded into
    `system`; None when it has none (the body goes upstream unchanged)."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not any(
        isinstance(m, dict) and m.get("role") == "system" for m in messages
    ):
        return None
    blocks = _texts(body.get("system"))
    kept: list[Any] = []
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "system":
            blocks.extend(_texts(message.get("content")))
        else:
            kept.append(message)
    folded = {**body, "messages": kept}
    blocks = [b for b in blocks if isinstance(b.get("text"), str) and b["text"].strip()]
    if any("cache_control" in b for b in blocks):
        folded["system"] = blocks
    elif blocks:
        folded["system"] = "\n\n".join(b["text"] for b in blocks)
    else:
        folded.pop("system", None)
    return folded
