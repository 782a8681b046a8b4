"""`switchgate channels test` and the probe behind it (also the console's Test button and
`switchgate doctor`): a real tiny call per channel against the fake upstreams, and the
diagnosis for each way a channel can be broken."""

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from switchgate.billing.pricing import Price
from switchgate.providers.openai_compatible import PresetProvider
from switchgate.providers.registry import ProviderKind, kind_names, provider_kinds
from switchgate.relay.probe import ProbeResult, probe_channel
from switchgate.relay.upstream import UpstreamClient
from switchgate.routing.channels import Channel
from switchgate.settings import Timeouts
from switchgate.testing import MockUpstream, start_mock_upstream
from switchgate.testing.mock_upstream.bedrock_wire import ACCESS_KEY_ID, SECRET_ACCESS_KEY
from tests.status_upstream import status_upstream
from tests.support import Process, gateway_env, run_cli
from tests.vertex_support import make_service_account, register

PRICES = {
    "embed-mock": Price("embed-mock", kind="embedding"),
    "tts-mock": Price("tts-mock", kind="tts"),
    "rerank-y": Price("rerank-y", kind="rerank"),
}


@pytest.fixture
async def mock() -> AsyncIterator[MockUpstream]:
    up = await start_mock_upstream()
    yield up
    await up.close()


@pytest.fixture
async def client() -> AsyncIterator[UpstreamClient]:
    c = UpstreamClient(Timeouts())
    await c.start()
    yield c
    await c.close()


def _channel(kind: str, base_url: str, models: tuple[str, ...], key: str = "mock-key") -> Channel:
    return Channel(1, f"{kind}-test", kind, base_url, key, models, {"gpt-a": "gpt-upstream"})


async def _probe(client: UpstreamClient, channel: Channel, timeout: float = 5) -> ProbeResult:
    return await probe_channel(client, provider_kinds(), channel, prices=PRICES, timeout=timeout)


@pytest.mark.parametrize(
    ("kind", "path", "models", "call"),
    [
        ("openai", "/v1", ("gpt-a",), "chat"),
        ("anthropic", "", ("claude-x",), "chat"),
        ("gemini", "", ("gemini-x",), "chat"),
        ("openai", "/v1", ("tts-mock", "embed-mock"), "embedding"),
        ("gemini", "", ("embed-mock",), "embedding"),
        ("cohere", "", ("rerank-y",), "rerank"),
        ("cohere", "", ("command-x",), "chat"),
        ("cohere", "", ("embed-mock",), "embedding"),
        ("jina", "", ("rerank-x",), "rerank"),
    ],
)
async def test_a_working_channel_answers_with_the_upstreams_model_name(
    mock: MockUpstream,
    client: UpstreamClient,
    kind: str,
    path: str,
    models: tuple[str, ...],
    call: str,
) -> None:
    result = await _probe(client, _channel(kind, mock.base_url + path, models))
    assert result.ok and result.outcome == "ok", result
    assert result.call == call and result.status == 200 and result.diagnosis == ""
    # Gemini's embeddings and Cohere's chat and embed answers name no model
    if (kind, call) not in (("gemini", "embedding"), ("cohere", "chat"), ("cohere", "embedding")):
        assert result.upstream_model, result
    if kind == "cohere" and call == "chat":
        assert result.message == "Hello from mock! You said: Say hello in three words.", result
    if models == ("gpt-a",):  # the model map is applied: the upstream saw its own name
        assert result.model == "gpt-a" and "gpt-upstream" in result.upstream_model
    sent = mock.requests[-1]
    assert "mock-key" not in str(sent)  # the recorder redacts keys; the call was real
    assert result.latency_ms >= 0


# Kinds the fake upstream does not speak (a new kind must be added to `_fake_channel` or
# here, so no kind goes untested by accident).
NO_FAKE = {"azure": "the fake upstream has no Azure OpenAI deployments route"}


async def _fake_channel(name: str, kind: ProviderKind, mock: MockUpstream) -> Channel:
    """A channel of kind `name` on the fake upstream, with a model it answers."""
    base, key, models, extra = mock.base_url, "mock-key", ("chat-x",), {}
    if isinstance(kind.adapter, PresetProvider):  # every preset: its mode on the fake
        base = f"{mock.base_url}/presets/{name}/v1"
    elif name == "openai":
        base = mock.base_url + "/v1"
    elif name == "bedrock":
        key, models = f"{ACCESS_KEY_ID}:{SECRET_ACCESS_KEY}", ("amazon.nova-pro-v1:0",)
        extra = {"region": "us-west-2"}
    elif name == "vertex":
        account = make_service_account(mock.base_url, project="probe-test")
        await asyncio.to_thread(register, mock.base_url, account)
        key, models, extra = account.key, ("gemini-2.5-flash",), {"location": "us-east5"}
    elif name == "jina":
        models = ("rerank-x",)
    elif name not in ("anthropic", "gemini", "cohere"):
        raise AssertionError(f"{name}: say how to reach its fake upstream, or add it to NO_FAKE")
    return Channel(1, f"{name}-test", name, base, key, models, extra=extra)


@pytest.mark.parametrize("name", [k for k in kind_names() if k not in NO_FAKE])
async def test_every_kind_of_the_registry_can_be_probed(
    mock: MockUpstream, client: UpstreamClient, name: str
) -> None:
    """What `channels test` does on a channel of each kind, from the registry: a new kind
    is probed here (or must say why not in NO_FAKE) without editing the case list."""
    assert set(NO_FAKE) <= set(kind_names())
    kind = provider_kinds()[name]
    result = await _probe(client, await _fake_channel(name, kind, mock))
    assert result.ok and result.outcome == "ok" and result.status == 200, result
    assert result.call == ("chat" if kind.chat() is not None else "rerank"), result
    assert "mock-key" not in str(mock.requests[-1])  # a real call, the key redacted


