"""One conformance suite for every provider kind, parametrised from the registry
(providers/registry.py): a kind added there is checked here without editing this file.

1. Capability checks, for every kind: its adapter implements what its `endpoints` claim
   (providers/capabilities.py), reads the usual upstream errors into the right ErrorKind
   without leaking what the body held, and its readers survive an empty stream.
2. Golden cases, for every kind with a folder `tests/golden/<kind>_provider/`. One
   schema, `{"input": ..., "expected": ...}` per file, IR encoded by tests/unit/_golden_ir.py
   (`{"_type": "ClassName", ...}`, default fields left out); a GatewayError is expected as
   its encoding plus `"status"`. By file-name prefix:

   request_*         input {"request": IR ChatRequest, "target": Target fields}
                     -> {"upstream": {"method", "url", "headers", "body"}} or {"error"}
   passthrough_*     input {"body", "target", "headers"} (NativeDialect)
                     -> {"method", "url", "headers", "body"}
   response_*        input {"body": JSON} or {"raw": text}, "request"?: IR
                     -> {"response": IR} or {"error"}, "usage_from_body"?: IR Usage
                     (checked where the adapter has usage_from_body)
   stream_*          input {"sse": [lines] (joined by "\\n", or "\\r\\n" with "crlf": true;
                     a final separator unless "unterminated": true) or "sse": text (as it
                     is), or "body_base64"}, "request"?: IR
                     -> {"events": [IR], "meter_usage"?: IR Usage, "meter_text"?: text}
   classify_*        input {"status", "body": JSON or text, "headers"?: {name: value}}
                     -> the error
   embed_request_*   input {"texts", "dimensions", "target"} (EmbeddingsProvider)
                     -> {"upstream"} or {"error"}
   embed_response_*  input {"body"} or {"raw"} -> {"vectors", "input_tokens"} or {"error"}

   A case may name another kind of the registry than its folder's (`"kind"` in its
   input, e.g. azure cases among openai's). A stream is replayed whole, byte by byte and
   split at random byte boundaries, and must decode to the same events each time. An
   expected string "<synthesised>" stands for an id the adapter makes up (any non-empty
   string). Request goldens are built with the clock frozen at FROZEN (request signing).
"""

import base64
import datetime
import json
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable
from unittest import mock

import pytest

from switchgate import jsonutil
from switchgate.core.events import StreamEvent
from switchgate.core.request import ChatRequest
from switchgate.core.usage import Usage
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.capabilities import (
    ChatProvider,
    EmbeddingsProvider,
    ErrorClassifier,
    NativeDialect,
    classify_response,
)
from switchgate.providers.registry import (
    AUDIO,
    CHAT,
    COMPLETIONS,
    EMBEDDINGS,
    ENDPOINTS,
    IMAGES,
    REALTIME,
    RERANK,
    RESPONSES,
    ProviderKind,
    provider_kinds,
)
from tests.unit._golden_ir import GOLDEN, dump, load

KINDS = provider_kinds()
FROZEN = datetime.datetime(2026, 11, 25, 12, 0, 0, tzinfo=datetime.UTC)
REQUEST = ChatRequest("alias", ())
SYNTHESISED = "<synthesised>"
PREFIXES = (
    "request_",
    "passthrough_",
    "response_",
    "stream_",
    "classify_",
    "embed_request_",
    "embed_response_",
)


# ---------------------------------------------------------------- capabilities


@pytest.mark.parametrize("name", sorted(KINDS))
def test_kind_entry(name: str) -> None:
    kind = KINDS[name]
    assert kind.name == name and kind.label.strip()
    assert kind.endpoints and kind.endpoints <= ENDPOINTS
    assert kind.default_base_url == "" or kind.default_base_url.startswith(("http://", "https://"))
    chat = kind.chat()
    if chat is not None:
        assert chat.kind == name  # the adapter names the kind it serves


