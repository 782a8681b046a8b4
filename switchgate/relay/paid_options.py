"""Upstream options that cost money the gateway's prices do not cover (issue 20 #10).

Some request fields make the upstream charge more than the token prices say: a faster
service tier, Anthropic's 1M-token context beta, hosted tools the vendor runs and bills
per call (web search, code execution, file search ...), and references to content the
vendor stores and bills (`cachedContent`, Responses `conversation` / `prompt`). They are
refused with a clear 400 unless the model's channel allows them by name: the channel's
`paid_options` (TOML `paid_options = ["hosted_tools"]`, or `["*"]`; console: the channel's
"paid options"), so the operator decides, knowing the vendor bills them on top.

Hosted tools are not refused where the request is translated (a plain OpenAI Chat channel,
or a channel of another vendor than the client's dialect): there the gateway drops them,
or maps them to the vendor's own paid tool only on channels that allow `hosted_tools`
(providers/hosted_tools.py), so nothing is billed that the operator didn't allow.
References to uploaded files inside messages are not looked for (that would mean walking
every message).
The check reads a few top-level keys and one header: nothing when none is present."""

from collections.abc import Mapping, Sequence
from typing import Any, Final

from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.registry import ProviderKind, provider_kinds
from switchgate.relay.responses_passthrough import serves_responses
from switchgate.routing.channels import Channel

SERVICE_TIER: Final = "service_tier"
LONG_CONTEXT: Final = "long_context"
HOSTED_TOOLS: Final = "hosted_tools"
STORED_CONTENT: Final = "stored_content"
KNOWN: Final = (SERVICE_TIER, LONG_CONTEXT, HOSTED_TOOLS, STORED_CONTENT)

_PAID_TIERS: Final = frozenset({"priority", "scale"})
_PLAIN_TOOL_TYPES: Final = frozenset({"function", "custom"})
_GEMINI_PLAIN_TOOL_KEYS: Final = frozenset({"functionDeclarations", "function_declarations"})


def _hosted(tools: Any, dialect: str) -> bool:
    if not isinstance(tools, list):
        return False
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        if dialect == "gemini":
            if any(key not in _GEMINI_PLAIN_TOOL_KEYS for key in tool):
                return True
        elif dialect == "anthropic":
            if tool.get("type") not in (None, "custom"):
                return True
        elif tool.get("type") not in _PLAIN_TOOL_TYPES:
            return True
    return False


def paid_options(dialect: str, body: Mapping[str, Any], headers: Mapping[str, str]) -> list[str]:
    """The paid options this request asks for (`dialect`: openai, responses, anthropic,
    gemini)."""
    found: list[str] = []
    if body.get("service_tier") in _PAID_TIERS:
        found.append(SERVICE_TIER)
    if "context-1m" in headers.get("anthropic-beta", ""):
        found.append(LONG_CONTEXT)
    if ("tools" in body and _hosted(body["tools"], dialect)) or "web_search_options" in body:
        found.append(HOSTED_TOOLS)
    # Chat has no such field (a `prompt` there is something else).
    stored = ("cachedContent", "cached_content", "conversation", "prompt")
    if dialect != "openai" and any(body.get(key) for key in stored):
        found.append(STORED_CONTENT)
    return found


def check_paid_options(value: Any) -> list[str]:
    """A channel's `paid_options` setting: names from KNOWN, or "*" (ValueError else)."""
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError("paid_options must be a list of names")
    unknown = [v for v in value if v not in (*KNOWN, "*")]
    if unknown:
        raise ValueError(
            f"unknown paid option(s) {', '.join(unknown)}; known: {', '.join(KNOWN)} or *"
        )
    return list(value)


# Client dialects whose hosted tools pass through to a channel of the same native dialect.
_KEPT_NATIVE: Final = frozenset({"anthropic", "gemini"})


def _forwards_hosted(
    channel: Channel, dialect: str | None, kinds: Mapping[str, ProviderKind]
) -> bool:
    """Whether the client's hosted tools reach this channel's vendor as written. Translated
    requests don't: there the gateway maps them to the vendor's paid tool only when the
    channel allows hosted tools, and otherwise drops them (providers/hosted_tools.py,
    relay/chat.py), so they never make a channel unusable."""
    kind = kinds.get(channel.kind)
    if dialect in _KEPT_NATIVE:
        native = kind.native() if kind is not None else None
        return native is not None and native.dialect == dialect
    if dialect == "responses":
        return False  # passed through without them unless allowed (relay/chat.py)
    # OpenAI Chat (and callers that don't say): dropped on the plain Chat channels of a
    # kind that could serve Responses natively (OpenAI's own: no search tool in Chat).
    plain_chat = kind is not None and kind.responses() is not None
    return not (plain_chat and not serves_responses(channel, kinds))


def _needed(
    channel: Channel, wanted: Sequence[str], dialect: str | None, kinds: Mapping[str, ProviderKind]
) -> list[str]:
    """What of `wanted` this channel would really forward."""
    forwards = HOSTED_TOOLS not in wanted or _forwards_hosted(channel, dialect, kinds)
    return [w for w in wanted if w != HOSTED_TOOLS or forwards]


def allows(
    channel: Channel,
    wanted: Sequence[str],
    dialect: str | None = None,
    kinds: Mapping[str, ProviderKind] | None = None,
) -> bool:
    allowed = channel.extra.get("paid_options") or ()
    if "*" in allowed:
        return True
    kinds = provider_kinds() if kinds is None else kinds
    return all(w in allowed for w in _needed(channel, wanted, dialect, kinds))


def allows_hosted_tools(channel: Channel) -> bool:
    """Whether the operator lets this channel's vendor run (and bill) hosted tools."""
    allowed = channel.extra.get("paid_options") or ()
    return "*" in allowed or HOSTED_TOOLS in allowed


def usable(
    channels: Sequence[Channel],
    wanted: Sequence[str],
    model: str,
    dialect: str | None = None,
    kinds: Mapping[str, ProviderKind] | None = None,
) -> Sequence[Channel]:
    """The channels that may carry a request with these paid options; GatewayError (400)
    when none may. `kinds`: the provider registry (AppState.kinds)."""
    if not wanted or not channels:
        return channels
    kinds = provider_kinds() if kinds is None else kinds
    kept = [c for c in channels if allows(c, wanted, dialect, kinds)]
    if kept:
        return kept
    names = ", ".join(wanted)
    raise GatewayError(
        ErrorKind.INVALID_REQUEST,
        f"This request uses upstream options that are billed on top of the token price "
        f"({names}); this gateway does not price them and no channel of '{model}' allows "
        "them. Leave them out, or ask an admin to allow them on the channel (paid_options).",
        code="paid_option_not_allowed",
    )
