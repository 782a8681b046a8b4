"""A real, tiny call through one channel: `switchgate channels test`, the console's Test
button and `switchgate doctor` all use this. Not billed, not logged.

What is called depends on what the channel serves (by the model's price kind): a chat
completion of at most 16 tokens, else an embedding of one word, else a rerank of two
documents. Image, speech and transcription models are not called (the upstream would
bill a real generation). The answer carries the upstream's own model name, the latency
and, when it failed, a diagnosis an operator can act on (see `diagnose`).
"""

import asyncio
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Final

from switchgate import jsonutil
from switchgate.billing.pricing import Price
from switchgate.core.content import TextPart
from switchgate.core.request import ChatRequest, Message, Sampling
from switchgate.core.rerank import RerankRequest
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.openai_media import passthrough_json
from switchgate.providers.registry import CHAT, EMBEDDINGS, RERANK, ProviderKind
from switchgate.relay.attempt import target_for
from switchgate.relay.authorize import authorized
from switchgate.relay.upstream import UpstreamClient, read_all
from switchgate.routing.channels import Channel

DEFAULT_TIMEOUT: Final = 30.0
_CALLS: Final = {"chat": CHAT, "embedding": EMBEDDINGS, "rerank": RERANK}


@dataclass(frozen=True)
class ProbeResult:
    channel: str
    ok: bool
    outcome: str  # "ok" | "failed" | "skipped"
    model: str  # the gateway's model name that was tried
    call: str  # "chat" | "embedding" | "rerank" | "none"
    latency_ms: int
    status: int | None = None  # the upstream's HTTP status, when it answered
    upstream_model: str | None = None  # the model name in the upstream's answer
    message: str = ""  # the reply's first words, or the upstream's own error message
    diagnosis: str = ""  # what it means and what to do (failures only)
    disable_suggested: bool = False  # 401/403: the key itself is bad

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def diagnose(status: int | None, error: GatewayError | None, timeout: float, model: str) -> str:
    """One sentence: what a failed test means and how to fix it."""
    if status == 401:
        return (
            "401: the upstream rejected the API key (wrong, revoked, or for another "
            "provider/account). Put the right key on the channel or disable it."
        )
    if status == 403:
        return (
            f"403: the key is valid but may not use '{model}' (organisation/project "
            "permissions, region, or model access). Grant access or disable the key."
        )
    if status == 404:
        return (
            f"404: the upstream does not know model '{model}' or the address is wrong. "
            "Check the channel's base URL (OpenAI-compatible ones end in /v1) and its "
            "model map."
        )
    if status == 429:
        return (
            "429: the upstream is rate-limiting this key or its quota/credit is used up. "
            "Retry later; if it persists, check the account's limits and billing."
        )
    if error is not None and error.kind is ErrorKind.UPSTREAM_TIMEOUT:
        return (
            f"timeout: no answer within {timeout:g} s. The upstream is overloaded or "
            "unreachable from here (firewall, proxy, wrong host/port)."
        )
    if status is not None and status >= 500:
        return f"{status}: the upstream failed on its side. Retry later or check its status page."
    if status is not None:
        return f"{status}: the upstream refused the test request."
    if error is not None:
        return "unreachable: " + error.message + " Check the channel's base URL and the network."
    return ""


def choose_call(
    channel: Channel,
    prices: Mapping[str, Price],
    model: str | None = None,
    kind: ProviderKind | None = None,
) -> tuple[str, str]:
    """(model, call): the cheapest real call this channel serves. A kind that serves
    rerank only is tested with a rerank, whatever its models' prices say."""

    def call_of(m: str) -> str:
        if kind is not None and kind.endpoints == frozenset({RERANK}):
            return "rerank"
        price_kind = prices[m].kind if m in prices else "chat"
        return price_kind if price_kind in _CALLS else "none"

    if model:
        return model, call_of(model)
    calls = [(m, call_of(m)) for m in channel.models]
    for wanted in ("chat", "embedding", "rerank"):
        for m, call in calls:
            if call == wanted:
                return m, call
    return channel.models[0], "none"


def build_request(kind: ProviderKind, call: str, target: Target) -> UpstreamRequest | None:
    """The test request, or None when the kind does not serve `call`."""
    if call == "embedding":
        embeddings = kind.embeddings()
        if embeddings is not None:
            return embeddings.build_embeddings_request(["hello"], None, target)
        shaped = kind.openai_shaped(EMBEDDINGS)
        if shaped is None:
            return None
        return passthrough_json(shaped, target, "embeddings", {"input": ["hello"]})
    if call == "rerank":
        rerank = kind.rerank()
        if rerank is None:
            return None
        request = RerankRequest(target.upstream_model, "hello", ["hello", "bye"], 1, False, None)
        return rerank.build_rerank_request(request, target)
    provider = kind.chat()
    if provider is None:
        return None
    chat = ChatRequest(
        model=target.upstream_model,
        messages=(Message("user", (TextPart("Say hello in three words."),)),),
        sampling=Sampling(max_tokens=16),
    )
    return provider.build_chat_request(chat, target)