@pytest.mark.parametrize("name", sorted(KINDS))
def test_adapter_implements_what_its_endpoints_claim(name: str) -> None:
    kind = KINDS[name]
    claims = {
        CHAT: kind.chat(),
        EMBEDDINGS: kind.embeddings() or kind.openai_shaped(EMBEDDINGS),
        IMAGES: kind.openai_shaped(IMAGES),
        AUDIO: kind.openai_shaped(AUDIO),
        COMPLETIONS: kind.openai_shaped(COMPLETIONS),
        RERANK: kind.rerank(),
        RESPONSES: kind.responses(),
        REALTIME: kind.realtime(),
    }
    assert set(claims) == ENDPOINTS
    missing = sorted(e for e in kind.endpoints if claims[e] is None)
    assert not missing, f"{name} claims {missing} but its adapter lacks the capability"
    served = sorted(e for e, adapter in claims.items() if adapter is not None)
    assert served == sorted(kind.endpoints)  # and the accessors give nothing unclaimed
    assert isinstance(kind.adapter, ErrorClassifier)
    embeddings = kind.embeddings()
    if embeddings is not None:
        assert isinstance(embeddings.embeddings_batch_limit, int)
        assert embeddings.embeddings_batch_limit >= 1


def _classified(kind: ProviderKind, status: int, body: bytes = b"") -> GatewayError:
    assert isinstance(kind.adapter, ErrorClassifier)
    return kind.adapter.classify_error(status, body)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_classify_maps_the_usual_statuses(name: str) -> None:
    kind = KINDS[name]
    for status in (401, 403):  # the upstream refused the channel's key: not the client's 401
        err = _classified(kind, status)
        assert err.kind is ErrorKind.UPSTREAM_ERROR and err.status == 502, (status, err)
    not_found = _classified(kind, 404)
    assert not_found.kind in (
        ErrorKind.INVALID_REQUEST,
        ErrorKind.NOT_FOUND,
        ErrorKind.UPSTREAM_ERROR,
    )
    assert _classified(kind, 429).kind is ErrorKind.RATE_LIMITED
    assert _classified(kind, 429).retryable
    assert _classified(kind, 500).kind is ErrorKind.UPSTREAM_ERROR
    busy = _classified(kind, 503)
    assert busy.kind in (ErrorKind.UPSTREAM_OVERLOADED, ErrorKind.UPSTREAM_ERROR) and busy.retryable
    assert _classified(kind, 400).kind in (ErrorKind.INVALID_REQUEST, ErrorKind.UPSTREAM_ERROR)


_SECRET = "sk-abcdef1234567890abcdef"
_MESSAGE = f"bad key {_SECRET} at https://internal.example/x"
_ERROR_BODIES: list[Any] = [
    {"error": {"message": _MESSAGE, "type": "server_error"}},  # OpenAI
    {"type": "error", "error": {"type": "api_error", "message": _MESSAGE}},  # Anthropic
    {"error": {"code": 500, "message": _MESSAGE, "status": "INTERNAL"}},  # Google
    {"message": _MESSAGE},  # Cohere, Jina, AWS
    [{"error": {"code": 500, "message": _MESSAGE}}],
]


@pytest.mark.parametrize("name", sorted(KINDS))
def test_classify_never_leaks_keys_or_addresses(name: str) -> None:
    for status in (400, 401, 403, 429, 500, 503):
        for body in [*_ERROR_BODIES, "not json " + _MESSAGE]:
            raw = body.encode() if isinstance(body, str) else jsonutil.dumps(body)
            message = _classified(KINDS[name], status, raw).message
            assert _SECRET not in message and "internal.example" not in message, (status, body)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_readers_survive_nothing(name: str) -> None:
    kind = KINDS[name]
    chat = kind.chat()
    if chat is not None:
        events = chat.chat_stream_decoder(REQUEST).finish()  # an empty stream: no crash
        assert isinstance(events, list)
        assert isinstance(chat.chat_stream_decoder(REQUEST).feed(b""), list)
        with pytest.raises((GatewayError, ValueError)):
            chat.parse_chat_response(b"not json", REQUEST)
    native = kind.native()
    if native is not None:
        meter = native.usage_meter()
        meter.feed(b"")
        assert meter.output_text() == ""
        meter.usage()  # None or a Usage: reads, no crash
        native.usage_from_body(b"not json")  # None or a Usage, never an exception
    embeddings = kind.embeddings()
    if embeddings is not None:
        with pytest.raises(GatewayError):
            embeddings.parse_embeddings_response(b"not json")
    rerank = kind.rerank()
    if rerank is not None:
        from switchgate.core.rerank import RerankRequest

        request = RerankRequest("m", "q", ["a", "b"], None, False, None)
        with pytest.raises(GatewayError):
            rerank.parse_rerank_response(b"not json", request)


# ---------------------------------------------------------------- golden cases


