"""A chat request in canonical form."""

from dataclasses import dataclass, field
from typing import Any, Literal

from switchgate.core.content import Part, TextPart

# "system": a system message inside the conversation (text parts only), kept in place;
# providers/system_messages.py carries it to upstreams that have one system prompt only.
Role = Literal["user", "assistant", "system"]


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    parts: tuple[Part, ...]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None  # JSON Schema; None = no arguments
    strict: bool | None = None
    cache_control: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class HostedTool:
    """A tool the provider runs itself (web search, code execution...), as the client's
    dialect wrote it. `kind` is "web_search" for every dialect's web search, else the
    dialect's own type name. See providers/hosted_tools.py for what each upstream gets."""

    kind: str
    dialect: str  # where it came from: "anthropic" | "gemini" | "responses"
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ToolChoice:
    """auto / none / required (any tool) / tool (the one called `name`)."""

    mode: Literal["auto", "none", "required", "tool"]
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Sampling:
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    n: int | None = None


@dataclass(frozen=True, slots=True)
class ResponseFormat:
    type: Literal["text", "json_object", "json_schema"]
    schema: dict[str, Any] | None = None
    name: str | None = None
    strict: bool | None = None


@dataclass(frozen=True, slots=True)
class Reasoning:
    """Reasoning settings: an effort level and/or an explicit budget; enabled=False turns it off."""

    enabled: bool | None = None
    effort: str | None = None  # none|minimal|low|medium|high|xhigh|max
    budget_tokens: int | None = None
    include_thoughts: bool | None = None


@dataclass(frozen=True, slots=True)
class ChatRequest:
    model: str
    messages: tuple[Message, ...]
    system: tuple[TextPart, ...] = ()
    tools: tuple[ToolSpec, ...] = ()
    hosted_tools: tuple[HostedTool, ...] = ()
    tool_choice: ToolChoice | None = None
    parallel_tool_calls: bool | None = None
    sampling: Sampling = field(default_factory=Sampling)
    response_format: ResponseFormat | None = None
    reasoning: Reasoning | None = None
    user: str | None = None
    stream: bool = False
    # What one dialect has and others don't, keyed by dialect name
    # ("openai", "anthropic", "gemini"); kept for passthrough, dropped on translation.
    extras: dict[str, dict[str, Any]] = field(default_factory=dict)
