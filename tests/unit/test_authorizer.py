"""A kind's Authorizer (providers/capabilities.py) in the attempt pipeline and the probe:
awaited after target_for and before the request is built; its failure counts against
the channel and the call fails over to the next candidate."""

from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from pathlib import Path

import pytest

from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.capabilities import Authorizer
from switchgate.providers.openai import OpenAIProvider
from switchgate.providers.registry import CHAT, ProviderKind
from switchgate.relay.attempt import Candidate, attempt
from switchgate.relay.outcome import Outcome
from switchgate.relay.probe import probe_channel
from switchgate.relay.upstream import UpstreamResponse
from switchgate.routing.channels import Channel
from switchgate.routing.health import channel_subject
from switchgate.settings import Settings
from switchgate.state import AppState


class TokenAdapter(OpenAIProvider):
    """OpenAI's wire format behind a fetched bearer token (as Vertex is)."""

    def __init__(self, fail: BaseException | None = None) -> None:
        super().__init__()
        self.fail = fail
        self.calls = 0

    async def authorize(self, target: Target) -> Target:
        self.calls += 1
        if self.fail is not None:
            raise self.fail
        return replace(target, api_key=f"token-{self.calls}")


class _Response:
    status = 200
    headers: dict[str, str] = {}

    def release(self) -> None:
        pass


class _Upstream:
    def __init__(self) -> None:
        self.sent: list[UpstreamRequest] = []

    async def send(self, request: UpstreamRequest, limits: object = None) -> _Response:
        self.sent.append(request)
        return _Response()


class _Route:
    def __init__(self) -> None:
        self.built: list[tuple[str, Target]] = []
        self.delivered: list[str] = []

    def serves(self, channel: Channel) -> bool:
        return True

    def build(self, channel: Channel, target: Target) -> UpstreamRequest:
        self.built.append((channel.name, target))
        return UpstreamRequest("POST", f"{target.base_url}/x", {"k": target.api_key}, b"")

    def classify(
        self, channel: Channel, status: int, headers: Mapping[str, str], body: bytes
    ) -> GatewayError:
        return GatewayError(ErrorKind.UPSTREAM_ERROR, "no")

    async def deliver(self, candidate: Candidate, response: UpstreamResponse) -> None:
        self.delivered.append(candidate.channel.name)


def _channel(id: int, name: str, kind: str, priority: int) -> Channel:
    return Channel(id, name, kind, "http://up.invalid/v1", "sa-json", ("m",), priority=priority)


@pytest.fixture
async def state(tmp_path: Path) -> AsyncIterator[AppState]:
    s = AppState.create(Settings(data_dir=tmp_path))
    yield s
    await s.db.dispose()


def _kinds(failing: TokenAdapter, working: TokenAdapter) -> dict[str, ProviderKind]:
    return {
        "failing": ProviderKind("failing", "Failing", failing, endpoints=frozenset({CHAT})),
        "working": ProviderKind("working", "Working", working, endpoints=frozenset({CHAT})),
    }


def test_adapters_are_authorizers() -> None:
    assert isinstance(TokenAdapter(), Authorizer)
    assert not isinstance(OpenAIProvider(), Authorizer)
    kind = ProviderKind("t", "T", TokenAdapter())
    assert kind.authorizer() is kind.adapter and kind.chat() is kind.adapter


@pytest.mark.parametrize(
    "fail",
    [
        GatewayError(ErrorKind.UPSTREAM_ERROR, "token endpoint said 500"),
        RuntimeError("refresh failed"),
        GatewayError(ErrorKind.INVALID_REQUEST, "bad service account"),
    ],
)
async def test_authorize_failure_fails_over(state: AppState, fail: BaseException) -> None:
    failing, working = TokenAdapter(fail), TokenAdapter()
    state.kinds = _kinds(failing, working)
    upstream = _Upstream()
    state.upstream = upstream  # type: ignore[assignment]
    route = _Route()
    channels = [_channel(1, "a", "failing", 10), _channel(2, "b", "working", 0)]
    outcome = Outcome.begin("r", "openai", "chat", None)
    await attempt(state, "m", channels, route, outcome, stream=False)  # type: ignore[arg-type]
    assert failing.calls == 1 and working.calls == 1
    # Nothing was built or sent for the channel whose credentials failed.
    assert [name for name, _ in route.built] == ["b"]
    assert route.built[0][1].api_key == "token-1"
    assert [r.headers["k"] for r in upstream.sent] == ["token-1"]
    assert route.delivered == ["b"]
    assert outcome.channel is not None and outcome.channel.name == "b"
    assert channel_subject(1) in state.health.snapshot()


async def test_authorize_failure_everywhere_is_the_error(state: AppState) -> None:
    failing = TokenAdapter(GatewayError(ErrorKind.UPSTREAM_ERROR, "token endpoint down"))
    state.kinds = _kinds(failing, TokenAdapter())
    route = _Route()
    outcome = Outcome.begin("r", "openai", "chat", None)
    with pytest.raises(GatewayError, match="token endpoint down"):
        await attempt(state, "m", [_channel(1, "a", "failing", 0)], route, outcome, stream=False)  # type: ignore[arg-type]
    assert route.built == []


async def test_probe_authorizes_first(state: AppState) -> None:
    failing, working = TokenAdapter(RuntimeError("no key file")), TokenAdapter()
    kinds = _kinds(failing, working)
    upstream = _Upstream()
    bad = await probe_channel(upstream, kinds, _channel(1, "a", "failing", 0))  # type: ignore[arg-type]
    assert not bad.ok and "credentials" in bad.message and upstream.sent == []