def _upstream_error(kind: str, status: int, body: bytes) -> str:
    try:
        data = jsonutil.loads(body)
    except (jsonutil.JSONDecodeError, ValueError):
        return body[:200].decode("utf-8", "replace").strip()
    error = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(error, dict):
        message = error.get("message") or error.get("detail") or ""
        return str(message)[:300]
    return str(error)[:300]


def _summary(call: str, data: Any) -> tuple[str | None, str]:
    """(upstream model name, a short human summary) of a successful answer."""
    if not isinstance(data, dict):
        return None, "(unexpected answer)"
    model = data.get("model") or data.get("modelVersion")
    if call == "embedding":
        items = data.get("data") or data.get("embeddings") or []
        if isinstance(items, dict):  # Cohere v2: {"float": [[...], ...]}
            items = items.get("float") or []
        first = items[0] if items and isinstance(items[0], dict | list) else {}
        vector = first if isinstance(first, list) else first.get("embedding") or first.get("values")
        if isinstance(data.get("embedding"), list):  # Bedrock Titan: one vector per call
            vector = data["embedding"]
        vector = vector or []
        return model, f"embedding of {len(vector)} dimensions"
    if call == "rerank":
        return model, f"{len(data.get('results') or [])} ranked documents"
    text = _chat_text(data)
    return model, text.strip()[:200] or "(empty reply)"


def _chat_text(data: dict[str, Any]) -> str:
    try:
        if "choices" in data:  # OpenAI
            return str(data["choices"][0]["message"].get("content") or "")
        if "content" in data:  # Anthropic
            return "".join(b.get("text", "") for b in data["content"] if isinstance(b, dict))
        if "candidates" in data:  # Gemini
            parts = data["candidates"][0]["content"]["parts"]
            return "".join(p.get("text", "") for p in parts if isinstance(p, dict))
        if isinstance(data.get("output"), dict):  # Bedrock Converse
            blocks = data["output"]["message"]["content"]
            return "".join(b.get("text", "") for b in blocks if isinstance(b, dict))
        if isinstance(data.get("message"), dict):  # Cohere v2
            items = data["message"].get("content") or []
            return "".join(i.get("text", "") for i in items if isinstance(i, dict))
    except (KeyError, IndexError, TypeError, AttributeError):
        return ""
    return ""


async def probe_channel(
    upstream: UpstreamClient,
    kinds: Mapping[str, ProviderKind],
    channel: Channel,
    *,
    prices: Mapping[str, Price] | None = None,
    model: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> ProbeResult:
    kind = kinds.get(channel.kind)
    model, call = choose_call(channel, prices or {}, model, kind)
    started = time.perf_counter()

    def result(outcome: str, **fields: Any) -> ProbeResult:
        latency = int((time.perf_counter() - started) * 1000)
        return ProbeResult(channel.name, outcome == "ok", outcome, model, call, latency, **fields)

    if call == "none":
        return result(
            "skipped",
            message=f"'{model}' is an image/speech/transcription model: not called "
            "(a real call would be billed by the upstream)",
        )
    if kind is None:
        message = f"unknown channel kind {channel.kind!r}"
        return result("failed", message=message, diagnosis=message)
    if not kind.serves(_CALLS[call]):
        what = {"embedding": "embeddings are", "rerank": "rerank is"}.get(call, "chat is")
        return result("skipped", message=f"{what} not served by {channel.kind} channels")
    try:
        async with asyncio.timeout(timeout):
            target = await authorized(kinds, channel.kind, target_for(channel, model))
    except TimeoutError:
        message = "The channel's credentials could not be fetched in time."
        return result("failed", message=message, diagnosis=message)
    except GatewayError as err:
        return result("failed", message=err.message, diagnosis=err.message)
    try:
        request = build_request(kind, call, target)
    except (GatewayError, ValueError) as exc:
        return result("failed", message=str(exc), diagnosis=str(exc))
    if request is None:
        message = f"no {call} adapter for {channel.kind!r}"
        return result("failed", message=message, diagnosis=message)
    try:
        async with asyncio.timeout(timeout):
            response = await upstream.send(request)
            try:
                body = await read_all(response)
            finally:
                response.release()
    except TimeoutError:
        error = GatewayError(ErrorKind.UPSTREAM_TIMEOUT, "The upstream did not answer in time.")
        return result(
            "failed", message=error.message, diagnosis=diagnose(None, error, timeout, model)
        )
    except GatewayError as err:
        return result("failed", message=err.message, diagnosis=diagnose(None, err, timeout, model))
    status = response.status
    if status >= 400:
        return result(
            "failed",
            status=status,
            message=_upstream_error(channel.kind, status, body),
            diagnosis=diagnose(status, None, timeout, model),
            disable_suggested=status in (401, 403),
        )
    try:
        upstream_model, summary = _summary(call, jsonutil.loads(body))
    except (jsonutil.JSONDecodeError, ValueError):
        return result(
            "failed",
            status=status,
            message="the answer is not JSON",
            diagnosis="the address answers but is not this kind of API: check the base URL",
        )
    return result("ok", status=status, upstream_model=upstream_model, message=summary)
