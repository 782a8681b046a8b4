"""Golden tests for what coding agents send, through the whole translation chain
(tests/golden/agent_translations/*.json): the client's body in its dialect -> the upstream
request the channel's provider builds (or passes through), and the upstream's answer ->
what the client receives, streaming and not.

Fixture kinds, by file-name prefix (every one has input {"dialect", "headers"?, "body",
"provider"}; "dialect" is anthropic | openai | gemini | responses, "provider" a channel kind):
  request_*   -> expected {"url", "body"} of the upstream request (or {"error"})
  response_*  input + {"upstream": the upstream's JSON answer} -> expected {"client": body}
  stream_*    input + {"sse": [upstream SSE lines]} -> expected {"client": [SSE events]}
Set SWITCHGATE_REGEN_GOLDEN=1 to rewrite the "expected" parts (then read the diff).
"""

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from switchgate import jsonutil
from switchgate.core.request import ChatRequest
from switchgate.dialects.base import ChatDialect
from switchgate.dialects.openai_responses.dialect import OpenAIResponsesDialect
from switchgate.errors import GatewayError
from switchgate.providers.base import Target
from switchgate.providers.capabilities import ChatProvider
from switchgate.providers.registry import chat_providers
from switchgate.state import Dialects
from switchgate.wire.sse import SSEParser
from tests.unit.gemini_golden_support import cases, check, ids, load

AREA = "agent_translations"
PROVIDERS = chat_providers()
TARGET = Target(base_url="https://upstream.example/v1", api_key="k", upstream_model="up-model")
GEMINI_TARGET = Target(base_url="https://upstream.example", api_key="k", upstream_model="up-model")


def dialect(name: str) -> ChatDialect:
    if name == "responses":
        return OpenAIResponsesDialect()
    found: ChatDialect = getattr(Dialects(), name)
    return found


def provider(kind: str) -> tuple[ChatProvider, Target]:
    target = TARGET if kind == "openai" else GEMINI_TARGET
    return PROVIDERS[kind], target


def decode(inp: dict[str, Any]) -> tuple[ChatDialect, ChatRequest]:
    d = dialect(inp["dialect"])
    headers = {"anthropic-version": "2023-06-01", **inp.get("headers", {})}
    return d, d.decode_request(inp["body"], headers)


def sse_events(data: bytes) -> list[Any]:
    parser = SSEParser()
    out: list[Any] = []
    for event in parser.feed(data):
        payload: Any = event.data
        if payload != "[DONE]":
            payload = jsonutil.loads(payload)
        out.append({"event": event.event, "data": payload} if event.event else payload)
    return out


@pytest.mark.parametrize("path", cases(AREA, "request_"), ids=ids(cases(AREA, "request_")))
def test_request(path: Path) -> None:
    case = load(path)
    inp = case["input"]
    try:
        d, request = decode(inp)
        prov, target = provider(inp["provider"])
        if prov.dialect == d.name:
            headers = {"anthropic-version": "2023-06-01", **inp.get("headers", {})}
            upstream = prov.build_passthrough(inp["body"], target, headers)
        else:
            renamed = replace(request, model=target.upstream_model)
            upstream = prov.build_chat_request(renamed, target)
    except GatewayError as err:
        check(path, case, {"error": {"status": err.status, "message": err.message}})
        return
    check(path, case, {"url": upstream.url, "body": jsonutil.loads(upstream.body)})


@pytest.mark.parametrize("path", cases(AREA, "response_"), ids=ids(cases(AREA, "response_")))
def test_response(path: Path) -> None:
    case = load(path)
    inp = case["input"]
    d, request = decode(inp)
    prov, _ = provider(inp["provider"])
    parsed = prov.parse_chat_response(jsonutil.dumps(inp["upstream"]), request)
    body = jsonutil.loads(d.encode_response(parsed, request))
    check(path, case, {"client": _stable(body)})


@pytest.mark.parametrize("path", cases(AREA, "stream_"), ids=ids(cases(AREA, "stream_")))
def test_stream(path: Path) -> None:
    case = load(path)
    inp = case["input"]
    d, request = decode(inp)
    prov, _ = provider(inp["provider"])
    decoder = prov.chat_stream_decoder(request)
    encoder = d.stream_encoder(request)
    out = [encoder.encode(e) for e in decoder.feed("".join(inp["sse"]).encode())]
    out += [encoder.encode(e) for e in decoder.finish()]
    out.append(encoder.close())
    check(path, case, {"client": _stable(sse_events(b"".join(out)))})


_RANDOM_ID = re.compile(r"^(resp|fc|msg|rs)_[0-9a-f]{16,}")


def _stable(value: Any) -> Any:
    """Timestamps and random response ids out, so fixtures don't change from run to run."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in ("created", "created_at")}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    if isinstance(value, str):
        return _RANDOM_ID.sub(r"\1_ID", value)
    return value
