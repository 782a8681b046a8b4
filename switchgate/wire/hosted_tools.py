"""Hosted (server-side) tools as each client dialect writes them, read into the IR's
HostedTool (kind "web_search" for every vendor's web search, else the vendor's own
type). The dialects' decoders use these; what each upstream gets is
providers/hosted_tools.py."""

from typing import Any

from switchgate.core.request import HostedTool


def anthropic_hosted(tool: dict[str, Any]) -> HostedTool:
    kind = str(tool.get("type", ""))
    return HostedTool("web_search" if kind.startswith("web_search") else kind, "anthropic", tool)


def gemini_hosted(tool: dict[str, Any]) -> list[HostedTool]:
    """One per key of a non-function Gemini tool entry (`googleSearch`, `codeExecution`...)."""
    out: list[HostedTool] = []
    for key in tool:
        web = key in ("googleSearch", "googleSearchRetrieval")
        out.append(HostedTool("web_search" if web else key, "gemini", {key: tool[key]}))
    return out


def responses_hosted(tool: dict[str, Any]) -> HostedTool:
    kind = str(tool.get("type", ""))
    web = kind in ("web_search", "web_search_preview") or kind.startswith("web_search_preview_")
    return HostedTool("web_search" if web else kind, "responses", tool)