def _cases() -> Iterator[Any]:
    for name in sorted(KINDS):
        folder = GOLDEN / f"{name}_provider"
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.json")):
            if path.name.startswith(PREFIXES):
                yield pytest.param(name, path, id=f"{name}/{path.stem}")


CASES = list(_cases())


def _prefix(path: Path) -> str:
    return next(p for p in PREFIXES if path.name.startswith(p))


def _matches(actual: Any, expected: Any) -> bool:
    if expected == SYNTHESISED:
        return isinstance(actual, str) and bool(actual)
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and actual.keys() == expected.keys()
            and all(_matches(actual[k], expected[k]) for k in expected)
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(_matches(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return bool(actual == expected)


def _same(actual: Any, expected: Any, what: str) -> None:
    actual = jsonutil.loads(jsonutil.dumps(actual))  # tuples -> lists, as in the fixture
    if not _matches(actual, expected):
        pretty = json.dumps(actual, indent=2, sort_keys=True, ensure_ascii=False)
        raise AssertionError(f"{what} differs from the golden; got:\n{pretty}")


def _error(err: GatewayError) -> dict[str, Any]:
    return {**dump(err), "status": err.status}


def _upstream(request: UpstreamRequest) -> dict[str, Any]:
    return {
        "method": request.method,
        "url": request.url,
        "headers": request.headers,
        "body": jsonutil.loads(request.body),
    }


def _raw(given: dict[str, Any]) -> bytes:
    if "raw" in given:
        return str(given["raw"]).encode()
    body = given["body"]
    return body.encode() if isinstance(body, str) else jsonutil.dumps(body)


def _stream_bytes(given: dict[str, Any]) -> bytes:
    if "body_base64" in given:
        return base64.b64decode(given["body_base64"])
    sse = given["sse"]
    if isinstance(sse, str):
        return sse.encode()
    sep = "\r\n" if given.get("crlf") else "\n"
    return (sep.join(sse) + ("" if given.get("unterminated") else sep)).encode()


def _split(data: bytes, rng: random.Random) -> list[bytes]:
    if len(data) < 2:
        return [data]
    cuts = sorted(rng.sample(range(1, len(data)), k=min(len(data) - 1, rng.randint(1, 40))))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


@contextmanager
def _frozen_clock() -> Iterator[None]:
    """Adapters that sign requests read the time through botocore (SigV4)."""
    try:
        import botocore.auth  # noqa: F401
    except ImportError:
        yield
        return
    with mock.patch("botocore.auth.get_current_datetime", return_value=FROZEN):
        yield


def _chat(kind: ProviderKind) -> ChatProvider:
    chat = kind.chat()
    assert chat is not None, f"{kind.name} has chat goldens but does not serve chat"
    return chat


def _native(kind: ProviderKind) -> NativeDialect:
    native = kind.native()
    assert native is not None, f"{kind.name} has passthrough goldens but no native dialect"
    return native


def _embeddings(kind: ProviderKind) -> EmbeddingsProvider:
    embeddings = kind.embeddings()
    assert embeddings is not None, f"{kind.name} has embeddings goldens but no EmbeddingsProvider"
    return embeddings


@runtime_checkable
class _ReadsUsage(Protocol):
    """Usage from a whole answer's body: every NativeDialect, and some others."""

    def usage_from_body(self, body: bytes) -> Usage | None: ...


def _request_of(given: dict[str, Any]) -> ChatRequest:
    request = load(given["request"]) if "request" in given else REQUEST
    assert isinstance(request, ChatRequest)
    return request


def _decode(chat: ChatProvider, request: ChatRequest, chunks: list[bytes]) -> list[StreamEvent]:
    decoder = chat.chat_stream_decoder(request)
    events = [e for chunk in chunks for e in decoder.feed(chunk)]
    return events + decoder.finish()


def _run_request(kind: ProviderKind, given: dict[str, Any], expected: dict[str, Any]) -> None:
    target = Target(**given["target"])
    with _frozen_clock():
        try:
            upstream = _chat(kind).build_chat_request(_request_of(given), target)
        except GatewayError as err:
            _same({"error": _error(err)}, expected, "the error")
            return
    _same({"upstream": _upstream(upstream)}, expected, "the upstream request")


def _run_passthrough(kind: ProviderKind, given: dict[str, Any], expected: dict[str, Any]) -> None:
    body = given["body"]
    before = jsonutil.dumps(body)
    upstream = _native(kind).build_passthrough(body, Target(**given["target"]), given["headers"])
    _same(_upstream(upstream), expected, "the passthrough request")
    assert jsonutil.dumps(body) == before  # the client's body is not mutated


def _run_response(kind: ProviderKind, given: dict[str, Any], expected: dict[str, Any]) -> None:
    raw, request = _raw(given), _request_of(given)
    try:
        actual: dict[str, Any] = {"response": dump(_chat(kind).parse_chat_response(raw, request))}
    except GatewayError as err:
        actual = {"error": _error(err)}
    if "usage_from_body" in expected:
        if isinstance(kind.adapter, _ReadsUsage):
            actual["usage_from_body"] = dump(kind.adapter.usage_from_body(raw))
        else:  # read by a module function of the kind's own (its own tests check it)
            actual["usage_from_body"] = expected["usage_from_body"]
    _same(actual, expected, "the parsed response")


def _run_stream(kind: ProviderKind, given: dict[str, Any], expected: dict[str, Any]) -> None:
    data, request, chat = _stream_bytes(given), _request_of(given), _chat(kind)
    want = expected["events"]
    _same(dump(_decode(chat, request, [data])), want, "the events")
    _same(
        dump(_decode(chat, request, [data[i : i + 1] for i in range(len(data))])), want, "bytewise"
    )
    for seed in range(10):
        split = _split(data, random.Random(seed))
        _same(dump(_decode(chat, request, split)), want, f"split (seed {seed})")
    if "meter_usage" in expected or "meter_text" in expected:
        for seed in range(3):
            meter = _native(kind).usage_meter()
            for chunk in _split(data, random.Random(seed)):
                meter.feed(chunk)
            if "meter_usage" in expected:
                _same(dump(meter.usage()), expected["meter_usage"], "the meter's usage")
            if "meter_text" in expected:
                assert meter.output_text() == expected["meter_text"]


def _run_classify(kind: ProviderKind, given: dict[str, Any], expected: dict[str, Any]) -> None:
    body = given["body"]
    raw = body.encode() if isinstance(body, str) else jsonutil.dumps(body)
    assert isinstance(kind.adapter, ErrorClassifier)
    headers = {k.lower(): v for k, v in given.get("headers", {}).items()}
    # what the relay calls (relay/attempt.py): the adapter reads the headers if it wants them
    error = classify_response(kind.adapter, given["status"], headers, raw)
    _same(_error(error), expected, "the error")


def _run_embed_request(kind: ProviderKind, given: dict[str, Any], expected: dict[str, Any]) -> None:
    embeddings, target = _embeddings(kind), Target(**given["target"])
    with _frozen_clock():
        try:
            upstream = embeddings.build_embeddings_request(
                given["texts"], given["dimensions"], target
            )
        except GatewayError as err:
            _same({"error": _error(err)}, expected, "the error")
            return
    _same({"upstream": _upstream(upstream)}, expected, "the upstream request")


def _run_embed_response(
    kind: ProviderKind, given: dict[str, Any], expected: dict[str, Any]
) -> None:
    try:
        result = _embeddings(kind).parse_embeddings_response(_raw(given))
    except GatewayError as err:
        _same({"error": _error(err)}, expected, "the error")
        return
    actual = {"vectors": result.vectors, "input_tokens": result.input_tokens}
    _same(actual, expected, "the embeddings")


RUN = {
    "request_": _run_request,
    "passthrough_": _run_passthrough,
    "response_": _run_response,
    "stream_": _run_stream,
    "classify_": _run_classify,
    "embed_request_": _run_embed_request,
    "embed_response_": _run_embed_response,
}


def test_the_golden_folders_are_found() -> None:
    """The suite sees every kind's folder (a misnamed one would silently test nothing)."""
    folders = {p.name.removesuffix("_provider") for p in GOLDEN.glob("*_provider") if p.is_dir()}
    assert {"anthropic", "openai", "gemini"} <= folders & set(KINDS)
    assert {name for name, _ in (c.values for c in CASES)} == folders & set(KINDS)


@pytest.mark.parametrize(("folder_kind", "path"), CASES)
def test_golden_case(folder_kind: str, path: Path) -> None:
    case = jsonutil.loads(path.read_bytes())
    assert set(case) == {"input", "expected"}, f"{path.name}: not in the fixture schema"
    given, expected = case["input"], case["expected"]
    kind = KINDS[given.get("kind", folder_kind)]
    RUN[_prefix(path)](kind, given, expected)
