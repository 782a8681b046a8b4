"""Hosted (server-side) tools across vendors: what each upstream gets, and what is dropped.

Coding agents ask for tools the provider runs itself: Codex sends Responses
`{"type": "web_search"}`, Claude Code may send Anthropic server tools
(`web_search_20250305`, `web_fetch_...`, `code_execution_...`), Gemini CLI sends
`{"googleSearch": {}}`. Passed through to the vendor that defined them they are untouched
(the dialect keeps them raw). Translated to another vendor:
- web search becomes that vendor's own search tool, on channels whose `paid_options`
  allow `hosted_tools` (the vendor bills each search; relay/paid_options.py): Anthropic's
  server web search tool, Gemini's Google Search grounding (only when the request has no
  function declarations: Gemini refuses grounding combined with function calling);
- everything else (and web search on OpenAI Chat upstreams, which have no search tool
  for ordinary models) is dropped on purpose, never refused: the relay names what was
  dropped in the `x-switchgate-dropped-tools` response header (docs/agents.md).
A Responses request passed through to a native upstream keeps its hosted tools only when
the channel allows paid hosted tools (`without_hosted_tools` otherwise).
Pure functions; nothing here runs unless a request carries hosted tools.
"""

from typing import Any, Final

from switchgate.core.request import ChatRequest, HostedTool

DROPPED_HEADER: Final = b"x-switchgate-dropped-tools"
ANTHROPIC_WEB_SEARCH: Final = {"type": "web_search_20250305", "name": "web_search"}
GEMINI_WEB_SEARCH: Final[dict[str, Any]] = {"googleSearch": {}}
# The provider kind whose native dialect each source dialect is (kept raw there).
_NATIVE: Final = {"anthropic": "anthropic", "gemini": "gemini", "responses": "openai-responses"}


def _foreign(request: ChatRequest, kind: str) -> list[HostedTool]:
    """The hosted tools that must be translated for a provider of this channel kind."""
    return [t for t in request.hosted_tools if _NATIVE.get(t.dialect) != kind]


def upstream_tools(request: ChatRequest, kind: str) -> list[dict[str, Any]]:
    """Tool entries a translated request to an upstream of `kind` carries for the
    client's hosted tools (see the module docstring)."""
    if not request.hosted_tools:
        return []
    wanted = any(t.kind == "web_search" for t in _foreign(request, kind))
    if wanted and kind == "anthropic":
        return [dict(ANTHROPIC_WEB_SEARCH)]
    if wanted and kind == "gemini" and not request.tools:
        return [dict(GEMINI_WEB_SEARCH)]
    return []


def dropped(request: ChatRequest, kind: str, mapped: bool = True) -> list[str]:
    """Names of the client's hosted tools that a translated request to `kind` leaves out
    (`mapped=False`: the channel may not run paid hosted tools, so all of them)."""
    if not request.hosted_tools:
        return []
    kept = mapped and bool(upstream_tools(request, kind))
    names: list[str] = []
    for tool in _foreign(request, kind):
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
    request: ChatRequest, kind: str, mapped: bool = True
) -> list[tuple[bytes, bytes]]:
    names = dropped(request, kind, mapped)
    return [(DROPPED_HEADER, ", ".join(names).encode())] if names else []


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