async def test_media_only_channels_are_skipped_not_called(
    mock: MockUpstream, client: UpstreamClient
) -> None:
    result = await _probe(client, _channel("openai", mock.base_url + "/v1", ("tts-mock",)))
    assert result.outcome == "skipped" and not result.ok and not mock.requests


async def test_a_wrong_key_is_diagnosed_and_disabling_is_offered(
    mock: MockUpstream, client: UpstreamClient
) -> None:
    channel = _channel("openai", mock.base_url + "/v1", ("gpt-a",), key="sk-wrong")
    result = await _probe(client, channel)
    assert result.outcome == "failed" and result.status == 401 and result.disable_suggested
    assert "rejected the API key" in result.diagnosis
    assert "sk-wrong" not in str(result.as_dict())


@pytest.mark.parametrize(
    ("status", "words", "disable"),
    [
        (403, "may not use 'gpt-a'", True),
        (404, "does not know model 'gpt-a'", False),
        (429, "rate-limiting", False),
        (500, "failed on its side", False),
    ],
)
async def test_each_refusal_gets_its_diagnosis(
    client: UpstreamClient, status: int, words: str, disable: bool
) -> None:
    async with status_upstream() as url:
        result = await _probe(client, _channel("openai", f"{url}/s/{status}/v1", ("gpt-a",)))
    assert result.outcome == "failed" and result.status == status
    assert words in result.diagnosis and result.disable_suggested is disable
    assert result.message  # the upstream's own words are kept


async def test_a_slow_or_dead_upstream_is_a_timeout_or_unreachable(client: UpstreamClient) -> None:
    async with status_upstream() as url:
        slow = await _probe(client, _channel("openai", f"{url}/slow/3000/v1", ("gpt-a",)), 0.3)
    assert slow.outcome == "failed" and slow.status is None
    assert slow.diagnosis.startswith("timeout: no answer within 0.3 s")
    assert 250 <= slow.latency_ms < 2500
    dead = await _probe(client, _channel("openai", "http://127.0.0.1:9/v1", ("gpt-a",)))
    assert dead.outcome == "failed" and dead.diagnosis.startswith("unreachable:")


def _add(env: dict[str, str], name: str, base_url: str, key: str, models: str) -> None:
    run_cli(env, "channels", "add", name, "--kind", "openai", "--base-url", base_url,
            "--key", key, "--models", models)  # fmt: skip


def test_cli_tests_every_channel_and_offers_to_disable_a_bad_key(
    mock_upstream: Process, tmp_path: Path
) -> None:
    env = gateway_env(tmp_path, None)
    _add(env, "good", mock_upstream.base_url + "/v1", "mock-key", "gpt-a")
    _add(env, "badkey", mock_upstream.base_url + "/v1", "sk-not-the-key", "gpt-a")
    ok = run_cli(env, "channels", "test", "good")
    assert ok.returncode == 0 and "good: OK  chat gpt-a -> gpt-a" in ok.stdout
    assert "1 of 1 channels answered" in ok.stdout
    every = run_cli(env, "channels", "test", "--timeout", "5", check=False)
    assert every.returncode == 1, every.stdout + every.stderr
    assert "badkey: FAILED" in every.stdout and "HTTP 401" in every.stdout
    assert "rejected the API key" in every.stdout
    assert "to disable it: switchgate channels disable badkey" in every.stdout
    assert "sk-not-the-key" not in every.stdout + every.stderr
    assert "enabled" in run_cli(env, "channels", "list").stdout.split("badkey")[1].split("\n")[0]
    fixed = run_cli(env, "channels", "test", "badkey", "--disable-failing-keys", check=False)
    assert fixed.returncode == 1 and "channel badkey disabled" in fixed.stdout
    listed = run_cli(env, "channels", "list").stdout
    assert "disabled" in listed.split("badkey")[1].split("\n")[0]
    missing = run_cli(env, "channels", "test", "nope", check=False)
    assert missing.returncode == 2 and "no channel named 'nope'" in missing.stderr


async def test_on_a_terminal_a_rejected_key_is_disabled_when_the_operator_says_yes(
    mock: MockUpstream, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from switchgate.cli.channel_test import CommandFailed, run_channel_test
    from switchgate.cli.ops import Ops
    from switchgate.storage import migrate
    from switchgate.storage.db import Database
    from switchgate.storage.secrets import SecretBox

    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'ask.db'}")
    try:
        await migrate.upgrade(db)
        ops = Ops(db, SecretBox.load(None, tmp_path))
        for name, key in (("fine", "mock-key"), ("stale", "sk-stale")):
            await ops.add_channel(name=name, kind="openai", base_url=mock.base_url + "/v1",
                                  api_key=key, models=["gpt-a"])  # fmt: skip
        asked: list[str] = []

        def ask(question: str) -> bool:
            asked.append(question)
            return True

        args = argparse.Namespace(name=None, model=None, timeout=5.0, disable_failing_keys=False)
        with pytest.raises(CommandFailed):
            await run_channel_test(ops, args, ask)
        assert asked == ["    disable channel stale (its key)? [y/N] "]
        status = {c["name"]: c["status"] for c in await ops.list_channels()}
        assert status == {"fine": "enabled", "stale": "disabled"}
        assert "channel stale disabled" in capsys.readouterr().out
    finally:
        await db.dispose()
