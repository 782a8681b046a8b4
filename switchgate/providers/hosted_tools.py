"""Hosted (server-side) tools across vendors: what each upstream gets, and what is dropped.

Coding agents ask for tools the provider runs itself: Codex sends Responses
`{"type": "web_search"}`, Claude Code may send Anthropic server tools
(`web_search_20250305`, `web_fetch_...`, `code_execution_...`), Gemini CLI sends
`{"googleSearch": {}}`. Passed through to the vendor that defined them they are untouched
(the dialect keeps them raw). Translated to another vendor:
- web search becomes that vendor's own search tool, on channels whose `paid_options`
  allow `hosted_tools` (the vendor bills each search; relay/paid_options.py): Anthropic's
  server web search tool, Gemini's Google Search grounding (only when the request has no
  function declarations: Gemini refuses grounding combined with function calling). Which
  one is the adapter's call for the upstream model (capabilities.HostedToolMapper): Claude
  on `anthropic` or `vertex` channels gets Anthropic's, Gemini on `gemini` or `vertex`
  Google's; Bedrock's Converse wire has no hosted search tool;
- everything else (and web search on OpenAI Chat upstreams, which have no search tool
  for ordinary models) is dropped on purpose, never refused: the relay names what was
  dropped in the `x-switchgate-dropped-tools` response header (docs/agents.md).
A Responses request passed through to a native upstream keeps its hosted tools only when
the channel allows paid hosted tools (`without_hosted_tools` otherwise).
Pure functions; nothing here runs unless a request carries hosted tools.
"""

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from switchgate.core.request import ChatRequest, HostedTool

DROPPED_HEADER: Final = b"x-switchgate-dropped-tools"


@dataclass(frozen=True, slots=True)
class HostedToolMap:
    """What one upstream wire does with a client's hosted tools. `dialect`: the client
    dialect whose hosted tools the wire keeps as written (they are its own); `web_search`:
    the wire's own search tool that other dialects' web search becomes;
    `search_with_functions`: False where the upstream refuses search combined with function
    tools (Gemini's Google Search grounding). An adapter says which map a call gets
    (capabilities.HostedToolMapper); an adapter without one maps nothing."""

    dialect: str
    web_search: Mapping[str, Any]
    search_with_functions: bool = True


ANTHROPIC_TOOLS: Final = HostedToolMap(
    "anthropic", {"type": "web_search_20250305", "name": "web_search"}
)
GEMINI_TOOLS: Final = HostedToolMap("gemini", {"googleSearch": {}}, search_with_functions=False)


def _foreign(request: ChatRequest, tools: HostedToolMap | None) -> list[HostedTool]:
    """The hosted tools that must be translated for an upstream of this map."""
    return [t for t in request.hosted_tools if tools is None or t.dialect != tools.dialect]


def upstream_tools(request: ChatRequest, tools: HostedToolMap | None) -> list[dict[str, Any]]:
    """Tool entries a translated request to an upstream of `tools` carries for the
    client's hosted tools (see the module docstring)."""
    if not request.hosted_tools or tools is None:
        return []
    wanted = any(t.kind == "web_search" for t in _foreign(request, tools))
    if wanted and (tools.search_with_functions or not request.tools):
        return [dict(tools.web_search)]
    return []


def dropped(request: ChatRequest, tools: HostedToolMap | None, mapped: bool = True) -> list[str]:
    """Names of the client's hosted tools that a translated request to an upstream of
    `tools` leaves out (`mapped=False`: the channel may not run paid hosted tools, so all
    of them, its own dialect's too: `without_hosted` takes them out)."""
    if not request.hosted_tools:
        return []
    kept = mapped and bool(upstream_tools(request, tools))
    names: list[str] = []
    for tool in _foreign(request, tools) if mapped else request.hosted_tools:
        if tool.kind == "web_search" and kept:
            continue
        if tool.dialect == "gemini":
            name = next(iter(tool.raw), tool.kind)
        else:
            name = str(tool.raw.get("name") or tool.raw.get("type") or tool.kind)
        if name not in names:
            names.append(name)
    return names


def dropped_header(
    request: ChatRequest, tools: HostedToolMap | None, mapped: bool = True
) -> list[tuple[bytes, bytes]]:
    names = dropped(request, tools, mapped)
    return [(DROPPED_HEADER, ", ".join(names).encode())] if names else []


def without_hosted(request: ChatRequest) -> ChatRequest:
    """The request with none of the client's hosted tools: neither mapped nor kept as
    written (a dialect leaves its own raw in `extras[dialect]["tools"]` for an upstream
    of the same wire, e.g. Claude Code's server tools for Claude on Vertex)."""
    extras = dict(request.extras)
    for dialect in {t.dialect for t in request.hosted_tools}:
        own = extras.get(dialect)
        if own is not None and "tools" in own:
            extras[dialect] = {k: v for k, v in own.items() if k != "tools"}
    return replace(request, hosted_tools=(), extras=extras)


def without_hosted_tools(body: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[bytes, bytes]]]:
    """A Responses body for a native upstream with the hosted tools left out (the channel
    may not run paid hosted tools), and the header naming them."""
    tools = body.get("tools")
    if not isinstance(tools, list):
        return body, []
    names = [str(t.get("type")) for t in tools if _is_hosted(t)]
    if not names:
        return body, []
    kept = [t for t in tools if not _is_hosted(t)]
    return {**body, "tools": kept}, [(DROPPED_HEADER, ", ".join(dict.fromkeys(names)).encode())]


def _is_hosted(tool: Any) -> bool:
    return isinstance(tool, dict) and tool.get("type") not in ("function", "namespace", "custom")
